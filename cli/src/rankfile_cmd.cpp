// SPDX-License-Identifier: GPL-2.0-or-later
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
#include "fabricplace/common/file_io.hpp"
#include "fabricplace/common/strings.hpp"
#include "fabricplace/placement/rank_layout.hpp"
#include "fabricplace/placement/request.hpp"
#include "fabricplace/placement/route_order.hpp"
#include "fabricplace/placement/running.hpp"
#include "fabricplace/placement/slurm_env.hpp"
#ifdef FABRICPLACE_HAVE_HWLOC
#include "fabricplace/node/node_topology.hpp"
#endif

namespace fabricplace::cli {
namespace {

using fabric::HostId;

struct RankfileOpts {
  InputOpts in;
  std::string hosts;
  bool from_slurm_job = false;
  std::uint32_t tasks_per_node = 1, gpus_per_node = 8, tp = 0, ep = 0, cores_per_node = 0,
                master_port = 29500;
  CLI::Option *tasks_opt = nullptr, *tp_opt = nullptr, *ep_opt = nullptr, *gpus_opt = nullptr,
              *cores_opt = nullptr, *hosts_opt = nullptr;
  std::string format, out = "-", hwloc_xml;
  CLI::Option* hwloc_opt = nullptr;
  bool route_aware = false;
  RouteOpts routes;
  CLI::Option* routes_opt = nullptr;
  std::string running;
};

// --route-aware: the ring re-ordered on the fabric's routes (docs/simulator.md), avoiding
// the links the running jobs in --running (placement::parse_running) already load. Prints
// what it changed on stderr.
Result<void> route_aware(const RankfileOpts& o, const fabric::Fabric& f,
                         const placement::HostMap& map, placement::RankLayout& layout) {
  const auto spec = o.routes.one();
  if (!spec) return std::unexpected(spec.error());
  auto routes = load_routes(f, *spec);
  if (!routes) return std::unexpected(routes.error());
  std::vector<routes::Load> flows(2 * f.num_links(), 0);
  std::size_t rings = 0;
  if (!o.running.empty()) {
    auto text = read_file(o.running);
    if (!text) return std::unexpected(text.error());
    auto running = placement::parse_running(f, *text, o.running);
    if (!running) return std::unexpected(running.error());
    for (const auto& w : running->warnings) std::cerr << "fabricplace: warning: " << w << "\n";
    std::vector<bool> in_job(f.num_hosts(), false);
    for (HostId h : layout.hosts) in_job[fabric::idx(h)] = true;
    for (const auto& job : running->jobs) {
      for (HostId h : job.hosts)
        if (in_job[fabric::idx(h)])
          return fail(ErrorCode::kReference,
                      "a running ring has host " + f.host(h).name + " of this job", o.running,
                      job.line);
      if (!routes::add_ring_load(**routes, job.hosts, placement::running_salt(job), flows)) {
        const auto e = routes::unrouted_edge(**routes, job.hosts);
        std::cerr << "fabricplace: warning: " << o.running << ":" << job.line << ": running job "
                  << job.id << ": "
                  << (e ? routes::no_route_text(**routes, e->first, e->second)
                        : std::string("some edge of its ring has no route"))
                  << "; its load is left out\n";
      }
      ++rings;
    }
  }
  auto plain = flows, better = flows;
  routes::add_ring_load(**routes, layout.hosts, 0, plain);
  layout.hosts = placement::route_aware_ring(map.blocks, **routes, std::move(layout.hosts), flows,
                                             layout.shape.hosts_per_group(), 0);
  placement::measure_layout(map, layout);  // the leaves' order may have been reversed
  routes::add_ring_load(**routes, layout.hosts, 0, better);
  // A ring with an edge that has no route adds no load to these figures: said, as place
  // says it (docs/routes.md).
  if (const auto e = routes::unrouted_edge(**routes, layout.hosts))
    std::cerr << "fabricplace: warning: " << routes::no_route_text(**routes, e->first, e->second)
              << "; the ring's load is left out of the figures below\n";
  std::cerr << "fabricplace: route-aware ring (routes: " << (*routes)->description() << "; "
            << rings << " running ring" << (rings == 1 ? "" : "s")
            << "): most load on a switch link "
            << routes::load_str(routes::edges(routes::max_switch_link_load(f, better)))
            << " ring edges (plain order "
            << routes::load_str(routes::edges(routes::max_switch_link_load(f, plain))) << ")\n";
  return {};
}

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}
const placement::EnvFn getenv_fn = [](const char* name) -> std::optional<std::string> {
  if (const char* v = env(name)) return std::string(v);
  return std::nullopt;
};

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

// Per local rank GPU, HCA and cores from hwloc: --hwloc-xml, else this machine (nodes are
// assumed alike; in a batch script this runs on the job's first node). Without hwloc in
// the build, or with --cores-per-node: an even split of the cores, no pairing.
Result<void> node_bindings(const RankfileOpts& o, [[maybe_unused]] std::uint32_t K,
                           placement::RankFileOptions& ro) {
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
    ro.local.push_back({placement::core_list(b.cores), b.gpu, verbs ? b.hca : std::string()});
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

  if (o.route_aware) {
    // --routes is checked before any input is read (a usage error, exit 2).
    if (auto spec = o.routes.one(); !spec) return report(spec.error());
  }
  std::string hostlist = o.hosts, what = "--hosts";
  std::uint32_t K = o.tasks_per_node;
  if (o.from_slurm_job) {
    auto nodes = placement::slurm_job_nodes(getenv_fn);
    if (!nodes) return report(nodes.error());
    what = nodes->first;
    hostlist = nodes->second;
    if (!o.tasks_opt->count()) {
      auto k = placement::slurm_tasks_per_node(getenv_fn);
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
  auto f = o.in.load();
  if (!f) return report(f.error());
  print_warnings(*f);
  auto hosts = placement::resolve_hosts(*f, hostlist, what);
  if (!hosts) return report(hosts.error());
  const auto ctx = placement::prepare(*f);
  const auto map = placement::host_map(ctx);
  const auto nhosts = hosts->size();
  // --tp counts GPUs, as for `place`: with K tasks per node on nodes of --gpus-per-node GPUs
  // a TP group is TP x K / GPUs-per-node ranks (JobShape::ranks_per_group).
  placement::ShapeSpec spec;
  spec.nodes = static_cast<std::uint32_t>(nhosts);
  spec.gpus_per_node = gpus_per_node(o.gpus_opt, o.gpus_per_node, *f);
  if (o.tp_opt->count()) spec.tp = o.tp;
  if (o.ep_opt->count()) spec.ep = o.ep;
  spec.ranks_per_node = K;
  placement::ShapeNames names;
  names.nodes = "the number of hosts";
  auto shape = placement::JobShape::make(spec, names);
  if (!shape) return report(shape.error());
  auto layout = placement::rank_layout(map, std::move(*hosts), *shape);
  if (!layout) return report(layout.error());
  if (o.from_slurm_job)
    if (const char* nt = env("SLURM_NTASKS"))
      if (auto n = str::parse_uint(nt, 1u << 30); n && *n != std::uint64_t{K} * nhosts)
        std::cerr << "fabricplace: warning: SLURM_NTASKS=" << nt << " but the rank file has "
                  << nhosts << " hosts x " << K << " = " << std::uint64_t{K} * nhosts << " ranks\n";
  for (const auto& w : layout->warnings) std::cerr << "fabricplace: warning: " << w << "\n";
  if (o.route_aware) {
    if (auto r = route_aware(o, *f, map, *layout); !r) return report(r.error());
  } else if (!o.routes.lfts.empty() || !o.running.empty() || o.routes_opt->count() > 0) {
    return report(
        Error{ErrorCode::kUsage, "--routes, --lfts and --running need --route-aware", {}, 0});
  }

  placement::RankFileOptions ro;
  if (auto b = node_bindings(o, K, ro); !b) return report(b.error());
  ro.master_port = o.master_port;
  ro.origin = f->origin();
  ro.rails = placement::hca_rails(*f);
  ro.mnnvl = placement::shares_domain(*f, layout->hosts);
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
  o->gpus_opt = cmd->add_option("--gpus-per-node", o->gpus_per_node,
                                "GPUs per host (default: the fabric's NVLink domains' count, "
                                "else 8)");
  o->tp_opt = cmd->add_option(
      "--tp", o->tp,
      "tensor-parallel size in GPUs, as for place (default: GPUs per node); a TP group of more "
      "GPUs than a node spans TP / GPUs-per-node hosts; with K tasks per node it is "
      "TP x K / GPUs-per-node ranks (docs/rankfiles.md)");
  o->ep_opt =
      cmd->add_option("--ep", o->ep, "expert-parallel size in GPUs, as for place (default: none)");
  cmd->add_option("--format", o->format, placement::kRankFormats)->required();
  add_output_option(cmd, o->out, "output file ('-' = stdout), written atomically");
  o->cores_opt = cmd->add_option("--cores-per-node", o->cores_per_node,
                                 "physical cores per host for openmpi slot=, split evenly "
                                 "(default: from hwloc; nodes are assumed alike)");
  o->hwloc_opt = cmd->add_option(
      "--hwloc-xml", o->hwloc_xml,
      "the nodes' hwloc topology (lstopo FILE.xml): local rank k gets GPU k, its nearest HCA "
      "and the cores near it (default: this machine's, when built with hwloc)");
  cmd->add_option("--master-port", o->master_port, "torchrun MASTER_PORT")
      ->capture_default_str()
      ->check(CLI::Range(1u, 65535u));
  cmd->add_flag("--route-aware", o->route_aware,
                "order each leaf's boundary hosts on the fabric's routes so inter-leaf edges use "
                "distinct, unloaded links (docs/simulator.md)");
  o->routes.add(cmd, false);
  o->routes_opt = cmd->get_option("--routes");
  cmd->add_option("--running", o->running,
                  "with --route-aware: running jobs whose rings to avoid: saved `squeue -h -t R "
                  "-o '%i %N'` output, one hostlist per line in rank order, or JSON {\"id\": "
                  "[hosts...]} (docs/placement.md)");
  cmd->callback([&run, o] { run = [o] { return run_rankfile(*o); }; });
}

}  // namespace fabricplace::cli
