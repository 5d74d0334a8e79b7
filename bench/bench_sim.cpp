// SPDX-License-Identifier: GPL-2.0-or-later
// The simulator: whole real traces replayed per policy and route model (jobs simulated per
// second), each route model's build cost per fabric size, and the route-aware ring order.
//
// The Philly and ITP traces are not in the repository: give their paths in
// FABRICPLACE_PHILLY_TRACE and FABRICPLACE_ITP_TRACE (the ITP file is one cluster's CSV,
// extracted from raw-traces.tar.gz). Without them those benchmarks are skipped.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <string>

#include "fabricplace/fabric/spec.hpp"
#include "fabricplace/placement/route_order.hpp"
#include "fabricplace/policies/policies.hpp"
#include "fabricplace/routes/model.hpp"
#include "fabricplace/sim/simulator.hpp"
#include "fabricplace/sim/trace.hpp"

namespace fp = fabricplace;

namespace {

constexpr fp::routes::Kind kKinds[] = {fp::routes::Kind::kFtree, fp::routes::Kind::kMinhop,
                                       fp::routes::Kind::kUpdn, fp::routes::Kind::kEcmp,
                                       fp::routes::Kind::kAdaptive};

fp::routes::Spec spec_of(fp::routes::Kind k) {
  fp::routes::Spec s;
  s.automatic = false;
  s.kind = k;
  return s;
}

struct World {
  fp::fabric::Fabric f;
  std::unique_ptr<const fp::routes::Model> routes;
  fp::policies::Planner planner;
  fp::sim::Simulator sim;
  World(fp::fabric::Fabric fab, fp::routes::Kind kind)
      : f(std::move(fab)),
        routes(*fp::routes::make_model(f, spec_of(kind))),
        planner(f, {}, routes.get()),
        sim(planner, {}) {}
};

const World& world(const std::string& spec, fp::routes::Kind kind = fp::routes::Kind::kFtree) {
  static std::map<std::pair<std::string, fp::routes::Kind>, std::unique_ptr<World>> cache;
  auto& w = cache[{spec, kind}];
  if (!w) w = std::make_unique<World>(*fp::fabric::generate(spec), kind);
  return *w;
}

const fp::sim::Trace* trace(const char* env) {
  static std::map<std::string, std::unique_ptr<fp::sim::Trace>> cache;
  const char* path = std::getenv(env);
  if (path == nullptr || *path == '\0') return nullptr;
  auto& t = cache[path];
  if (!t) {
    auto r = fp::sim::read_traces({path}, {});
    if (!r) return nullptr;
    t = std::make_unique<fp::sim::Trace>(std::move(*r));
  }
  return t.get();
}

// Philly (111,549 jobs) on a 3-level non-blocking fat-tree of 800 hosts (4 pods x 10 leaves
// x 20 hosts, 40-port switches); ITP cluster04 (15,802 jobs) on 128 hosts.
void simulate(benchmark::State& state, const char* env, const std::string& spec, std::size_t policy,
              fp::routes::Kind kind = fp::routes::Kind::kFtree) {
  const auto* t = trace(env);
  if (t == nullptr) {
    state.SkipWithError((std::string(env) + " not set or unreadable").c_str());
    return;
  }
  const auto& w = world(spec, kind);
  auto pols = *fp::sim::parse_sim_policies("fabric,slurm-tree,first-fit");
  const auto& p = pols[policy];
  const auto skip = w.sim.unplaceable(*t, p);
  std::size_t placements = 0;
  for (auto _ : state) {
    auto run = w.sim.run(*t, p, skip);
    placements = run.placements_tried;
    benchmark::DoNotOptimize(run.jobs.data());
  }
  state.SetLabel(p.name() + " [" + std::string(fp::routes::to_string(kind)) + "]");
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * t->jobs.size()));
  state.counters["jobs"] = static_cast<double>(t->jobs.size());
  state.counters["placements"] = static_cast<double>(placements);
}

void BM_SimulatePhilly(benchmark::State& state) {
  simulate(state, "FABRICPLACE_PHILLY_TRACE", "fat3:pods=4,leaves=10,down=20,up=20",
           static_cast<std::size_t>(state.range(0)));
}
BENCHMARK(BM_SimulatePhilly)->DenseRange(0, 2)->Unit(benchmark::kMillisecond)->MinTime(2);

void BM_SimulateItp(benchmark::State& state) {
  simulate(state, "FABRICPLACE_ITP_TRACE", "fat3:pods=2,leaves=4,down=16,up=16",
           static_cast<std::size_t>(state.range(0)));
}
BENCHMARK(BM_SimulateItp)->DenseRange(0, 2)->Unit(benchmark::kMillisecond)->MinTime(2);

// Philly with the fabric policy under each route model (args: model index into kKinds).
void BM_SimulatePhillyRoutes(benchmark::State& state) {
  simulate(state, "FABRICPLACE_PHILLY_TRACE", "fat3:pods=4,leaves=10,down=20,up=20",
           static_cast<std::size_t>(state.range(1)), kKinds[state.range(0)]);
}
BENCHMARK(BM_SimulatePhillyRoutes)
    ->ArgsProduct({{0, 1, 2, 3, 4}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->MinTime(2);

// Building each route model: every switch's entry for every end port (the table models),
// the distances to every host-facing switch (ecmp, adaptive). Args: fabric, model.
void BM_RouteModel(benchmark::State& state) {
  static const char* specs[] = {"fat3:pods=4,leaves=16,down=32,up=32,spines=32,radix=64",
                                "fat3:pods=8,leaves=32,down=32,up=32,spines=32,radix=64"};
  static std::map<int, std::unique_ptr<fp::fabric::Fabric>> fabrics;
  auto& fp_ = fabrics[static_cast<int>(state.range(0))];
  if (!fp_)
    fp_ = std::make_unique<fp::fabric::Fabric>(*fp::fabric::generate(specs[state.range(0)]));
  const auto& f = *fp_;
  const auto kind = kKinds[state.range(1)];
  for (auto _ : state) {
    auto r = fp::routes::make_model(f, spec_of(kind));
    if (!r) {
      state.SkipWithError(r.error().message.c_str());
      return;
    }
    benchmark::DoNotOptimize(r->get());
  }
  state.SetLabel(std::string(fp::routes::to_string(kind)) + ": " + std::to_string(f.num_hosts()) +
                 " hosts, " + std::to_string(f.switches().size()) + " switches");
}
BENCHMARK(BM_RouteModel)->ArgsProduct({{0, 1}, {0, 1, 2, 3, 4}})->Unit(benchmark::kMillisecond);

// Route-aware ring order for one job of 64 nodes over 4 leaves of an 800-host fabric.
void BM_RouteAwareRing(benchmark::State& state) {
  const auto& w = world("fat3:pods=4,leaves=10,down=20,up=20");
  fp::placement::JobRequest job;
  job.nodes = static_cast<std::uint32_t>(state.range(0));
  auto pl = w.planner.place(job, fp::placement::all_free(w.f), fp::policies::Policy::kFabric);
  std::vector<fp::routes::Load> flows(2 * w.f.num_links(), 0);
  for (auto _ : state) {
    auto ring =
        fp::placement::route_aware_ring(w.planner.context().blocks, *w.routes, pl.hosts, flows);
    benchmark::DoNotOptimize(ring.data());
  }
  state.SetLabel(std::to_string(pl.measures.leaves) + " leaves");
}
BENCHMARK(BM_RouteAwareRing)->Arg(16)->Arg(64)->Arg(200)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
