// SPDX-License-Identifier: GPL-2.0-or-later
// Fabric benchmarks: ibnetdiscover dump ingest (parse + build + classify) and canonical JSON
// round trips on generated 3-level fat-trees. Peak memory is measured per process by
// bench/import_rss (see bench/run.sh); numbers are recorded in docs/performance.md.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <filesystem>
#include <map>

#include "fabricplace/common/file_io.hpp"
#include "fabricplace/fabric/export.hpp"
#include "fabricplace/fabric/json_io.hpp"
#include "fabricplace/fabric/sources.hpp"
#include "fabricplace/fabric/spec.hpp"

namespace fp = fabricplace::fabric;

namespace {

// 8,192 and 16,384 hosts: radix-64 (Quantum-2 class) 3-level fat-trees.
const char* spec_for(int hosts) {
  return hosts == 8192 ? "fat3:pods=8,leaves=32,down=32,up=32,spines=32,radix=64"
                       : "fat3:pods=16,leaves=32,down=32,up=32,spines=32,radix=64";
}

const std::string& dump_text(int hosts) {
  static std::map<int, std::string> cache;
  auto& s = cache[hosts];
  if (s.empty()) s = fp::to_ibnetdiscover(*fp::generate(spec_for(hosts)));
  return s;
}
const std::string& json_text(int hosts) {
  static std::map<int, std::string> cache;
  auto& s = cache[hosts];
  if (s.empty()) s = fp::to_json(*fp::generate(spec_for(hosts)));
  return s;
}

void BM_ImportDump(benchmark::State& state) {
  const int hosts = static_cast<int>(state.range(0));
  const std::string& text = dump_text(hosts);
  const auto path = std::filesystem::temp_directory_path() /
                    ("fabricplace-bench-" + std::to_string(hosts) + ".txt");
  (void)fabricplace::write_file_atomic(path.string(), text);
  for (auto _ : state) {
    auto f = fp::load_fabric(path.string());
    if (!f) state.SkipWithError(f.error().to_string().c_str());
    benchmark::DoNotOptimize(f);
  }
  state.counters["hosts"] = hosts;
  state.counters["MB"] = static_cast<double>(text.size()) / 1e6;
  std::filesystem::remove(path);
}
BENCHMARK(BM_ImportDump)->Arg(8192)->Arg(16384)->Unit(benchmark::kMillisecond)->MinTime(2.0);

void BM_ReadJson(benchmark::State& state) {
  const int hosts = static_cast<int>(state.range(0));
  const std::string& text = json_text(hosts);
  for (auto _ : state) {
    fp::FabricBuilder b;
    auto r = fp::read_json(text, "bench.json", b);
    auto f = b.build();
    if (!r || !f) state.SkipWithError("read failed");
    benchmark::DoNotOptimize(f);
  }
  state.counters["MB"] = static_cast<double>(text.size()) / 1e6;
}
BENCHMARK(BM_ReadJson)->Arg(8192)->Arg(16384)->Unit(benchmark::kMillisecond)->MinTime(2.0);

void BM_WriteJson(benchmark::State& state) {
  const auto f = *fp::generate(spec_for(static_cast<int>(state.range(0))));
  for (auto _ : state) benchmark::DoNotOptimize(fp::to_json(f));
}
BENCHMARK(BM_WriteJson)->Arg(16384)->Unit(benchmark::kMillisecond)->MinTime(1.0);

void BM_Generate(benchmark::State& state) {
  for (auto _ : state)
    benchmark::DoNotOptimize(fp::generate(spec_for(static_cast<int>(state.range(0)))));
}
BENCHMARK(BM_Generate)->Arg(16384)->Unit(benchmark::kMillisecond)->MinTime(1.0);

}  // namespace

BENCHMARK_MAIN();
