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
    std::ranges::sort(links, {},
                      [&](const fp::fabric::Link* l) { return f.port(leaf_port(l)).rec.number; });
    for (std::size_t i = 0; i < links.size(); ++i) {
      const auto* l = links[i];
      const auto ca = leaf_port(l) == l->a ? l->b : l->a;
      const auto to = f.port(leaf_port(links[(i + 1) % links.size()])).rec.number;
      (void)b.add_link(f.node(leaf).guid, to, f.node(f.port(ca).node).guid, f.port(ca).rec.number,
                       l->rate, l->assumed);
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

// Reading a state file of (nearly) N MiB: the re-cabling's link events, run after run, a little
// past N MiB, written as a run writes it (WatchDir::write_state drops the oldest until it
// fits), read as a run reads it (WatchDir: the file by name, then the reader). 64 MiB is the
// largest the reader accepts (ops::kMaxStateBytes); 16 MiB the largest the previous one did.
void BM_ReadWatchState(benchmark::State& state) {
  const auto max = static_cast<std::uint64_t>(state.range(0)) << 20;
  fp::ops::WatchState st;
  (void)fp::ops::watch_step(nullptr, before(), st, 10);
  (void)fp::ops::watch_step(&before(), after(), st, 10);
  const auto one = st.events;
  const double per_event = static_cast<double>(fp::ops::to_json(st).size()) / one.size();
  // A little over N MiB; at the bound, write_state drops the oldest events until it fits.
  const auto events = static_cast<std::size_t>(static_cast<double>(max) / per_event) + 10'000;
  for (std::uint64_t run = 3; st.events.size() < events; ++run) {
    for (auto e : one) {
      e.run = run;
      st.events.push_back(std::move(e));
    }
    st.runs = run;
  }
  // Below the bound, the bench trims as write_state would.
  for (std::string text = fp::ops::to_json(st); max < fp::ops::kMaxStateBytes && text.size() > max;
       text = fp::ops::to_json(st))
    st.events.erase(
        st.events.begin(),
        st.events.begin() + static_cast<std::ptrdiff_t>(
                                (text.size() - max) / (text.size() / st.events.size()) + 1));
  const auto dir = std::filesystem::temp_directory_path() / "fabricplace-bench-watch";
  std::filesystem::remove_all(dir);
  {
    auto w = fp::ops::WatchDir::open(dir.string(), 0);
    if (!w || !w->write_state(st)) {
      state.SkipWithError("cannot write the state");
      return;
    }
  }
  const auto bytes = std::filesystem::file_size(dir / "watch.json");
  if (bytes > max || bytes < max - max / 64) state.SkipWithError("the state is not near N MiB");
  std::size_t read = 0;
  for (auto _ : state) {
    auto w = fp::ops::WatchDir::open(dir.string(), 0);
    if (!w) {
      state.SkipWithError(w.error().to_string().c_str());
      break;
    }
    auto back = w->read_state();
    if (!back) state.SkipWithError(back.error().to_string().c_str());
    read = back ? back->events.size() : 0;
    benchmark::DoNotOptimize(back);
  }
  state.counters["MB"] = static_cast<double>(bytes) / 1e6;
  state.counters["events"] = static_cast<double>(read);
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_ReadWatchState)
    ->Arg(16)
    ->Arg(64)
    ->Unit(benchmark::kMillisecond)
    ->MinTime(2.0)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
