// SPDX-License-Identifier: GPL-2.0-or-later
#include "fabricplace/placement/rank_layout.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>
#include <tuple>

#include "fabricplace/common/hostlist.hpp"
#include "fabricplace/common/strings.hpp"

namespace fabricplace::placement {
namespace {

using fabric::HostId;
using fabric::idx;
using fabric::kNone;

// A block's name, or "(no leaf)" (a host in none).
std::string block_name(const HostMap& c, std::uint32_t k) {
  return k == kNone ? "(no " + std::string(fabric::block_noun(c.blocks.kind)) + ")"
                    : c.blocks.name[k];
}
std::string block_name(const HostMap& c, HostId h) {
  return block_name(c, c.blocks.of_host[idx(h)]);
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

// Orders of blocks tried exhaustively up to this many (pod orders x block orders in pods).
constexpr std::uint64_t kExhaustiveOrders = 100000;

// The ring order, with the blocks (leaves) rearranged when TP groups span hosts (g > 1) so
// that as few groups as possible straddle two blocks: blocks stay contiguous and pods stay
// contiguous (so the ring still has exactly L inter-block edges), but a block whose count
// is not a multiple of g is put next to one that completes its group. Exhaustive over all
// pod-respecting block orders when there are at most kExhaustiveOrders (`exhaustive` set);
// beyond, a greedy pass that keeps the offset into the current group at 0 where it can.
// Ties keep the plain ring order (pod, then block index).
std::vector<HostId> tp_ring_order(const Blocks& b, std::vector<HostId> hosts, std::uint32_t g,
                                  bool& exhaustive) {
  hosts = ring_order(b, std::move(hosts));
  exhaustive = true;
  if (g <= 1) return hosts;
  // Runs of one block, in ring order, and the pods' runs.
  std::vector<std::vector<HostId>> runs;
  std::vector<std::vector<std::uint32_t>> pods;
  std::uint32_t last = kNone - 1, last_pod = kNone - 1;
  for (HostId h : hosts) {
    const auto k = b.of_host[idx(h)];
    const auto pod = k == kNone ? kNone : b.pod[k];
    if (runs.empty() || k != last) {
      if (pods.empty() || pod != last_pod) pods.emplace_back();
      pods.back().push_back(static_cast<std::uint32_t>(runs.size()));
      runs.emplace_back();
    }
    runs.back().push_back(h);
    last = k;
    last_pod = pod;
  }
  auto rem = [&](std::uint32_t r) { return static_cast<std::uint32_t>(runs[r].size() % g); };
  auto splits_of = [&](const std::vector<std::uint32_t>& o) {
    std::vector<std::uint32_t> sz;
    for (auto i : o) sz.push_back(static_cast<std::uint32_t>(runs[i].size()));
    return split_groups(sz, g);
  };
  std::vector<std::uint32_t> best;
  for (const auto& p : pods) best.insert(best.end(), p.begin(), p.end());
  std::uint32_t best_splits = splits_of(best);
  if (best_splits == 0) return hosts;

  // Number of pod-respecting orders, saturating.
  std::uint64_t orders = 1;
  auto times_factorial = [&](std::size_t n) {
    for (std::size_t i = 2; i <= n && orders <= kExhaustiveOrders; ++i) orders *= i;
  };
  times_factorial(pods.size());
  for (const auto& p : pods) times_factorial(p.size());

  if (orders <= kExhaustiveOrders) {
    std::vector<std::uint32_t> pod_order(pods.size());
    std::iota(pod_order.begin(), pod_order.end(), 0u);
    auto per_pod = pods;
    std::vector<std::uint32_t> seq;
    // Every order of the blocks inside each pod, pods in pod_order; first found wins ties.
    auto visit = [&](auto&& self, std::size_t i) -> void {
      if (best_splits == 0) return;
      if (i == pod_order.size()) {
        if (const auto sp = splits_of(seq); sp < best_splits) {
          best_splits = sp;
          best = seq;
        }
        return;
      }
      auto& v = per_pod[pod_order[i]];
      std::sort(v.begin(), v.end());
      do {
        seq.insert(seq.end(), v.begin(), v.end());
        self(self, i + 1);
        seq.resize(seq.size() - v.size());
      } while (std::next_permutation(v.begin(), v.end()));
    };
    do visit(visit, 0);
    while (std::next_permutation(pod_order.begin(), pod_order.end()));
  } else {
    exhaustive = false;
    // Greedy: at offset m into the current group, close it with a block of remainder g - m
    // (choosing the pod that has one when a pod ends), keep whole-group blocks for when the
    // offset is 0, and otherwise take a block whose remainder another block can complete.
    std::vector<std::uint32_t> seq;
    std::vector<bool> pod_done(pods.size(), false);
    std::uint32_t m = 0;
    auto has = [&](const std::vector<std::uint32_t>& v, std::uint32_t r) {
      return std::any_of(v.begin(), v.end(), [&](std::uint32_t x) { return rem(x) == r; });
    };
    for (std::size_t done = 0; done < pods.size(); ++done) {
      std::size_t pick = pods.size();
      for (std::size_t p = 0; p < pods.size(); ++p)
        if (!pod_done[p] &&
            (pick == pods.size() || (m != 0 && has(pods[p], g - m) && !has(pods[pick], g - m))))
          pick = p;
      pod_done[pick] = true;
      auto left = pods[pick];
      while (!left.empty()) {
        const std::uint32_t want = m == 0 ? 0 : g - m;
        auto it = std::find_if(left.begin(), left.end(), [&](auto x) { return rem(x) == want; });
        if (it == left.end())  // a block another can complete, else any
          it = std::find_if(left.begin(), left.end(), [&](auto x) {
            return rem(x) != 0 && std::any_of(left.begin(), left.end(), [&](auto y) {
                     return y != x && rem(y) == (2 * g - m - rem(x)) % g;
                   });
          });
        if (it == left.end())
          it = std::find_if(left.begin(), left.end(), [&](auto x) { return rem(x) != 0; });
        if (it == left.end()) it = left.begin();
        seq.push_back(*it);
        m = (m + rem(*it)) % g;
        left.erase(it);
      }
    }
    if (splits_of(seq) < best_splits) best = seq;
  }
  std::vector<HostId> out;
  for (auto i : best) out.insert(out.end(), runs[i].begin(), runs[i].end());
  return out;
}

// An NCCL_IB_HCA entry: the device, with port, rail and plane when the fabric's rails say.
std::string hca_entry(const RankFileOptions& o, const std::string& device) {
  for (const auto& r : o.rails)
    if (r.device == device) return r.nccl();
  return device;
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
    if (!b.hca.empty() && seen.insert(b.hca).second)
      hcas += (hcas.empty() ? "" : ",") + hca_entry(o, b.hca);
    per_rank += (per_rank.empty() ? "" : " ") +
                (b.hca.empty() ? std::string("-") : "=" + hca_entry(o, b.hca));
  }
  std::string s =
      hcas.empty() ? "# Local rank k <-> GPU k" : "# Local rank k <-> GPU k <-> its nearest HCA";
  s += o.node_source.empty() ? "" : " (hwloc: " + str::sanitize(o.node_source) + ")";
  if (!hcas.empty())
    s += ". Per worker, before\n# init_process_group: os.environ[\"NCCL_IB_HCA\"] = os.environ[\n"
         "#   \"FABRICPLACE_NCCL_IB_HCA_BY_LOCAL_RANK\"].split()[int(os.environ[\"LOCAL_RANK\"])]";
  s += "\n";
  s += "CUDA_DEVICE_ORDER=PCI_BUS_ID\n";
  s += "CUDA_VISIBLE_DEVICES=" + devices + "\n";
  if (!hcas.empty()) s += "NCCL_IB_HCA==" + hcas + "\n";
  if (!hcas.empty()) s += "FABRICPLACE_NCCL_IB_HCA_BY_LOCAL_RANK=\"" + per_rank + "\"\n";
  return s;
}

// The NCCL variables the fabric decides (NVLink domains, rails) as NAME=VALUE lines, for the
// torchrun environment and the JSON; NCCL_IB_HCA only when no hwloc pairing wrote its own.
std::vector<std::pair<std::string, std::string>> nccl_env(const RankFileOptions& o,
                                                          std::uint32_t K) {
  std::vector<std::pair<std::string, std::string>> env;
  if (o.mnnvl) env.emplace_back("NCCL_MNNVL_ENABLE", "1");
  const bool hwloc_hcas =
      has_gpus(o, K) && std::any_of(o.local.begin(), o.local.end(),
                                    [](const LocalRank& b) { return b.gpu && !b.hca.empty(); });
  if (!o.rails.empty() && !hwloc_hcas) {
    std::string v = "=";
    for (const auto& r : o.rails) v += (v.size() > 1 ? "," : "") + r.nccl();
    env.emplace_back("NCCL_IB_HCA", v);
  }
  return env;
}

}  // namespace

std::string HcaRail::nccl() const {
  return device + ":" + std::to_string(port) + ":" + std::to_string(rail) + ":" +
         std::to_string(plane);
}

std::vector<HcaRail> hca_rails(const fabric::Fabric& f) {
  const auto& t = f.topology();
  std::vector<HcaRail> out;
  if (!t.rail_optimised) return out;
  std::vector<std::uint32_t> plane_of;  // component -> plane, in rail order
  for (std::uint32_t r = 0; r < t.rails.size(); ++r) {
    const auto& rail = t.rails[r];
    HcaRail x;
    x.device = rail.device;
    x.rail = r;
    const auto comp = rail.leaves.empty() ? kNone : t.node_component[idx(rail.leaves.front())];
    auto it = std::find(plane_of.begin(), plane_of.end(), comp);
    if (it == plane_of.end()) it = plane_of.insert(plane_of.end(), comp);
    x.plane = static_cast<unsigned>(it - plane_of.begin());
    // The port: the linked port of this device on the first host that has it.
    bool found = false;
    for (const auto& h : f.hosts()) {
      for (fabric::NodeId ca : h.hcas) {
        if (fabric::split_ca_description(f.node(ca).description).second != rail.device) continue;
        for (const auto& p : f.ports_of(ca))
          if (p.link != fabric::kNoLink) {
            x.port = p.rec.number;
            found = true;
            break;
          }
        if (found) break;
      }
      if (found) break;
    }
    out.push_back(std::move(x));
  }
  return out;
}

bool shares_domain(const HostMap& m, const std::vector<HostId>& hosts) {
  if (m.blocks.kind != fabric::BlockKind::kDomain) return false;
  std::set<std::uint32_t> seen;
  for (HostId h : hosts)
    if (const auto k = m.blocks.of_host[idx(h)]; k != kNone && !seen.insert(k).second) return true;
  return false;
}

bool shares_domain(const fabric::Fabric& f, const std::vector<HostId>& hosts) {
  std::set<std::uint32_t> seen;
  for (HostId h : hosts)
    if (const auto d = f.domain_of(h); d != kNone && !seen.insert(d).second) return true;
  return false;
}

void measure_layout(const HostMap& c, RankLayout& l) {
  const auto r = measure_ring(c.blocks, l.hosts, l.shape.hosts_per_group());
  l.leaves.clear();
  for (const auto k : r.blocks) l.leaves.push_back(block_name(c, k));
  l.inter_leaf_edges = r.inter_leaf;
  l.tp_groups_split = r.tp_groups_split;
}

Result<RankLayout> rank_layout(const HostMap& c, std::vector<HostId> hosts, const JobShape& shape) {
  if (hosts.empty()) return fail(ErrorCode::kUsage, "no hosts to lay ranks on");
  auto resolved = JobShape::make(shape.spec());  // a shape filled in by hand: the same rules
  if (!resolved) return std::unexpected(resolved.error());
  if (shape.nodes != hosts.size())
    return fail(ErrorCode::kUsage, "a job shape of " + std::to_string(shape.nodes) + " nodes for " +
                                       std::to_string(hosts.size()) + " hosts");
  std::set<std::uint32_t> seen;
  for (HostId h : hosts)
    if (!seen.insert(idx(h)).second)
      return fail(ErrorCode::kUsage, "host " + c.names[idx(h)] + " is listed twice");

  RankLayout l;
  l.shape = *resolved;
  const std::uint32_t g = l.shape.hosts_per_group();
  bool exhaustive = true;
  l.hosts = tp_ring_order(c.blocks, std::move(hosts), g, exhaustive);
  measure_layout(c, l);
  if (l.tp_groups_split) {
    std::map<std::string, std::uint32_t> per_leaf;
    for (HostId h : l.hosts) ++per_leaf[block_name(c, h)];
    std::string odd;
    for (const auto& [leaf, count] : per_leaf)
      if (count % g) odd += (odd.empty() ? "" : ", ") + leaf + " " + std::to_string(count);
    const std::string one(fabric::block_noun(c.blocks.kind)),
        many(fabric::block_noun(c.blocks.kind, true)), tag(fabric::block_tag(c.blocks.kind));
    l.warnings.push_back(
        std::to_string(l.tp_groups_split) + " " + (l.shape.ep > l.shape.tp_size() ? "EP" : "TP") +
        " group(s) of " + std::to_string(g) + " hosts span " + many + " (" +
        (exhaustive ? "the fewest this allocation allows in a " + tag + "-contiguous ring"
                    : many + " ordered greedily to pair partial groups; not proven the fewest") +
        "): the hosts per " + one + " (" + odd + ") are not multiples of " + std::to_string(g));
  }
  return l;
}

std::string core_list(const std::vector<unsigned>& cores) {
  std::string s;
  for (std::size_t i = 0; i < cores.size();) {
    std::size_t j = i;
    while (j + 1 < cores.size() && cores[j + 1] == cores[j] + 1) ++j;
    s += (s.empty() ? "" : ",") + std::to_string(cores[i]);
    if (j > i) s += "-" + std::to_string(cores[j]);
    i = j + 1;
  }
  return s;
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

std::string write_rank_file(const HostMap& c, const RankLayout& l, RankFormat fmt,
                            const RankFileOptions& o) {
  const std::uint32_t K = l.tasks_per_node();
  std::string s;
  switch (fmt) {
    case RankFormat::kOpenMpi:
      // Open MPI 4.1 rankfile: no comments; slot= logical cores (mpirun exits silently on a
      // core the node lacks, so slots stay within CoreMap::cores).
      for (std::uint32_t r = 0; r < l.ranks(); ++r)
        s += "rank " + std::to_string(r) + "=" + c.names[idx(l.hosts[r / K])] +
             " slot=" + (o.local.size() == K ? o.local[r % K].slot : slot(o.cores, r % K, K)) +
             "\n";
      break;
    case RankFormat::kHostfile:
      for (HostId h : l.hosts) s += c.names[idx(h)] + " slots=" + std::to_string(K) + "\n";
      break;
    case RankFormat::kMpich:
      for (HostId h : l.hosts) s += c.names[idx(h)] + ":" + std::to_string(K) + "\n";
      break;
    case RankFormat::kSlurm:
      // SLURM_HOSTFILE for srun --distribution=arbitrary: one line per task, in rank order.
      for (std::uint32_t r = 0; r < l.ranks(); ++r) s += c.names[idx(l.hosts[r / K])] + "\n";
      break;
    case RankFormat::kTorchrun: {
      s += "# torchrun environment written by fabricplace";
      s += o.origin.empty() ? "\n" : " from " + str::sanitize(o.origin) + "\n";
      s += "# Source it on every node, then:\n";
      s += "#   torchrun --nnodes=$NNODES --nproc-per-node=$NPROC_PER_NODE "
           "--node-rank=$NODE_RANK \\\n#     --master-addr=$MASTER_ADDR "
           "--master-port=$MASTER_PORT train.py\n";
      s += "# (static rendezvous: torchrun honours --node-rank only without --rdzv-backend)\n";
      s += "# Node ranks follow the fabric ring: " + std::to_string(l.leaves.size()) + " " +
           std::string(fabric::block_noun(c.blocks.kind, l.leaves.size() != 1)) + ", " +
           std::to_string(l.inter_leaf_edges) + " inter-" +
           std::string(fabric::block_tag(c.blocks.kind)) + " ring edges.\n";
      s += "NNODES=" + std::to_string(l.hosts.size()) + "\n";
      s += "NPROC_PER_NODE=" + std::to_string(K) + "\n";
      s += "MASTER_ADDR=" + c.names[idx(l.hosts.front())] + "\n";
      s += "MASTER_PORT=" + std::to_string(o.master_port) + "\n";
      if (const auto gpus = local_gpu_env(o, K); !gpus.empty()) s += gpus;
      const auto nccl = nccl_env(o, K);
      if (o.mnnvl)
        s += "# Hosts of this job share an NVLink domain: NCCL must use Multi-Node NVLink there\n"
             "# (1, not NCCL's automatic 2: a domain without IMEX fails loudly, not slowly).\n";
      if (!o.rails.empty())
        s += "# NCCL_IB_HCA entries are <hca>:<port>:<rail>:<plane> (NCCL 2.30+): rails of the "
             "rail-optimised fabric.\n";
      for (const auto& [k, v] : nccl) s += k + "=" + v + "\n";
      s += "case \"${SLURMD_NODENAME:-$(hostname -s)}\" in\n";
      for (std::size_t i = 0; i < l.hosts.size(); ++i)
        s += "  " + c.names[idx(l.hosts[i])] + ") NODE_RANK=" + std::to_string(i) + " ;;\n";
      s += "  *) echo \"fabricplace: ${SLURMD_NODENAME:-$(hostname -s)} is not a host of this "
           "job\" >&2\n";
      s += "     return 1 2>/dev/null || exit 1 ;;\n";
      s += "esac\n";
      s += "export NNODES NPROC_PER_NODE MASTER_ADDR MASTER_PORT NODE_RANK";
      for (const auto& [k, v] : nccl) s += " " + k;
      s += "\n";
      if (has_gpus(o, K))
        s += std::string("export CUDA_DEVICE_ORDER CUDA_VISIBLE_DEVICES") +
             (std::any_of(o.local.begin(), o.local.end(),
                          [](const LocalRank& b) { return b.gpu && !b.hca.empty(); })
                  ? " NCCL_IB_HCA FABRICPLACE_NCCL_IB_HCA_BY_LOCAL_RANK"
                  : "") +
             "\n";
      break;
    }
    case RankFormat::kJson: {
      nlohmann::ordered_json j;
      std::vector<std::string> names;
      for (HostId h : l.hosts) names.push_back(c.names[idx(h)]);
      j["hosts"] = names;
      j["hostlist"] = hostlist::compress(names);
      j["tasks_per_node"] = K;
      j["gpus_per_node"] = l.shape.gpus_per_node;
      j["tp"] = l.shape.tp_size();  // GPUs, as --tp
      j["tp_ranks"] = l.tp_ranks();
      j["leaves"] = l.leaves;
      j["inter_leaf_edges"] = l.inter_leaf_edges;
      j["tp_groups_split"] = l.tp_groups_split;
      if (l.shape.ep) {
        j["ep"] = l.shape.ep;
        j["ep_ranks"] = l.shape.ranks_per_ep_group();
      }
      if (const auto nccl = nccl_env(o, K); !nccl.empty()) {
        nlohmann::ordered_json env;
        for (const auto& [k, v] : nccl) env[k] = v;
        j["nccl_env"] = std::move(env);
      }
      auto ranks = nlohmann::ordered_json::array();
      for (std::uint32_t r = 0; r < l.ranks(); ++r) {
        nlohmann::ordered_json x;
        x["rank"] = r;
        x["host"] = names[r / K];
        x["local_rank"] = r % K;
        x["node_rank"] = r / K;  // the host's position in the inter-node ring
        x["tp_group"] = r / l.tp_ranks();
        if (const auto e = l.shape.ranks_per_ep_group()) x["ep_group"] = r / e;
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
      s = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
      break;
    }
  }
  return s;
}

}  // namespace fabricplace::placement
