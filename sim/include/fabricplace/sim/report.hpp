// SPDX-License-Identifier: GPL-2.0-or-later
// What a simulation reports: per-policy summaries, the per-job table and a self-contained
// HTML report with inline SVG plots (no scripts, no network).
#pragma once

#include <string>
#include <vector>

#include "fabricplace/sim/simulator.hpp"

namespace fabricplace::sim {

/// One policy's figures (docs/simulator.md defines each).
struct Summary {
  std::string policy;    ///< run_label(): the policy, with its route model when several ran
  std::string routes;    ///< the route model's kind
  std::size_t jobs = 0;  ///< jobs run
  std::size_t jobs_multi_node = 0;  ///< jobs on 2 or more nodes
  std::size_t jobs_tp_multi = 0;    ///< jobs whose TP groups span nodes
  std::size_t jobs_tp_split = 0;    ///< jobs with a TP group across leaves
  double tp_in_leaf_pct = 100;      ///< of jobs_tp_multi, those with every group in one leaf
  double mean_wait_s = 0, p95_wait_s = 0, max_wait_s = 0;
  /// The same over multi-node jobs only: the jobs placement constraints apply to.
  double mean_wait_multi_s = 0, p95_wait_multi_s = 0, max_wait_multi_s = 0;
  double mean_bounded_slowdown = 1;
  double utilization = 0;         ///< busy node-seconds / (hosts x makespan)
  double mean_leaves = 0;         ///< over multi-node jobs
  double mean_excess_leaves = 0;  ///< leaves used minus the fewest possible, multi-node jobs
  /// The fabric's thinnest tier (1: the leaves' uplinks, 2: the pods' links to the core;
  /// placement::thinnest_tier) and the ring edges of multi-node jobs across it: in all, and
  /// per job.
  int thin_tier = 1;
  std::size_t thin_tier_crossings = 0;
  double mean_thin_tier_crossings = 0;
  double mean_comm_slowdown = 1;  ///< over multi-node jobs (time-averaged per job)
  double p95_comm_slowdown = 1;
  double max_link_load = 0;   ///< ring edges on the most loaded switch-to-switch link
  double gpu_hours = 0;       ///< GPU-hours run (actual run times)
  double gpu_hours_lost = 0;  ///< GPU-hours beyond the uncontended run times
  double makespan_s = 0;
  /// NVLink domains: how many the fabric has, and on average over the makespan how many
  /// were fragmented (some hosts busy, some free; Run::fragmented_domain_seconds). 0 without.
  std::size_t domains = 0;
  double mean_fragmented_domains = 0;
  std::size_t jobs_unrouted = 0;  ///< Run::unrouted: rings with an edge that has no route
};

/// A run's name in reports: "fabric", or "fabric [adaptive]" when several route models ran.
std::string run_label(const Run& r, bool with_routes);

Summary summarize(const Trace& t, const Run& r, std::size_t hosts, const SimOptions& opt,
                  bool with_routes = false);

/// What a run whose jobs had ring edges without a route (Run::unrouted) says, in the summary
/// on stdout and in the report's notes; empty when it had none.
std::string unrouted_note(const Run& r, bool with_routes);

/// summary.csv: a header and one row per policy, plain numbers.
std::string summary_csv(const std::vector<Summary>& s);
/// jobs.csv: one row per job and run, in trace order within each run.
std::string jobs_csv(const Trace& t, const std::vector<Run>& runs, const fabric::Fabric& f,
                     bool with_routes = false);

/// What the HTML report says about the run besides the figures.
struct ReportInfo {
  std::string title;
  std::string fabric;                 ///< origin and size
  std::vector<std::string> routes;    ///< each route model's description
  std::vector<std::string> traces;    ///< files
  std::vector<std::string> settings;  ///< "comm fraction 0.3", ...
  std::vector<std::string> notes;     ///< trace notes, degraded links, dropped jobs
};
std::string html_report(const Trace& t, const std::vector<Run>& runs, const std::vector<Summary>& s,
                        const ReportInfo& info, const fabric::Fabric& f, bool with_routes = false);

}  // namespace fabricplace::sim
