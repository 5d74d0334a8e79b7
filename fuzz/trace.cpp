// SPDX-License-Identifier: GPL-2.0-or-later
// fuzz_trace_philly, fuzz_trace_itp, fuzz_trace_swf: the trace readers, one format each
// (FABRICPLACE_FUZZ_TRACE_FORMAT: kPhilly, kItp, kSwf). sim::parse_trace() reads the input
// with the default options and with 1 GPU per node; then sim::read_traces(), what `simulate
// --trace` calls, reads it from a temporary file (through zlib, as it reads every file) and
// its jobs must keep the trace contract: whole nodes, a TP group that tiles the job, submit
// times from 0 in order, distinct ids.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <set>

#include "fabricplace/sim/trace.hpp"
#include "fuzz_util.hpp"

namespace {
const std::string& scratch_path() {
  static const std::string path = [] {
    const char* dir = std::getenv("TMPDIR");
    std::string p = std::string(dir && *dir ? dir : "/tmp") + "/fabricplace-fuzz-trace-XXXXXX";
    const int fd = mkstemp(p.data());
    if (fd < 0) fabricplace::fuzz::violated("fuzz_trace: mkstemp failed");
    close(fd);
    std::atexit([] { std::remove(scratch_path().c_str()); });
    return p;
  }();
  return path;
}

void check_jobs(const fabricplace::sim::Trace& t, std::uint32_t g, bool sorted) {
  using fabricplace::fuzz::require;
  double last = 0;
  for (const auto& j : t.jobs) {
    const auto& s = j.shape;
    require(s.nodes > 0 && s.tp > 0, "trace job without nodes or TP group", j.id);
    require(s.gpus_per_node == g, "trace job: not the GPUs per node it was read with", j.id);
    require(std::uint64_t{s.nodes} * g >= j.gpus, "trace job: its nodes do not hold its GPUs",
            j.id);
    // The rule stated once more, independently of placement::first_broken_rule, and the
    // builder's own verdict.
    require(s.tp <= g ? g % s.tp == 0 : s.tp % g == 0 && s.nodes % (s.tp / g) == 0,
            "trace job: the TP group does not tile the job", j.id);
    require(fabricplace::placement::JobShape::make(s.spec()).has_value(),
            "trace job: JobShape::make refuses its shape", j.id);
    require(std::isfinite(j.submit) && std::isfinite(j.duration) && j.duration >= 0,
            "trace job: submit time or duration not a finite time", j.id);
    if (sorted) {
      require(j.submit >= last, "read_traces: jobs not in submission order", j.id);
      last = j.submit;
    }
  }
  if (sorted && !t.jobs.empty())
    require(t.jobs.front().submit == 0, "read_traces: first job not at 0");
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fabricplace;
  const auto text = fuzz::text_of(data, size);
  sim::TraceOptions o;
  o.format = sim::TraceFormat::FABRICPLACE_FUZZ_TRACE_FORMAT;
  for (std::uint32_t g : {8u, 1u}) {
    o.gpus_per_node = g;
    auto t = sim::parse_trace(text, "fuzz-trace", o);
    if (!t) {
      fuzz::check_error(t.error());
      return 0;
    }
    check_jobs(*t, g, false);
  }
  o.gpus_per_node = 8;
  const std::string& path = scratch_path();
  std::FILE* out = std::fopen(path.c_str(), "wb");
  if (!out) fuzz::violated("fuzz_trace: cannot write the scratch file");
  if (size) fuzz::require(std::fwrite(data, 1, size, out) == size, "fuzz_trace: write");
  fuzz::require(std::fclose(out) == 0, "fuzz_trace: close");
  auto all = sim::read_traces({path}, o);
  if (!all) {
    fuzz::check_error(all.error());
    return 0;
  }
  check_jobs(*all, 8, true);
  std::set<std::string> ids;
  for (const auto& j : all->jobs)
    fuzz::require(ids.insert(j.id).second, "read_traces: a job id twice", j.id);
  return 0;
}
