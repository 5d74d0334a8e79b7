// SPDX-License-Identifier: GPL-2.0-or-later
// Route model build (docs/performance.md, "Route model build"): each table model (ftree,
// minhop, updn) built with routes::make_model on non-blocking 3-level fat-trees of 64-port
// switches, 2,048 and 16,384 hosts, next to its floor in the same run: Table::empty_for
// (allocating and zeroing a table of that size, which every table model starts from) and the
// ecmp model (no table; what `--routes ecmp` costs).
//
// Each table's digest (FNV-1a of every entry, as tests/routes/dumps.hpp computes it) is in
// the label, and checked against the digest the implementations before the fast build gave
// (commit 5ee4c61): a faster build must not change a single entry.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include "fabricplace/fabric/spec.hpp"
#include "fabricplace/routes/model.hpp"

namespace fp = fabricplace;

namespace {

constexpr const char* kSpecs[] = {"fat3:pods=4,leaves=16,down=32,up=32,spines=32,radix=64",
                                  "fat3:pods=16,leaves=32,down=32,up=32,spines=32,radix=64"};
constexpr fp::routes::Kind kKinds[] = {fp::routes::Kind::kFtree, fp::routes::Kind::kMinhop,
                                       fp::routes::Kind::kUpdn, fp::routes::Kind::kEcmp};
// Digests of the tables built before the fast build [fabric][ftree, minhop, updn].
constexpr std::uint64_t kDigest[2][3] = {
    {0xbb963a20847cb325, 0x22678e81e094b325, 0x22678e81e094b325},
    {0xaf6bd72d7726a325, 0xcf50a52731c6a325, 0xcf50a52731c6a325},
};

const fp::fabric::Fabric& fabric(std::int64_t i) {
  static std::map<std::int64_t, std::unique_ptr<fp::fabric::Fabric>> cache;
  auto& f = cache[i];
  if (!f) f = std::make_unique<fp::fabric::Fabric>(*fp::fabric::generate(kSpecs[i]));
  return *f;
}

std::string size_label(const fp::fabric::Fabric& f) {
  return std::to_string(f.num_hosts()) + " hosts, " + std::to_string(f.switches().size()) +
         " switches";
}

std::uint64_t digest(const fp::routes::Table& t) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (fp::fabric::NodeId s : t.fabric().switches()) {
    for (std::uint32_t e = 0; e < t.ends().size(); ++e) {
      const fp::routes::PortNum p = t.out_port(s, e);
      h = (h ^ (p & 0xFFu)) * 0x100000001b3ULL;
      h = (h ^ (p >> 8)) * 0x100000001b3ULL;
    }
  }
  return h;
}

// Args: fabric (0: 2,048 hosts, 1: 16,384), model (index into kKinds).
void BM_RouteModelBuild(benchmark::State& state) {
  const auto& f = fabric(state.range(0));
  const auto kind = kKinds[state.range(1)];
  fp::routes::Spec spec;
  spec.automatic = false;
  spec.kind = kind;
  std::unique_ptr<const fp::routes::Model> last;
  for (auto _ : state) {
    auto r = fp::routes::make_model(f, spec);
    if (!r) {
      state.SkipWithError(r.error().message.c_str());
      return;
    }
    state.PauseTiming();
    last = std::move(*r);  // the previous model is freed outside the timing
    state.ResumeTiming();
  }
  std::string label = std::string(fp::routes::to_string(kind)) + ": " + size_label(f);
  if (const auto* t = last->table(); t != nullptr) {
    const std::uint64_t d = digest(*t);
    char buf[40];
    std::snprintf(buf, sizeof buf, ", digest 0x%016llx", static_cast<unsigned long long>(d));
    label += buf;
    const std::uint64_t want = kDigest[state.range(0)][state.range(1)];
    if (want != 0 && d != want) state.SkipWithError(("table changed: " + label).c_str());
  }
  state.SetLabel(label);
}
BENCHMARK(BM_RouteModelBuild)->ArgsProduct({{0, 1}, {0, 1, 2, 3}})->Unit(benchmark::kMillisecond);

// The floor of every table model: an empty (all zero) table of the same size.
void BM_EmptyTable(benchmark::State& state) {
  const auto& f = fabric(state.range(0));
  for (auto _ : state) {
    auto t = fp::routes::Table::empty_for(f, "empty");
    benchmark::DoNotOptimize(t->ends().size());
  }
  char mb[32];
  std::snprintf(mb, sizeof mb, ", %.1f MB",
                static_cast<double>(fp::routes::Table::bytes_for(f)) / 1e6);
  state.SetLabel(size_label(f) + mb);
}
BENCHMARK(BM_EmptyTable)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
