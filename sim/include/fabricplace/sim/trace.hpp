// SPDX-License-Identifier: GPL-2.0-or-later
// Job traces for the simulator: the Microsoft Philly trace (RFold's CSV), the Microsoft ITP
// traces (ElasticFlow's raw CSVs) and Standard Workload Format logs (the Parallel Workloads
// Archive), read into one list of jobs.
//
// Contract
// - A job asks for whole nodes (the simulator is node-exclusive): nodes = ceil(gpus /
//   gpus_per_node). Its TP group is tp = min(nodes * gpus_per_node, tp_cap) GPUs, lowered
//   to the largest size that tiles the job (a divisor of gpus_per_node, or gpus_per_node
//   times a divisor of the node count), so every request is valid (docs/simulator.md).
// - Submit times are seconds since the first kept job's submission, multiplied by
//   arrival_scale (0.5 = arrivals twice as dense: more load on the same fabric); durations
//   are run times on an uncontended fabric, as the trace gives them.
// - Jobs are kept in submission order (stable: equal times keep file order). Rows that
//   cannot run (no GPUs, a negative or unknown run time) are skipped and counted in
//   `notes`; a malformed row is an error naming the file, the line and what was expected.
// - `.gz` files are read through zlib, plain files as they are.
// - A path that names no file and reads as a spec ("llm:jobs=2000,...") is generated
//   instead (synthetic.hpp); the options apply to it as to a file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fabricplace/common/error.hpp"
#include "fabricplace/placement/job_shape.hpp"

namespace fabricplace::sim {

/// kLlm: generated from a spec (synthetic.hpp), not a file format.
enum class TraceFormat : std::uint8_t { kAuto, kPhilly, kItp, kSwf, kLlm };
std::string_view to_string(TraceFormat f);  ///< "auto", "philly", "itp", "swf", "llm"

struct TraceOptions {
  TraceFormat format = TraceFormat::kAuto;
  std::uint32_t gpus_per_node = 8;
  std::uint32_t tp_cap = 16;   ///< largest TP group, in GPUs
  double arrival_scale = 1.0;  ///< multiplies inter-arrival times (> 0)
  std::size_t skip_jobs = 0;   ///< drop the first N jobs (after sorting by submit time)
  std::size_t max_jobs = 0;    ///< keep at most N jobs (0: all)
  /// SWF logs count processors: this many make one GPU slot (RICC: 1 core = 1 slot, 8 per
  /// node, so a node of the log is a node of the simulation).
  std::uint32_t swf_procs_per_gpu = 1;
};

struct TraceJob {
  std::string id;          ///< as the trace names it (prefixed "file:" when merged)
  double submit = 0;       ///< seconds since the first job's submission
  double duration = 0;     ///< run time on an uncontended fabric, seconds
  std::uint32_t gpus = 0;  ///< as the trace gives them
  /// Whole nodes asked for and GPUs per TP group (job_shape below): the request the
  /// simulator places.
  placement::JobShape shape;
  std::uint32_t line = 0;  ///< 1-based line in its file
  std::uint32_t file = 0;  ///< index into Trace::files
};

struct Trace {
  std::vector<TraceJob> jobs;
  std::vector<std::string> files;  ///< where the jobs came from
  std::vector<std::string> notes;  ///< rows skipped and why, format guessed, ...
  TraceFormat format = TraceFormat::kAuto;
};

/// A whole text file, gunzipped when it is gzip-compressed: common's read_file (bounded,
/// integrity-checked, docs/sources.md Limits).
Result<std::string> read_text_file(const std::string& path);

/// The format a file's name or first line announces (kAuto: cannot tell).
TraceFormat detect_format(std::string_view path, std::string_view first_line);

/// Parses one trace's text (already decompressed). `file` names it in errors.
Result<Trace> parse_trace(std::string_view text, const std::string& file, const TraceOptions& opt);
/// Reads one or more files (several ITP clusters, say) and merges them by submit time; ids
/// become "file-stem:id" when more than one file is given ("llm:id" for a generated trace).
/// A path that is no file and looks like a spec is generated (synthetic.hpp).
Result<Trace> read_traces(const std::vector<std::string>& paths, const TraceOptions& opt);

/// The shape of a job of `gpus` GPUs (see the contract above): placement::JobShape::make()
/// with the largest TP size not above min(nodes x gpus_per_node, tp_cap) that its rules
/// accept. Errors: no GPUs, no GPUs per node, a TP cap of 0.
Result<placement::JobShape> job_shape(std::uint32_t gpus, std::uint32_t gpus_per_node,
                                      std::uint32_t tp_cap);

/// The trace as a Standard Workload Format log that parse_trace reads back as the same jobs
/// (ids, submit times, durations, GPUs; nodes and TP follow from the GPUs as for any SWF):
/// `header` lines first (each written as a "; " comment), then one 18-field line per job:
/// job number (the 1-based position: a generated trace's ids are these), submit time,
/// wait -1, run time, allocated and requested processors (= GPUs: read it back with
/// --swf-procs-per-gpu 1), status 1, the rest -1. Times are written in whole seconds
/// (rounded), as SWF has them.
std::string to_swf(const Trace& t, const std::vector<std::string>& header);

}  // namespace fabricplace::sim
