// SPDX-License-Identifier: GPL-2.0-or-later
// A seeded generator of LLM-heavy job traces for the simulator (docs/simulator.md,
// "A synthetic LLM-heavy trace"), given as a spec string wherever a trace file is accepted:
//
//   llm:jobs=2000,seed=1,load=0.8,hosts=800
//
// Contract
// - The result is the `Trace` the readers produce (trace.hpp): jobs in submission order from
//   time 0, ids "1".."N" (TraceJob::line = the job's number), whole nodes of
//   `gpus_per_node` GPUs each (gpus = nodes x gpus_per_node), the TP size by the readers'
//   rule (job_shape with the TP cap), one note saying what was generated.
// - MoE jobs (moe=F, ep=E): a share F of the jobs, drawn after the size and run time (one
//   more uniform per job only when F > 0, so traces without them are unchanged), get TP
//   groups inside a node and EP groups of the largest size up to E GPUs that holds whole TP
//   groups and tiles the job (moe_shape).
// - Job sizes are drawn from a weighted mix of node counts (keys w1, w2, ... w128), run times
//   from a log-normal whose median grows with the node count, clamped and rounded to whole
//   seconds. Arrivals are a Poisson process: at `rate` jobs per hour, or scaled so that the
//   trace's offered load, sum(nodes x duration) / (hosts x span), is exactly `load` (span:
//   first submission to last, submit times rounded to whole seconds).
// - Deterministic: the same spec, GPUs per node and TP cap give the same trace, byte for
//   byte, on any machine. The generator is std::mt19937_64 (its output is fixed by the C++
//   standard) and its own uniform, exponential and normal draws, over its own log and exp
//   (plain IEEE-754 arithmetic, compiled without FMA contraction), not std:: distributions
//   or libm, whose results may differ between implementations.
// - Bad keys or values are usage errors (kUsage, file "trace spec") naming the key and what
//   was expected. At most 1,000,000 jobs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fabricplace/common/error.hpp"
#include "fabricplace/sim/trace.hpp"

namespace fabricplace::sim {

inline constexpr std::uint32_t kMaxSyntheticJobs = 1'000'000;

struct LlmSpec {
  std::uint32_t jobs = 2000;
  std::uint64_t seed = 1;
  std::uint32_t hosts = 0;   ///< the cluster the load is for (0: not given)
  double load = 0.8;         ///< offered load (used when rate_per_hour is 0)
  double rate_per_hour = 0;  ///< arrivals per hour, instead of a load (0: not given)
  /// (nodes, weight), nodes ascending: the share of jobs of each size is weight / sum.
  std::vector<std::pair<std::uint32_t, double>> mix = {{1, 50}, {2, 20}, {4, 12},   {8, 8},
                                                       {16, 5}, {32, 3}, {64, 1.5}, {128, 0.5}};
  double median_s = 3600;  ///< median run time of a 1-node job, seconds
  double growth = 0.5;     ///< median of an N-node job = median_s x N^growth
  double sigma = 1.0;      ///< log-normal shape: sd of ln(run time)
  double min_s = 60;       ///< run times are clamped to [min_s, max_s]
  double max_s = 604800;   ///< 7 days
  /// Mixture-of-experts jobs: this share of the jobs (0 to 1) has TP groups inside a node
  /// and expert-parallel groups of up to `ep_cap` GPUs (the largest the job's shape takes).
  double moe = 0;
  std::uint32_t ep_cap = 0;  ///< GPUs; needed when moe > 0
};

/// True for text that reads as a generator spec rather than a path ("word:...", a
/// lower-case word and no '/'), as fabric specs are told from files.
bool looks_like_trace_spec(std::string_view s);

/// Parses "llm:key=value,..." (kUsage naming the key on any bad value).
Result<LlmSpec> parse_llm_spec(std::string_view spec);

/// Generates the trace; `name` becomes Trace::files[0] (the spec as given).
Result<Trace> generate_llm_trace(const LlmSpec& spec, std::uint32_t gpus_per_node,
                                 std::uint32_t tp_cap, const std::string& name);

/// The shape of a MoE job of `gpus` GPUs: TP as job_shape() with the TP cap lowered to a node,
/// and the largest EP size up to min(gpus, ep_cap) that nests with it and tiles the job
/// (none when no size above the TP group does).
Result<placement::JobShape> moe_shape(std::uint32_t gpus, std::uint32_t gpus_per_node,
                                      std::uint32_t tp_cap, std::uint32_t ep_cap);

/// parse_llm_spec + generate_llm_trace with the options' GPUs per node and TP cap.
Result<Trace> generate_trace(std::string_view spec, const TraceOptions& opt);

/// The keys, their defaults and meanings, one per line (for --help).
std::string llm_spec_help();

/// What a trace offers a cluster of `hosts`: sum(nodes x duration) / (hosts x span), span
/// = last submission - first (0 when the span is 0).
double offered_load(const Trace& t, std::uint32_t hosts);

/// The share of node-time (= GPU-time: whole nodes) in jobs of `lo` to `hi` nodes.
double node_time_share(const Trace& t, std::uint32_t lo, std::uint32_t hi);

namespace detail {
/// The generator's own natural log and exp (x > 0; |x| < 700): within 4e-16 (relative) of
/// libm's, and the same bits everywhere.
double det_log(double x);
double det_exp(double x);
}  // namespace detail

}  // namespace fabricplace::sim
