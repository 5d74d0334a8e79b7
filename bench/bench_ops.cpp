// SPDX-License-Identifier: GPL-2.0-or-later
// `fabric watch` (docs/performance.md, "fabric watch"): one run's step (fabric diff, the
// change lines, the link events and the flap count) on a 16,384-host re-cabling, and reading
// the largest state file the reader accepts.
//
// The re-cabling: the radix-64 3-level fat-tree of 16,384 hosts, then the same fabric with
// every host cable moved to its leaf's next host port (the host stays on its leaf): 16,384
// links removed and 16,384 added, 32,768 change lines and as many link events. Run 2 compares
// with an empty state; run 3 with the state run 2 left (the re-cabling undone: each link's
// second event, so every link is flapping).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fabricplace/common/file_io.hpp"
#include "fabricplace/fabric/builder.hpp"
#include "fabricplace/fabric/spec.hpp"
#include "fabricplace/ops/watch.hpp"

namespace fp = fabricplace;
using fp::fabric::Fabric;

namespace {

constexpr const char* kSpec = "fat3:pods=16,leaves=32,down=32,up=32,spines=32,radix=64";

// `f` with each host cable moved to the next host port of its leaf (the last to the first).
Fabric recabled(const Fabric& f) {
  fp::fabric::FabricBuilder b(f.origin() + ", re-cabled");
  for (const auto& n : f.nodes()) (void)b.add_node(n);
  for (const auto& p : f.ports()) (void)b.add_port(f.node(p.node).guid, p.rec);
  // Per leaf: its host links, by leaf port.
  std::map<fp::fabric::NodeId, std::vector<const fp::fabric::Link*>> by_leaf;
  for (const auto& l : f.links()) {
    const bool a_ca = f.node(l.node_a).type == fp::fabric::NodeType::kCa;
    const bool b_ca = f.node(l.node_b).type == fp::fabric::NodeType::kCa;
    if (a_ca == b_ca) {
      (void)b.add_link(f.node(l.node_a).guid, f.port(l.a).rec.number, f.node(l.node_b).guid,
                       f.port(l.b).rec.number, l.rate, l.assumed);
      continue;
    }
    by_leaf[a_ca ? l.node_b : l.node_a].push_back(&l);
  }
  for (auto& [leaf, links] : by_leaf) {
    auto leaf_port = [&](const fp::fabric::Link* l) {
      return f.node(l->node_a).type == fp::fabric::NodeType::kCa ? l->b : l->a;
    };
    std::ranges::sort(links, {}, [&](const fp::fabric::Link* l) {
      return f.port(leaf_port(l)).rec.number;
    });
    for (std::size_t i = 0; i < links.size(); ++i) {
      const auto* l = links[i];
      const auto ca = leaf_port(l) == l->a ? l->b : l->a;
      const auto to = f.port(leaf_port(links[(i + 1) % links.size()])).rec.number;
      (void)b.add_link(f.node(leaf).guid, to, f.node(f.port(ca).node).guid,
                       f.port(ca).rec.number, l->rate, l->assumed);
    }
  }
  return *b.build();
}

const Fabric& before() {
  static const auto f = std::make_unique<Fabric>(*fp::fabric::generate(kSpec));
  return *f;
}
const Fabric& after() {
  static const auto f = std::make_unique<Fabric>(recabled(before()));
  return *f;
}

// Run 2 of a re-cabling: empty state (arg 0), or run 3, undoing it, on the state run 2 left
// (arg 1).
void BM_WatchStepRecabling(benchmark::State& state) {
  const Fabric &a = before(), &b = after();
  fp::ops::WatchState start;
  (void)fp::ops::watch_step(nullptr, a, start, 10);
  const Fabric *from = &a, *to = &b;
  if (state.range(0) == 1) {
    (void)fp::ops::watch_step(&a, b, start, 10);
    std::swap(from, to);
  }
  std::uint64_t changes = 0, flapping = 0;
  for (auto _ : state) {
    auto st = start;
    const auto step = fp::ops::watch_step(from, *to, st, 10);
    changes = step.change_count;
    flapping = step.flapping_links;
    benchmark::DoNotOptimize(st);
  }
  state.counters["hosts"] = static_cast<double>(a.num_hosts());
  state.counters["changes"] = static_cast<double>(changes);
  state.counters["flapping"] = static_cast<double>(flapping);
}
BENCHMARK(BM_WatchStepRecabling)
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->MinTime(1.0)
    ->UseRealTime();

// The largest state file the reader accepts: events of the re-cabling's link names, repeated
// up to the size limit.
void BM_ReadWatchState(benchmark::State& state) {
  const std::uint64_t max = std::uint64_t{16} << 20;
  fp::ops::WatchState st;
  (void)fp::ops::watch_step(nullptr, before(), st, 10);
  (void)fp::ops::watch_step(&before(), after(), st, 10);
  const auto one = st.events;
  std::string text = fp::ops::to_json(st);
  for (std::uint64_t run = 3; text.size() < max; ++run) {
    for (auto e : one) {
      e.run = run;
      st.events.push_back(std::move(e));
    }
    st.runs = run;
    text = fp::ops::to_json(st);
  }
  while (text.size() > max) {
    st.events.resize(st.events.size() - std::max<std::size_t>(1, st.events.size() / 1000));
    text = fp::ops::to_json(st);
  }
  const auto path = (std::filesystem::temp_directory_path() / "fabricplace-bench-watch.json");
  (void)fp::write_file_atomic(path.string(), text);
  std::size_t events = 0;
  for (auto _ : state) {
    auto back = fp::ops::read_watch_state(path.string());
    if (!back) state.SkipWithError(back.error().to_string().c_str());
    events = back ? back->events.size() : 0;
    benchmark::DoNotOptimize(back);
  }
  state.counters["MB"] = static_cast<double>(text.size()) / 1e6;
  state.counters["events"] = static_cast<double>(events);
  std::filesystem::remove(path);
}
BENCHMARK(BM_ReadWatchState)->Unit(benchmark::kMillisecond)->MinTime(1.0)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
