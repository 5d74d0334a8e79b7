// fabricplace rankfile: rank files for launchers, with hosts in the fabric's ring order.
//
// The hosts come from --hosts or from the Slurm job this runs in (--from-slurm-job); their
// order is placement::ring_order (leaves contiguous, pods contiguous), each host's ranks are
// contiguous, so NCCL's inter-node ring (rank order) crosses the spine as few times as the
// allocation allows. Exit status: 0 written, 1 bad input, 2 bad command line.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>
#include <utility>

#include "commands.hpp"
#include "fabricplace/common/strings.hpp"
#include "fabricplace/placement/rank_layout.hpp"
#include "fabricplace/placement/request.hpp"
#ifdef FABRICPLACE_HAVE_HWLOC
#include "fabricplace/node/node_topology.hpp"
#endif

namespace fabricplace::cli {
namespace {

struct RankfileOpts {
  InputOpts in;
  std::string hosts;
  bool from_slurm_job = false;
  std::uint32_t tasks_per_node = 1, tp = 0, cores_per_node = 0, master_port = 29500;
  CLI::Option *tasks_opt = nullptr, *tp_opt = nullptr, *cores_opt = nullptr, *hosts_opt = nullptr;
  std::string format, out = "-", hwloc_xml;
  CLI::Option* hwloc_opt = nullptr;
};

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

// The allocation's node list: the job's (the batch script and salloc's shell see it), else
// the step's (inside an srun step without the job's variables).
Result<std::pair<std::string, std::string>> slurm_job_nodes() {
  for (const char* name : {"SLURM_JOB_NODELIST", "SLURM_NODELIST", "SLURM_STEP_NODELIST"})
    if (const char* v = env(name)) return std::pair<std::string, std::string>{name, v};
  return fail(ErrorCode::kUsage,
              "--from-slurm-job: SLURM_JOB_NODELIST is not set (run inside a Slurm job: sbatch, "
              "salloc or srun), or give --hosts");
}

// "8(x4),4" -> {8, 4}; nothing when it does not parse.
std::optional<std::set<std::uint64_t>> task_counts(std::string_view v) {
  std::set<std::uint64_t> counts;
  for (const auto& part : str::split(v, ',')) {
    const auto p = part.find('(');
    auto n = str::parse_uint(part.substr(0, p), 1u << 16);
    if (!n || *n == 0) return std::nullopt;
    if (p != std::string_view::npos) {
      const auto rep = part.substr(p);  // "(x4)"
      if (rep.size() < 4 || rep.substr(0, 2) != "(x" || rep.back() != ')' ||
          !str::parse_uint(rep.substr(2, rep.size() - 3), 1u << 24))
        return std::nullopt;
    }
    counts.insert(*n);
  }
  return counts;
}

// Ranks per host when --from-slurm-job is not told (--tasks-per-node), and where that came
// from. Slurm's variables describe tasks only when tasks were asked for: SLURM_NTASKS_PER_NODE
// (--ntasks-per-node), else SLURM_TASKS_PER_NODE when SLURM_NTASKS is set (-n); without
// either (`salloc -N4`) SLURM_TASKS_PER_NODE holds the CPU count and srun starts one task
// per node, so K = 1. Inside an srun step on fewer nodes than the job the variables are the
// step's, not the job's: an error. Uneven counts ("3,2" from -n 5 -N 2) are an error too:
// every host of a rank file runs K ranks.
Result<std::pair<std::uint32_t, std::string>> slurm_tasks_per_node() {
  using R = std::pair<std::uint32_t, std::string>;
  // An srun step rewrites SLURM_TASKS_PER_NODE (= SLURM_STEP_TASKS_PER_NODE); salloc's shell
  // as an interactive step (LaunchParameters=use_interactive_step) keeps the job's.
  const char* step = env("SLURM_STEP_NODELIST");
  const char* job = env("SLURM_JOB_NODELIST");
  const char* step_tasks = env("SLURM_STEP_TASKS_PER_NODE");
  const char* tasks = env("SLURM_TASKS_PER_NODE");
  const bool step_counts = !step_tasks || !tasks || std::string_view(step_tasks) == tasks;
  const char* step_id = env("SLURM_STEP_ID");
  const bool interactive_step = step_id && std::string_view(step_id) == "4294967290";
  if (step && job && std::string_view(step) != job && step_counts && !interactive_step)
    return fail(ErrorCode::kUsage,
                std::string("--from-slurm-job inside an srun step on ") + step +
                    ", fewer nodes than the job's " + job +
                    ": Slurm's task counts here are the step's; pass --tasks-per-node");
  if (const char* v = env("SLURM_NTASKS_PER_NODE")) {
    auto n = str::parse_uint(v, 1u << 16);
    if (!n || *n == 0)
      return fail(ErrorCode::kUsage, std::string("SLURM_NTASKS_PER_NODE=") + v +
                                         ": expected a positive count; pass --tasks-per-node");
    return R{static_cast<std::uint32_t>(*n), "SLURM_NTASKS_PER_NODE"};
  }
  const char* v = env("SLURM_TASKS_PER_NODE");
  if (!v || !env("SLURM_NTASKS"))
    return R{1, "no task count asked of Slurm (-n, --ntasks-per-node): one per node"};
  const auto counts = task_counts(v);
  if (!counts)
    return fail(ErrorCode::kUsage, std::string("SLURM_TASKS_PER_NODE=") + v +
                                       ": expected counts like 8(x4) or 8,8; pass "
                                       "--tasks-per-node");
  if (counts->size() != 1)
    return fail(ErrorCode::kUsage, std::string("SLURM_TASKS_PER_NODE=") + v +
                                       ": the job's tasks per node are uneven, and a rank file "
                                       "gives every host the same number of ranks; pass "
                                       "--tasks-per-node (or ask Slurm for --ntasks-per-node)");
  return R{static_cast<std::uint32_t>(*counts->begin()), "SLURM_TASKS_PER_NODE"};
}

// Physical cores of this machine: distinct (package, core) pairs in sysfs, else the
// number of online CPUs.
std::uint32_t local_cores() {
  namespace fs = std::filesystem;
  std::set<std::pair<std::string, std::string>> cores;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/sys/devices/system/cpu", ec)) {
    const auto name = e.path().filename().string();
    if (name.size() < 4 || name.compare(0, 3, "cpu") != 0 ||
        name.find_first_not_of("0123456789", 3) != std::string::npos)
      continue;
    std::ifstream pkg(e.path() / "topology/physical_package_id"),
        core(e.path() / "topology/core_id");
    std::string p, c;
    if (pkg >> p && core >> c) cores.emplace(p, c);
  }
  if (!cores.empty()) return static_cast<std::uint32_t>(cores.size());
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<std::uint32_t>(n) : 1;
}

// "0-3,8-11" from sorted core indices (Open MPI rankfile slot list).
std::string slot_list(const std::vector<unsigned>& cores) {
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

// Per local rank GPU, HCA and cores from hwloc: --hwloc-xml, else this machine (nodes are
// assumed alike; in a batch script this runs on the job's first node). Without hwloc in
// the build, or with --cores-per-node: an even split of the cores, no pairing.
Result<void> node_bindings(const RankfileOpts& o, std::uint32_t K, placement::RankFileOptions& ro) {
  if (o.cores_opt->count()) {
    ro.cores.cores = o.cores_per_node;
    return {};
  }
#ifdef FABRICPLACE_HAVE_HWLOC
  auto topo = o.hwloc_opt->count() ? node::load_hwloc_xml(o.hwloc_xml) : node::load_hwloc_live();
  if (!topo) {
    if (o.hwloc_opt->count()) return std::unexpected(topo.error());
    std::cerr << "fabricplace: warning: " << topo.error().to_string()
              << "; slots split this machine's cores evenly\n";
    ro.cores.cores = local_cores();
    return {};
  }
  // Without OpenFabrics OS devices in the topology, HCAs are named by PCI bus id, which
  // NCCL_IB_HCA does not accept: an exact-match list of them would select no HCA at all.
  bool pci_named = false;
  for (const auto& b : node::bind_local_ranks(*topo, K)) {
    const bool verbs = b.hca.find(':') == std::string::npos;
    pci_named = pci_named || !verbs;
    ro.local.push_back({slot_list(b.cores), b.gpu, verbs ? b.hca : std::string()});
  }
  if (pci_named)
    std::cerr << "fabricplace: warning: " << topo->source
              << " names its HCAs by PCI bus id only (no OpenFabrics devices: an XML "
                 "exported without I/O details?); NCCL_IB_HCA is left out\n";
  ro.node_source = topo->source;
  if (!topo->gpus.empty() && K > topo->gpus.size())
    std::cerr << "fabricplace: warning: " << K << " tasks per node but " << topo->gpus.size()
              << " GPUs in " << topo->source << ": local ranks " << topo->gpus.size() << ".."
              << K - 1 << " get no GPU\n";
  return {};
#else
  if (o.hwloc_opt->count())
    return fail(ErrorCode::kUnsupported,
                "--hwloc-xml: this fabricplace was built without hwloc (FABRICPLACE_WITH_HWLOC)");
  ro.cores.cores = local_cores();
  return {};
#endif
}

int run_rankfile(const RankfileOpts& o) {
  const auto fmt = placement::parse_rank_format(o.format);
  if (!fmt)
    return report(
        Error{ErrorCode::kUsage,
              "--format " + o.format + ": expected one of " + std::string(placement::kRankFormats),
              {},
              0});
  if (o.hosts_opt->count() == o.from_slurm_job)
    return report(Error{ErrorCode::kUsage, "give exactly one of --hosts, --from-slurm-job", {}, 0});
  if (o.cores_opt->count() && o.cores_per_node == 0)
    return report(Error{ErrorCode::kUsage, "--cores-per-node must be at least 1", {}, 0});
  if (o.cores_opt->count() && o.hwloc_opt->count())
    return report(
        Error{ErrorCode::kUsage, "give at most one of --cores-per-node, --hwloc-xml", {}, 0});

  std::string hostlist = o.hosts, what = "--hosts";
  std::uint32_t K = o.tasks_per_node;
  if (o.from_slurm_job) {
    auto nodes = slurm_job_nodes();
    if (!nodes) return report(nodes.error());
    what = nodes->first;
    hostlist = nodes->second;
    if (!o.tasks_opt->count()) {
      auto k = slurm_tasks_per_node();
      if (!k) return report(k.error());
      K = k->first;
      std::cerr << "fabricplace: " << hostlist << ", " << K << " task(s) per node (" << k->second
                << ")\n";
    }
    if (*fmt == placement::RankFormat::kHostfile)
      std::cerr << "fabricplace: note: inside a Slurm allocation Open MPI places nodes in the "
                   "allocation's order, not the hostfile's: use --format openmpi, or --format "
                   "slurm with mpirun --map-by seq\n";
  }
  const std::uint32_t tp = o.tp_opt->count() ? o.tp : K;

  auto f = o.in.load();
  if (!f) return report(f.error());
  print_warnings(*f);
  auto hosts = placement::resolve_hosts(*f, hostlist, what);
  if (!hosts) return report(hosts.error());
  const auto ctx = placement::prepare(*f);
  const auto map = placement::host_map(ctx);
  const auto nhosts = hosts->size();
  auto layout = placement::rank_layout(map, std::move(*hosts), K, tp);
  if (!layout) return report(layout.error());
  if (o.from_slurm_job)
    if (const char* nt = env("SLURM_NTASKS"))
      if (auto n = str::parse_uint(nt, 1u << 30); n && *n != std::uint64_t{K} * nhosts)
        std::cerr << "fabricplace: warning: SLURM_NTASKS=" << nt << " but the rank file has "
                  << nhosts << " hosts x " << K << " = " << std::uint64_t{K} * nhosts << " ranks\n";
  for (const auto& w : layout->warnings) std::cerr << "fabricplace: warning: " << w << "\n";

  placement::RankFileOptions ro;
  if (auto b = node_bindings(o, K, ro); !b) return report(b.error());
  ro.master_port = o.master_port;
  ro.origin = f->origin();
  return write_output(o.out, placement::write_rank_file(map, *layout, *fmt, ro));
}

}  // namespace

void add_rankfile_command(CLI::App& app, RunFn& run) {
  auto o = std::make_shared<RankfileOpts>();
  auto* cmd = app.add_subcommand(
      "rankfile",
      "write a rank file (Open MPI rankfile, ordered hostfile, SLURM_HOSTFILE, torchrun env, "
      "JSON) whose host order is the fabric's ring order for the given hosts");
  o->in.add(cmd, "the fabric: dump(s), JSON, topology.conf, tiers CSV or spec", "--fabric");
  o->hosts_opt = cmd->add_option("--hosts", o->hosts, "the job's hosts (hostlist), in any order");
  cmd->add_flag("--from-slurm-job", o->from_slurm_job,
                "the hosts of the Slurm job this runs in (SLURM_JOB_NODELIST, else "
                "SLURM_NODELIST, else SLURM_STEP_NODELIST); tasks per node, unless given: "
                "SLURM_NTASKS_PER_NODE, else SLURM_TASKS_PER_NODE when SLURM_NTASKS is set, "
                "else 1");
  o->tasks_opt = cmd->add_option("--tasks-per-node", o->tasks_per_node,
                                 "ranks per host (default 1, or the Slurm job's)");
  o->tp_opt = cmd->add_option("--tp", o->tp,
                              "ranks per tensor-parallel group (default: tasks per node); must "
                              "divide tasks per node or be a multiple of it");
  cmd->add_option("--format", o->format, placement::kRankFormats)->required();
  cmd->add_option("-o,--output", o->out, "output file ('-' = stdout), written atomically")
      ->capture_default_str();
  o->cores_opt = cmd->add_option("--cores-per-node", o->cores_per_node,
                                 "physical cores per host for openmpi slot=, split evenly "
                                 "(default: from hwloc; nodes are assumed alike)");
  o->hwloc_opt = cmd->add_option(
      "--hwloc-xml", o->hwloc_xml,
      "the nodes' hwloc topology (lstopo FILE.xml): local rank k gets GPU k, its nearest HCA "
      "and the cores near it (default: this machine's, when built with hwloc)");
  cmd->add_option("--master-port", o->master_port, "torchrun MASTER_PORT")->capture_default_str();
  cmd->callback([&run, o] { run = [o] { return run_rankfile(*o); }; });
}

}  // namespace fabricplace::cli
