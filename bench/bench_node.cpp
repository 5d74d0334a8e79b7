// SPDX-License-Identifier: GPL-2.0-or-later
// The cost of reading an hwloc XML file in a child process (load_hwloc_xml: fork, hwloc in the
// child, the result back over a pipe, waitpid) against hwloc in this process
// (detail::load_hwloc_xml_in_process, what load_hwloc_xml did before). Fixtures from
// tests/data/hwloc: nvidiaDGX2-v2.xml (a real DGX-2H, 16 GPUs, 41 KB), dgx2-with-hcas.xml (the
// same with 8 HCAs, 52 KB), nvidiaDGX2.xml (hwloc 3's format 3.0: hwloc 2 rejects it, so this
// is the cost of an error). BM_*Rss* runs the forked load with 512 MiB of touched heap in
// this process, since fork() copies the page tables of everything the caller has mapped.
// BM_HwlocXmlPrecheck is the checks load_hwloc_xml makes on the text before hwloc runs.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "fabricplace/node/node_topology.hpp"

namespace fp = fabricplace;

namespace {

std::string fixture(int which) {
  static const char* const kNames[] = {"nvidiaDGX2-v2.xml", "dgx2-with-hcas.xml", "nvidiaDGX2.xml"};
  return std::string(FABRICPLACE_TEST_DATA) + "/hwloc/" + kNames[which];
}

// CPU time of this process's reaped children so far.
double children_cpu_ms() {
  rusage u{};
  ::getrusage(RUSAGE_CHILDREN, &u);
  const auto ms = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_usec) / 1e3;
  };
  return ms(u.ru_utime) + ms(u.ru_stime);
}

template <class Load>
void run(benchmark::State& state, Load load) {
  const auto path = fixture(static_cast<int>(state.range(0)));
  // The error path (format 3.0 under hwloc 2) is measured too; anything else failing is a bug.
  const auto first = load(path);
  if (!first && state.range(0) != 2) {
    state.SkipWithError(first.error().to_string().c_str());
    return;
  }
  const bool expect_ok = first.has_value();
  const double children_before = children_cpu_ms();
  for (auto _ : state) {
    auto t = load(path);
    if (t.has_value() != expect_ok) {
      state.SkipWithError(t ? "loaded a file expected to fail" : t.error().to_string().c_str());
      break;
    }
    benchmark::DoNotOptimize(t);
  }
  // The reader processes' CPU (user + system), which the CPU column (this process) leaves out.
  state.counters["child_cpu_ms"] =
      benchmark::Counter(children_cpu_ms() - children_before, benchmark::Counter::kAvgIterations);
  state.SetLabel(path.substr(path.rfind('/') + 1));
}

void BM_HwlocXmlInProcess(benchmark::State& state) {
  run(state, [](const std::string& p) { return fp::node::detail::load_hwloc_xml_in_process(p); });
}
// The checks before hwloc runs (the PU and NUMA node numbers: one pass over the text), on the
// same files: their share of a load.
void BM_HwlocXmlPrecheck(benchmark::State& state) {
  const auto path = fixture(static_cast<int>(state.range(0)));
  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (auto _ : state) {
    auto e = fp::node::detail::precheck_hwloc_xml(text, path);
    if (e) {
      state.SkipWithError(e->to_string().c_str());
      break;
    }
    benchmark::DoNotOptimize(e);
  }
  state.SetLabel(path.substr(path.rfind('/') + 1));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}
void BM_HwlocXmlForked(benchmark::State& state) {
  run(state, [](const std::string& p) { return fp::node::load_hwloc_xml(p); });
}

void BM_HwlocXmlForkedRss512MiB(benchmark::State& state) {
  constexpr std::size_t kBytes = std::size_t{512} << 20;
  const std::unique_ptr<char[]> ballast(new char[kBytes]);
  std::memset(ballast.get(), 1, kBytes);
  benchmark::DoNotOptimize(ballast.get());
  run(state, [](const std::string& p) { return fp::node::load_hwloc_xml(p); });
}

// The minimum over repetitions (--benchmark_repetitions=N) is the least disturbed by other load
// on a small machine.
double min_of(const std::vector<double>& v) {
  return v.empty() ? 0.0 : *std::min_element(v.begin(), v.end());
}

BENCHMARK(BM_HwlocXmlInProcess)
    ->DenseRange(0, 2)
    ->Unit(benchmark::kMillisecond)
    ->ComputeStatistics("min", min_of);
BENCHMARK(BM_HwlocXmlPrecheck)->DenseRange(0, 2)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_HwlocXmlForked)
    ->DenseRange(0, 2)
    ->Unit(benchmark::kMillisecond)
    ->ComputeStatistics("min", min_of);
BENCHMARK(BM_HwlocXmlForkedRss512MiB)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->ComputeStatistics("min", min_of);

}  // namespace

BENCHMARK_MAIN();
