// SPDX-License-Identifier: GPL-2.0-or-later
// fabricplace place: dry-run placement of one job on a fabric, for any policy.
//
// Exit status: 0 a placement was found (with --compare: by --policy), 3 no placement is
// possible now (the reason is printed; with --json it is in the document), 1 bad input,
// 2 bad command line or request.
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "commands.hpp"
#include "fabricplace/common/file_io.hpp"
#include "fabricplace/common/limits.hpp"
#include "fabricplace/common/strings.hpp"
#include "fabricplace/placement/report.hpp"
#include "fabricplace/placement/route_order.hpp"
#include "fabricplace/placement/running.hpp"
#include "fabricplace/policies/policies.hpp"

namespace fabricplace::cli {
namespace {

using placement::JobRequest;
using placement::NodeStates;

inline constexpr int kExitInfeasible = 3;

struct PlaceOpts {
  InputOpts in;
  std::uint32_t nodes = 0, gpus_per_node = 8, tp = 0, ep = 0, pp = 1;
  std::string exclude, free, busy, state;
  // Given on the command line (an empty --free '' means "nothing is free").
  std::uint32_t segment = 0;
  std::string slurm_version = "22.05";
  CLI::Option *tp_opt = nullptr, *ep_opt = nullptr, *gpus_opt = nullptr, *free_opt = nullptr,
              *busy_opt = nullptr, *state_opt = nullptr, *segment_opt = nullptr;
  bool from_slurm = false;
  std::string running;  ///< --running FILE
  std::string policy = "fabric", policy_config;
  bool explain = false, json = false, compare = false;
  RouteOpts routes;
};

Result<NodeStates> read_states(const fabric::Fabric& f, const PlaceOpts& o) {
  const int given = static_cast<int>(o.free_opt->count() > 0) +
                    static_cast<int>(o.busy_opt->count() > 0) +
                    static_cast<int>(o.state_opt->count() > 0) + static_cast<int>(o.from_slurm);
  if (given > 1)
    return fail(ErrorCode::kUsage, "give at most one of --free, --busy, --state, --from-slurm");
  if (o.free_opt->count()) return placement::free_hosts(f, o.free);
  if (o.busy_opt->count()) return placement::busy_hosts(f, o.busy);
  if (o.state_opt->count()) {
    auto text = read_file(o.state);
    if (!text) return std::unexpected(text.error());
    // JSON ({host: state}), or saved `sinfo -h -N -o '%N %t'` output.
    const auto t = str::trim(*text);
    if (!t.empty() && (t.front() == '{' || t.front() == '['))
      return placement::states_from_json(f, *text, o.state);
    return placement::states_from_sinfo(f, *text, o.state);
  }
  if (o.from_slurm) {
    // -a: every partition, hidden ones too (the plugin reads them all: SHOW_ALL).
    auto text = run_slurm("--from-slurm", "sinfo -a -h -N -o '%N %t'");
    if (!text) return std::unexpected(text.error());
    return placement::states_from_sinfo(f, *text, "sinfo");
  }
  return placement::all_free(f);
}

// The running jobs: --running FILE (squeue output, rings or JSON), else with --from-slurm
// `squeue -a -h -t R -o '%i %N'`; none without either.
Result<placement::RunningJobs> read_running(const fabric::Fabric& f, const PlaceOpts& o) {
  if (!o.running.empty()) {
    auto text = read_file(o.running);
    if (!text) return std::unexpected(text.error());
    return placement::parse_running(f, *text, o.running);
  }
  if (o.from_slurm) {
    auto text = run_slurm("--from-slurm", "squeue -a -h -t R -o '%i %N'");  // every partition
    if (!text) return std::unexpected(text.error());
    return placement::running_from_lines(f, *text, "squeue");
  }
  return placement::RunningJobs{};
}

int run_place(const PlaceOpts& o) {
  placement::ShapeSpec spec;
  spec.nodes = o.nodes;
  spec.gpus_per_node = o.gpus_per_node;
  if (o.tp_opt->count()) spec.tp = o.tp;
  if (o.ep_opt->count()) spec.ep = o.ep;
  spec.pp = o.pp;
  // The shape is checked before any input is read, unless the GPUs per node are to come
  // from the fabric's NVLink domains (--gpus-per-node not given): then once it is loaded.
  JobRequest job;
  if (o.gpus_opt->count()) {
    auto shape = placement::JobShape::make(spec);
    if (!shape) return report(shape.error());
    job = placement::request(*shape);
  }
  const auto series = policies::parse_slurm_series(o.slurm_version);
  if (!series)
    return report(Error{ErrorCode::kUsage,
                        "--slurm-version " + o.slurm_version + ": expected 22.05 or 24.11",
                        {},
                        0});
  std::optional<policies::Policy> policy = policies::parse_policy(o.policy);
  if (!policy)
    return report(Error{ErrorCode::kUsage,
                        "--policy " + o.policy + ": expected " + policies::policy_choices(),
                        {},
                        0});
  // --routes is checked before any input is read (a usage error, exit 2).
  const auto route_spec = o.routes.one();
  if (!route_spec) return report(route_spec.error());
  auto weights_or = load_weights(o.policy_config);
  if (!weights_or) return report(weights_or.error());
  const placement::Weights weights = *weights_or;
  auto f = o.in.load();
  if (!f) return report(f.error());
  print_warnings(*f);
  // Without --gpus-per-node, the GPUs the fabric's NVLink domains say the hosts have.
  // (Without the option the shape is built here, once the fabric is read.)
  if (const auto g = gpus_per_node(o.gpus_opt, spec.gpus_per_node, *f); !o.gpus_opt->count()) {
    spec.gpus_per_node = g;
    auto shape = placement::JobShape::make(spec);
    if (!shape) return report(shape.error());
    job = placement::request(*shape);
  }
  if (o.segment_opt->count()) job.segment = o.segment;
  if (!o.exclude.empty()) {
    auto ex = placement::resolve_hosts(*f, o.exclude, "--exclude");
    if (!ex) return report(ex.error());
    job.exclude = std::move(*ex);
  }
  auto states = read_states(*f, o);
  if (!states) return report(states.error());
  for (const auto& w : states->warnings) std::cerr << "fabricplace: warning: " << w << "\n";
  auto running = read_running(*f, o);
  if (!running) return report(running.error());
  for (const auto& w : running->warnings) std::cerr << "fabricplace: warning: " << w << "\n";
  // No node states given: every host is free but those the running jobs hold.
  const bool states_given =
      o.free_opt->count() || o.busy_opt->count() || o.state_opt->count() || o.from_slurm;
  if (!states_given)
    for (const auto& j : running->jobs)
      for (auto h : j.hosts) states->state[fabric::idx(h)] = placement::HostState::kBusy;
  if (!o.running.empty() || o.from_slurm) {
    const std::string src = o.running.empty() ? "squeue" : o.running;
    std::size_t hosts = 0, on_free = 0;
    const placement::RunningJob* first = nullptr;
    fabric::HostId first_host{};
    for (const auto& j : running->jobs) {
      hosts += j.hosts.size();
      for (auto h : j.hosts)
        if (states->free(h) && on_free++ == 0) first = &j, first_host = h;
    }
    std::cerr << "fabricplace: " << src << ": " << running->jobs.size() << " running job(s) on "
              << hosts << " host(s) read\n";
    // Two inputs that disagree (saved at different times, or --free naming busy hosts): the
    // load still counts, and the hosts may still be chosen; say so rather than guess.
    if (on_free > 0)
      std::cerr << "fabricplace: warning: " << src << ": " << on_free
                << " host(s) of running jobs are free in the node states (the first: "
                << f->host(first_host).name << " of job " << first->id << ", line " << first->line
                << "); their jobs' load counts and they may be chosen: are both inputs current?\n";
  }

  // The route model in force: the objective measures every ring on it.
  auto model = load_routes(*f, *route_spec);
  if (!model) return report(model.error());
  const policies::Planner planner(*f, weights, model->get(), *series);
  const auto& ctx = planner.context();
  for (const auto& w : ctx.tree.warnings) std::cerr << "fabricplace: warning: " << w << "\n";
  // The running jobs' rings load the fabric; the objective weighs them.
  placement::Traffic load(planner.routes(), ctx.capacity, &ctx.groups);
  for (const auto& id : load.add(running->jobs)) {
    const auto j = std::ranges::find(running->jobs, id, &placement::RunningJob::id);
    const auto e = routes::unrouted_edge(**model, j->hosts);
    std::cerr << "fabricplace: warning: running job " << id << ": "
              << (e ? routes::no_route_text(**model, e->first, e->second)
                    : std::string("some edge of its ring has no route"))
              << "; its load is left out\n";
  }
  const placement::Traffic* traffic = &load;
  auto p = planner.place(job, *states, *policy, traffic);
  if (const auto e = p.feasible ? routes::unrouted_edge(**model, p.hosts) : std::nullopt)
    std::cerr << "fabricplace: warning: " << routes::no_route_text(**model, e->first, e->second)
              << "; the ring counts at slowdown " << placement::kNoRoute << " in the score\n";
  const std::string route_text = "routes: " + (*model)->description() + "\n";
  // What the two Slurm baselines stand for (--slurm-version, --segment).
  const auto seg = job.block_segment();
  const std::string baseline_text =
      "baselines: slurm-tree as Slurm " + std::string(policies::to_string(*series)) +
      " selects (--slurm-version); slurm-block as 24.11 with " +
      (seg ? "--segment=" + std::to_string(seg) : std::string("no --segment")) +
      (job.segment ? std::string(" (--segment)")
       : seg       ? std::string(" (the TP group's nodes; --segment 0: none)")
                   : std::string()) +
      "\n";
  auto route_json = [&](std::string doc) {
    auto j = nlohmann::ordered_json::parse(doc);
    nlohmann::ordered_json r;
    r["model"] = std::string(routes::to_string((*model)->kind()));
    r["description"] = (*model)->description();
    j["routes"] = r;
    return j.dump(2) + "\n";
  };
  if (o.compare) {
    // Every policy side by side; the exit status and the top-level verdict are --policy's.
    std::vector<placement::Placement> all;
    for (auto q : policies::kPolicies)
      all.push_back(q == *policy ? p : planner.place(job, *states, q, traffic));
    std::cout << (o.json ? route_json(placement::compare_json(ctx, job, all, p))
                         : placement::compare_text(ctx, job, all) + route_text + baseline_text +
                               (o.explain ? "\n" + placement::placement_text(ctx, job, p, true)
                                          : std::string()));
  } else {
    std::cout << (o.json ? route_json(placement::placement_json(ctx, job, p))
                         : placement::placement_text(ctx, job, p, o.explain) + route_text);
  }
  if (!p.feasible) {
    if (o.json || o.compare)
      std::cerr << "fabricplace: no placement (" << p.policy << "): " << p.reason << "\n";
    return kExitInfeasible;
  }
  return kExitOk;
}

}  // namespace

void add_place_command(CLI::App& app, RunFn& run) {
  auto o = std::make_shared<PlaceOpts>();
  auto* cmd = app.add_subcommand(
      "place",
      "dry-run placement: choose the hosts and the rank (ring) order for a job. Exit status: 0 "
      "placed, 3 no placement possible now (reason given), 1 bad input, 2 bad command line");
  o->in.add(cmd, "the fabric: dump(s), JSON, topology.conf, tiers CSV or spec", "--fabric");
  cmd->add_option("-N,--nodes", o->nodes, "nodes (hosts) the job needs")->required();
  o->gpus_opt = cmd->add_option("--gpus-per-node", o->gpus_per_node,
                                "GPUs per node (default: the fabric's NVLink domains' count, "
                                "else 8)");
  o->tp_opt =
      cmd->add_option("--tp", o->tp,
                      "tensor-parallel size in GPUs (default: GPUs per node); a TP group of more "
                      "GPUs than a node spans TP / GPUs-per-node nodes under one leaf, or inside "
                      "one NVLink domain when the fabric has domains");
  o->ep_opt = cmd->add_option("--ep", o->ep,
                              "expert-parallel size in GPUs (default: none): EP groups are kept "
                              "together like TP groups (the larger of the two)");
  cmd->add_option("--pp", o->pp, "pipeline-parallel stages (must tile the job)")
      ->capture_default_str();
  cmd->add_option("--exclude", o->exclude, "hosts never to use (hostlist)");
  o->free_opt =
      cmd->add_option("--free", o->free, "only these hosts are free (hostlist); the rest busy");
  o->busy_opt =
      cmd->add_option("--busy", o->busy, "these hosts are busy (hostlist); the rest free");
  o->state_opt =
      cmd->add_option("--state", o->state,
                      "node states: JSON {host: state} or saved `sinfo -h -N -o '%N %t'` output");
  cmd->add_flag("--from-slurm", o->from_slurm,
                "read node states from `sinfo` and, unless --running, the running jobs from "
                "`squeue` (a real cluster)");
  cmd->add_option("--running", o->running,
                  "running jobs: saved `squeue -h -t R -o '%i %N'` output, one hostlist per "
                  "line (rings), or JSON {\"id\": [hosts...]} (docs/placement.md)");
  cmd->add_option("--policy", o->policy, "fabric | slurm-tree | slurm-block | first-fit")
      ->capture_default_str();
  cmd->add_option("--slurm-version", o->slurm_version,
                  "the Slurm whose topology/tree selection slurm-tree reproduces: 22.05 or 24.11")
      ->capture_default_str();
  o->segment_opt = cmd->add_option(
      "--segment", o->segment,
      "slurm-block only: Slurm's --segment, groups of this many nodes each inside one base "
      "block (default: the TP group's nodes when a group spans nodes, else none; 0 = none)");
  cmd->add_option("--policy-config", o->policy_config,
                  "the objective's weights (default: the built-in ones, as in "
                  "etc/fabricplace/policy.conf)");
  cmd->add_flag("--explain", o->explain,
                "each criterion's value for the chosen set and for the runner-up");
  cmd->add_flag("--json", o->json, "one JSON document on stdout");
  o->routes.add(cmd, false);
  cmd->add_flag("--compare", o->compare,
                "run every policy on the same input, side by side (exit status and JSON "
                "verdict: --policy's)");
  cmd->callback([&run, o] { run = [o] { return run_place(*o); }; });
}

}  // namespace fabricplace::cli
