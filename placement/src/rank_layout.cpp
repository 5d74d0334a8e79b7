#include "fabricplace/placement/rank_layout.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "fabricplace/common/hostlist.hpp"

namespace fabricplace::placement {
namespace {

using fabric::HostId;
using fabric::idx;
using fabric::kNone;

std::string block_name(const Context& c, HostId h) {
  const auto k = c.blocks.of_host[idx(h)];
  return k == kNone ? std::string("(no leaf)") : c.blocks.name[k];
}

std::string slot(const CoreMap& m, std::uint32_t local, std::uint32_t per_node) {
  const std::uint32_t cores = std::max<std::uint32_t>(1, m.cores);
  if (per_node > cores) return std::to_string(local % cores);
  const std::uint32_t each = cores / per_node, lo = local * each, hi = lo + each - 1;
  return lo == hi ? std::to_string(lo) : std::to_string(lo) + "-" + std::to_string(hi);
}

// TP groups (runs of g hosts in ring order) that span blocks, for blocks of these sizes in
// this order.
std::uint32_t split_groups(const std::vector<std::uint32_t>& sizes, std::uint32_t g) {
  std::uint32_t splits = 0, pos = 0;
  std::uint32_t last_split_group = ~0u;
  for (std::size_t i = 0; i + 1 < sizes.size(); ++i) {
    pos += sizes[i];
    if (pos % g != 0 && pos / g != last_split_group) {
      ++splits;
      last_split_group = pos / g;
    }
  }
  return splits;
}

// The ring order, with the blocks (leaves) rearranged when TP groups span hosts (g > 1) so
// that as few groups as possible straddle two blocks: blocks stay contiguous and pods stay
// contiguous (so the ring still has exactly L inter-block edges), but a block whose count
// is not a multiple of g is put next to one that completes its group. Exhaustive over
// pod-respecting block orders for up to 7 blocks; beyond, blocks holding whole groups go
// first in each pod. Ties keep the plain ring order (pod, then block index).
std::vector<HostId> tp_ring_order(const Blocks& b, std::vector<HostId> hosts, std::uint32_t g) {
  hosts = ring_order(b, std::move(hosts));
  if (g <= 1) return hosts;
  // Runs of one block, in ring order.
  struct Run {
    std::uint32_t pod;
    std::vector<HostId> hosts;
  };
  std::vector<Run> runs;
  std::uint32_t last = kNone - 1;
  for (HostId h : hosts) {
    const auto k = b.of_host[idx(h)];
    if (runs.empty() || k != last) runs.push_back({k == kNone ? kNone : b.pod[k], {}});
    runs.back().hosts.push_back(h);
    last = k;
  }
  std::vector<std::uint32_t> order(runs.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  auto sizes_of = [&](const std::vector<std::uint32_t>& o) {
    std::vector<std::uint32_t> sz;
    for (auto i : o) sz.push_back(static_cast<std::uint32_t>(runs[i].hosts.size()));
    return sz;
  };
  auto pods_contiguous = [&](const std::vector<std::uint32_t>& o) {
    std::set<std::uint32_t> done;
    for (std::size_t i = 0; i < o.size(); ++i)
      if (i == 0 || runs[o[i]].pod != runs[o[i - 1]].pod)
        if (!done.insert(runs[o[i]].pod).second) return false;
    return true;
  };
  std::vector<std::uint32_t> best = order;
  std::uint32_t best_splits = split_groups(sizes_of(order), g);
  if (best_splits == 0) return hosts;
  if (runs.size() <= 7) {
    auto o = order;
    while (std::next_permutation(o.begin(), o.end()))
      if (pods_contiguous(o))
        if (const auto s = split_groups(sizes_of(o), g); s < best_splits) {
          best_splits = s;
          best = o;
        }
  } else {
    auto o = order;
    std::stable_sort(o.begin(), o.end(), [&](std::uint32_t x, std::uint32_t y) {
      const bool wx = runs[x].hosts.size() % g == 0, wy = runs[y].hosts.size() % g == 0;
      return std::tuple(runs[x].pod, !wx) < std::tuple(runs[y].pod, !wy);
    });
    if (split_groups(sizes_of(o), g) < best_splits) best = o;
  }
  std::vector<HostId> out;
  for (auto i : best) out.insert(out.end(), runs[i].hosts.begin(), runs[i].hosts.end());
  return out;
}

bool has_gpus(const RankFileOptions& o, std::uint32_t K) {
  return o.local.size() == K &&
         std::any_of(o.local.begin(), o.local.end(), [](const LocalRank& b) { return b.gpu; });
}

// torchrun starts the node's workers itself: one CUDA_VISIBLE_DEVICES for all of them (each
// picks cuda:LOCAL_RANK), NCCL_IB_HCA the HCAs nearest their GPUs ("=" : exact names, so
// mlx5_1 does not also match mlx5_10), and per local rank the nearest HCA alone, for a
// script that narrows NCCL_IB_HCA before init_process_group.
std::string local_gpu_env(const RankFileOptions& o, std::uint32_t K) {
  if (!has_gpus(o, K)) return {};
  std::string devices, hcas, per_rank;
  std::set<std::string> seen;
  for (const auto& b : o.local) {
    if (b.gpu) devices += (devices.empty() ? "" : ",") + std::to_string(*b.gpu);
    if (!b.hca.empty() && seen.insert(b.hca).second) hcas += (hcas.empty() ? "" : ",") + b.hca;
    per_rank += (per_rank.empty() ? "" : " ") + (b.hca.empty() ? std::string("-") : "=" + b.hca);
  }
  std::string s = "# Local rank k <-> GPU k <-> its nearest HCA";
  s += o.node_source.empty() ? "" : " (hwloc: " + o.node_source + ")";
  s += ". Per worker, before\n# init_process_group: os.environ[\"NCCL_IB_HCA\"] = os.environ[\n"
       "#   \"FABRICPLACE_NCCL_IB_HCA_BY_LOCAL_RANK\"].split()[int(os.environ[\"LOCAL_RANK\"])]\n";
  s += "CUDA_DEVICE_ORDER=PCI_BUS_ID\n";
  s += "CUDA_VISIBLE_DEVICES=" + devices + "\n";
  if (!hcas.empty()) s += "NCCL_IB_HCA==" + hcas + "\n";
  if (!hcas.empty()) s += "FABRICPLACE_NCCL_IB_HCA_BY_LOCAL_RANK=\"" + per_rank + "\"\n";
  return s;
}

}  // namespace

Result<RankLayout> rank_layout(const Context& c, std::vector<HostId> hosts,
                               std::uint32_t tasks_per_node, std::uint32_t tp) {
  const auto& f = *c.fabric;
  if (hosts.empty()) return fail(ErrorCode::kUsage, "no hosts to lay ranks on");
  if (tasks_per_node == 0) return fail(ErrorCode::kUsage, "--tasks-per-node must be at least 1");
  if (tp == 0) return fail(ErrorCode::kUsage, "--tp must be at least 1");
  std::set<std::uint32_t> seen;
  for (HostId h : hosts)
    if (!seen.insert(idx(h)).second)
      return fail(ErrorCode::kUsage, "host " + f.host(h).name + " is listed twice");
  const std::uint32_t K = tasks_per_node, n = static_cast<std::uint32_t>(hosts.size());
  const std::string tps = "--tp " + std::to_string(tp);
  if (tp <= K && K % tp != 0)
    return fail(ErrorCode::kUsage, tps + " with " + std::to_string(K) +
                                       " tasks per node: a TP group smaller than a node must "
                                       "divide it");
  if (tp > K && tp % K != 0)
    return fail(ErrorCode::kUsage, tps + " with " + std::to_string(K) +
                                       " tasks per node: a TP group larger than a node must "
                                       "span whole nodes");
  if ((std::uint64_t{n} * K) % tp != 0)
    return fail(ErrorCode::kUsage, tps + " does not tile " + std::to_string(n) + " hosts x " +
                                       std::to_string(K) + " tasks");

  RankLayout l;
  l.tasks_per_node = K;
  l.tp = tp;
  const std::uint32_t g = tp > K ? tp / K : 1;  // hosts per TP group
  l.hosts = tp_ring_order(c.blocks, std::move(hosts), g);
  for (std::uint32_t i = 0; i < n; ++i) {
    const auto name = block_name(c, l.hosts[i]);
    if (l.leaves.empty() || l.leaves.back() != name) l.leaves.push_back(name);
    if (n > 1 && c.blocks.of_host[idx(l.hosts[i])] != c.blocks.of_host[idx(l.hosts[(i + 1) % n])])
      ++l.inter_leaf_edges;
  }
  // TP groups of g hosts (one host when a group fits in a node).
  for (std::uint32_t i = 0; i < n; i += g)
    for (std::uint32_t j = 1; j < g; ++j)
      if (c.blocks.of_host[idx(l.hosts[i + j])] != c.blocks.of_host[idx(l.hosts[i])]) {
        ++l.tp_groups_split;
        break;
      }
  if (l.tp_groups_split) {
    std::map<std::string, std::uint32_t> per_leaf;
    for (HostId h : l.hosts) ++per_leaf[block_name(c, h)];
    std::string odd;
    for (const auto& [leaf, count] : per_leaf)
      if (count % g) odd += (odd.empty() ? "" : ", ") + leaf + " " + std::to_string(count);
    l.warnings.push_back(std::to_string(l.tp_groups_split) + " TP group(s) of " +
                         std::to_string(g) +
                         " hosts span leaves (the fewest this allocation "
                         "allows in a leaf-contiguous ring): the hosts per leaf (" +
                         odd + ") are not multiples of " + std::to_string(g));
  }
  return l;
}

std::optional<RankFormat> parse_rank_format(std::string_view name) {
  static const std::map<std::string_view, RankFormat, std::less<>> kNames{
      {"openmpi", RankFormat::kOpenMpi},   {"hostfile", RankFormat::kHostfile},
      {"mpich", RankFormat::kMpich},       {"slurm", RankFormat::kSlurm},
      {"torchrun", RankFormat::kTorchrun}, {"json", RankFormat::kJson}};
  const auto it = kNames.find(name);
  if (it == kNames.end()) return std::nullopt;
  return it->second;
}

std::string write_rank_file(const Context& c, const RankLayout& l, RankFormat fmt,
                            const RankFileOptions& o) {
  const auto& f = *c.fabric;
  const std::uint32_t K = l.tasks_per_node;
  std::string s;
  switch (fmt) {
    case RankFormat::kOpenMpi:
      // Open MPI 4.1 rankfile: no comments; slot= logical cores (mpirun exits silently on a
      // core the node lacks, so slots stay within CoreMap::cores).
      for (std::uint32_t r = 0; r < l.ranks(); ++r)
        s += "rank " + std::to_string(r) + "=" + f.host(l.hosts[r / K]).name +
             " slot=" + (o.local.size() == K ? o.local[r % K].slot : slot(o.cores, r % K, K)) +
             "\n";
      break;
    case RankFormat::kHostfile:
      for (HostId h : l.hosts) s += f.host(h).name + " slots=" + std::to_string(K) + "\n";
      break;
    case RankFormat::kMpich:
      for (HostId h : l.hosts) s += f.host(h).name + ":" + std::to_string(K) + "\n";
      break;
    case RankFormat::kSlurm:
      // SLURM_HOSTFILE for srun --distribution=arbitrary: one line per task, in rank order.
      for (std::uint32_t r = 0; r < l.ranks(); ++r) s += f.host(l.hosts[r / K]).name + "\n";
      break;
    case RankFormat::kTorchrun: {
      s += "# torchrun environment written by fabricplace";
      s += o.origin.empty() ? "\n" : " from " + o.origin + "\n";
      s += "# Source it on every node, then:\n";
      s += "#   torchrun --nnodes=$NNODES --nproc-per-node=$NPROC_PER_NODE "
           "--node-rank=$NODE_RANK \\\n#     --master-addr=$MASTER_ADDR "
           "--master-port=$MASTER_PORT train.py\n";
      s += "# (static rendezvous: torchrun honours --node-rank only without --rdzv-backend)\n";
      s += "# Node ranks follow the fabric ring: " + std::to_string(l.leaves.size()) +
           (l.leaves.size() == 1 ? " leaf" : " leaves") + ", " +
           std::to_string(l.inter_leaf_edges) + " inter-leaf ring edges.\n";
      s += "NNODES=" + std::to_string(l.hosts.size()) + "\n";
      s += "NPROC_PER_NODE=" + std::to_string(K) + "\n";
      s += "MASTER_ADDR=" + f.host(l.hosts.front()).name + "\n";
      s += "MASTER_PORT=" + std::to_string(o.master_port) + "\n";
      if (const auto gpus = local_gpu_env(o, K); !gpus.empty()) s += gpus;
      s += "case \"${SLURMD_NODENAME:-$(hostname -s)}\" in\n";
      for (std::size_t i = 0; i < l.hosts.size(); ++i)
        s += "  " + f.host(l.hosts[i]).name + ") NODE_RANK=" + std::to_string(i) + " ;;\n";
      s += "  *) echo \"fabricplace: $(hostname -s) is not a host of this job\" >&2\n";
      s += "     return 1 2>/dev/null || exit 1 ;;\n";
      s += "esac\n";
      s += "export NNODES NPROC_PER_NODE MASTER_ADDR MASTER_PORT NODE_RANK\n";
      if (has_gpus(o, K))
        s += "export CUDA_DEVICE_ORDER CUDA_VISIBLE_DEVICES NCCL_IB_HCA "
             "FABRICPLACE_NCCL_IB_HCA_BY_LOCAL_RANK\n";
      break;
    }
    case RankFormat::kJson: {
      nlohmann::ordered_json j;
      std::vector<std::string> names;
      for (HostId h : l.hosts) names.push_back(f.host(h).name);
      j["hosts"] = names;
      j["hostlist"] = hostlist::compress(names);
      j["tasks_per_node"] = K;
      j["tp"] = l.tp;
      j["leaves"] = l.leaves;
      j["inter_leaf_edges"] = l.inter_leaf_edges;
      j["tp_groups_split"] = l.tp_groups_split;
      auto ranks = nlohmann::ordered_json::array();
      for (std::uint32_t r = 0; r < l.ranks(); ++r) {
        nlohmann::ordered_json x;
        x["rank"] = r;
        x["host"] = names[r / K];
        x["local_rank"] = r % K;
        x["node_rank"] = r / K;  // the host's position in the inter-node ring
        x["tp_group"] = r / l.tp;
        x["leaf"] = block_name(c, l.hosts[r / K]);
        if (o.local.size() == K) {
          const auto& b = o.local[r % K];
          x["slot"] = b.slot;
          if (b.gpu) x["cuda_visible_devices"] = std::to_string(*b.gpu);
          if (!b.hca.empty()) x["nccl_ib_hca"] = "=" + b.hca;
        }
        ranks.push_back(std::move(x));
      }
      j["ranks"] = std::move(ranks);
      s = j.dump(2) + "\n";
      break;
    }
  }
  return s;
}

}  // namespace fabricplace::placement
