// SPDX-License-Identifier: GPL-2.0-or-later
// The trace-driven cluster simulator: replays a job trace on a fabric under one placement
// policy and measures queueing and communication (docs/simulator.md).
//
// Model
// - Scheduling: FCFS with EASY backfill, as Slurm's sched/backfill family does it. The
//   queue head starts as soon as its policy places it; otherwise it gets a reservation at
//   the earliest time enough nodes will be free (running jobs end at start + estimate,
//   estimate = trace duration x estimate_factor), and later jobs (at most bf_max_job_test)
//   start now if they end before it or fit in the nodes it leaves spare. Jobs are
//   node-exclusive.
// - Placement: policies::Planner decides which hosts and the ring (rank) order, seeing the
//   running jobs' load (placement::Traffic: the simulator passes its own state).
// - Communication: every multi-node job runs ring AllReduce over its hosts in rank order.
//   Each ring edge (host i -> i + 1, wrapping) puts its traffic on the links the route model
//   in force gives it (routes::Model: one static path, ecmp's hashed flows, or adaptive's
//   balanced split), as load in ring edges. The job's communication slowdown s is the one
//   ring measure of placement/traffic.hpp (its ring's worst link share: s = max(1, host
//   injection rate x max(L / C)), the figure the fabric policy predicts). A fraction comm_fraction
//   of the job's uncontended run time is communication, so it progresses at 1 / ((1 - f) + f s) of
//   its nominal speed; rates change whenever a job starts or ends.
// - Deterministic: the same trace, fabric, routes and options give the same result
//   (no clocks, no unordered iteration, ties broken by job order).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "fabricplace/common/error.hpp"
#include "fabricplace/policies/policies.hpp"
#include "fabricplace/routes/model.hpp"
#include "fabricplace/sim/trace.hpp"

namespace fabricplace::sim {

/// A policy as the simulator runs it.
struct SimPolicy {
  policies::Policy placement = policies::Policy::kFabric;
  [[nodiscard]] std::string name() const;
};
/// "fabric,slurm-tree,first-fit" (kUsage for unknown or repeated names).
Result<std::vector<SimPolicy>> parse_sim_policies(std::string_view list);

/// (GPUs per node are the trace's: each job's shape, TraceOptions::gpus_per_node.)
struct SimOptions {
  double comm_fraction = 0.3;    ///< share of a job's uncontended run time spent in AllReduce
  double estimate_factor = 1.0;  ///< run-time estimate = duration x this (EASY reservations)
  std::uint32_t bf_max_job_test = 500;  ///< Slurm's bf_max_job_test default
  double bounded_slowdown_tau = 10;     ///< seconds (the customary 10 s)
};

/// What happened to one job under one policy.
struct JobOutcome {
  bool ran = false;  ///< false: the policy could never place it (see Run::dropped)
  double start = 0, end = 0;
  std::vector<fabric::HostId> hosts;  ///< ring order
  std::uint32_t leaves = 0;           ///< blocks used
  std::uint32_t min_leaves = 0;       ///< fewest blocks the job could use on an empty fabric
  std::uint32_t tp_groups_split = 0;
  std::uint32_t ring_inter_leaf = 0;
  std::uint32_t ring_inter_pod = 0;
  /// Ring edges across the fabric's thinnest tier (placement::thinnest_tier): ring_inter_pod
  /// when that is the pods' links to the core, else ring_inter_leaf.
  std::uint32_t thin_tier_crossings = 0;
  double max_link_load = 0;  ///< most load (ring edges) on any switch-to-switch link it used
  double comm_slowdown = 1;  ///< time-averaged s over its run
  double worst_comm_slowdown = 1;
  /// Some edge of its ring had no route on the model (a hole or a loop in an LFT dump): its
  /// communication ran as if alone (s = 1) and loaded no link; Run::unrouted says so.
  bool unrouted = false;
};

struct Run {
  SimPolicy policy;
  std::vector<JobOutcome> jobs;   ///< parallel to Trace::jobs
  std::size_t dropped = 0;        ///< jobs no policy run could ever place (too large)
  std::string routes;             ///< the route model's kind ("ftree", "ecmp", ...)
  placement::ThinTier thin_tier;  ///< the fabric's thinnest tier (JobOutcome::thin_tier_crossings)
  double max_link_load = 0;       ///< most load (ring edges) on any switch-to-switch link, any time
  /// The most load on any switch-to-switch link, as it changed: (time, ring edges) steps.
  std::vector<std::pair<double, double>> max_load_over_time;
  /// Per directed link (routes::DirLink): the most load it carried at any time.
  std::vector<routes::Load> link_peak;
  /// Jobs still queued when nothing else could happen (0 unless the fabric lost the hosts
  /// a job needs, e.g. every host unhealthy for the fabric policy).
  std::size_t never_started = 0;
  /// Jobs with JobOutcome::unrouted, and what routes::no_route_text says of the first one's
  /// edge (empty when none).
  std::size_t unrouted = 0;
  std::string first_unrouted;
  double first_submit = 0, last_end = 0;
  double busy_node_seconds = 0;
  /// NVLink domains (fabrics with domains): the time integral of the number of fragmented
  /// domains, those with some hosts busy and some free (a whole domain is free for a large
  /// job only when none of its hosts is taken), from the first submission to the last end.
  double fragmented_domain_seconds = 0;
  std::size_t domains = 0;           ///< the fabric's NVLink domains
  std::size_t placements_tried = 0;  ///< Planner::place calls (cost accounting)
  std::size_t scheduler_passes = 0;
};

/// Progress: jobs finished so far, of how many.
using Progress = std::function<void(std::size_t done, std::size_t total)>;

class Simulator {
 public:
  /// The planner (its fabric and route model: Planner::routes()) must outlive the simulator.
  Simulator(const policies::Planner& planner, SimOptions opt);
  /// Jobs a policy could never place on the empty fabric (too many nodes, a TP group larger
  /// than any leaf): true per job. The caller drops them from every run alike.
  [[nodiscard]] std::vector<std::uint8_t> unplaceable(const Trace& t, const SimPolicy& p) const;
  /// Replays `t` (jobs marked in `skip` are not submitted).
  [[nodiscard]] Run run(const Trace& t, const SimPolicy& p, const std::vector<std::uint8_t>& skip,
                        const Progress& progress = {}) const;
  [[nodiscard]] const SimOptions& options() const { return opt_; }

 private:
  const fabric::Fabric& f_;
  const routes::Model& routes_;
  const policies::Planner& planner_;
  SimOptions opt_;
  std::vector<routes::DirLink> interswitch_list_;
  std::uint32_t max_block_ = 0;  ///< hosts in the largest block (min_leaves)
};

}  // namespace fabricplace::sim
