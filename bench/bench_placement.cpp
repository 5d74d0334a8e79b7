// SPDX-License-Identifier: GPL-2.0-or-later
// Placement decisions per policy on 16,384-host 3-level fat-trees (radix 64: 16 pods x 32
// leaves x 32 hosts): fabric 0 non-blocking and healthy; fabric 1 2:1 oversubscribed with 40
// leaf uplinks trained at 1x (seeded), so uplink penalties differ from leaf to leaf. 50 % and
// 70 % of hosts busy (uniformly at random, seeded), jobs of 8, 64, 512 and 2,048 nodes with
// TP 8 and TP 16 (8 GPUs per node). Every benchmark cycles through 32 different busy sets and
// reports the median and 99th percentile of a single decision (p50_us, p99_us). Preparing a
// Planner (once per fabric) is measured separately.
//
// Running jobs (issue #14): each busy set is also 2,000 running jobs, whose rings load the
// fabric on the planner's route model (ftree, as `--routes auto` chooses): the busy hosts in
// index order, cut into 2,000 runs at random points (seeded), each a job's ring. Every policy
// gets the same Traffic; the fabric policy decides on it, the baselines are measured on it.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <span>
#include <string>
#include <tuple>

#include "fabricplace/common/hostlist.hpp"
#include "fabricplace/fabric/json_io.hpp"
#include "fabricplace/fabric/spec.hpp"
#include "fabricplace/placement/rank_layout.hpp"
#include "fabricplace/policies/policies.hpp"

namespace fp = fabricplace;
using fp::policies::Policy;

namespace {

constexpr int kBusySets = 32;
constexpr int kRunningJobs = 2000;

std::string spec(int which) {
  if (which == 0) return "fat3:pods=16,leaves=32,down=32,up=32,spines=32,radix=64";
  std::string s = "fat3:pods=16,leaves=32,down=32,up=16,spines=16,radix=64";
  std::mt19937 rng(40);
  std::set<std::string> faults;
  while (faults.size() < 40) {
    char buf[64];
    std::snprintf(buf, sizeof buf, ",degrade=p%02u-leaf%02u:%u:w=1", 1 + rng() % 16u,
                  1 + rng() % 32u, 33 + rng() % 16u);
    faults.insert(buf);
  }
  for (const auto& f : faults) s += f;
  return s;
}

const fp::fabric::Fabric& fabric(int which) {
  static const fp::fabric::Fabric f0 = *fp::fabric::generate(spec(0));
  static const fp::fabric::Fabric f1 = *fp::fabric::generate(spec(1));
  return which == 0 ? f0 : f1;
}
const fp::policies::Planner& planner(int which) {
  static const fp::policies::Planner p0(fabric(0)), p1(fabric(1));
  return which == 0 ? p0 : p1;
}
const std::vector<fp::placement::NodeStates>& busy_sets(int percent) {
  static std::map<int, std::vector<fp::placement::NodeStates>> cache;
  auto& v = cache[percent];
  if (v.empty()) {
    std::mt19937 rng(static_cast<unsigned>(1000 + percent));
    const auto n = fabric(0).num_hosts();
    std::vector<std::uint32_t> order(n);
    for (std::uint32_t i = 0; i < n; ++i) order[i] = i;
    for (int k = 0; k < kBusySets; ++k) {
      auto s = fp::placement::all_free(fabric(0));
      std::shuffle(order.begin(), order.end(), rng);
      for (std::size_t i = 0; i < n * static_cast<std::size_t>(percent) / 100; ++i)
        s.state[order[i]] = fp::placement::HostState::kBusy;
      v.push_back(std::move(s));
    }
  }
  return v;
}

// The running jobs of each busy set on fabric `which` (see the top of the file).
const std::vector<std::unique_ptr<fp::placement::Traffic>>& running(int which, int percent) {
  static std::map<std::pair<int, int>, std::vector<std::unique_ptr<fp::placement::Traffic>>> cache;
  auto& v = cache[{which, percent}];
  if (v.empty()) {
    const auto& p = planner(which);
    std::mt19937 rng(static_cast<unsigned>(2000 + percent));
    for (const auto& s : busy_sets(percent)) {
      std::vector<fp::fabric::HostId> busy;
      for (std::uint32_t h = 0; h < s.state.size(); ++h)
        if (!s.free(fp::fabric::HostId{h})) busy.push_back(fp::fabric::HostId{h});
      std::set<std::size_t> cuts{0, busy.size()};
      while (cuts.size() < kRunningJobs + 1) cuts.insert(1 + rng() % (busy.size() - 1));
      auto t = std::make_unique<fp::placement::Traffic>(p.routes(), p.context().capacity,
                                                        &p.context().groups);
      for (auto it = cuts.begin(); std::next(it) != cuts.end(); ++it) {
        const std::span<const fp::fabric::HostId> ring(busy.data() + *it, *std::next(it) - *it);
        t->add(ring, *it + 1);
      }
      v.push_back(std::move(t));
    }
  }
  return v;
}

// Seconds on the steady clock; with BENCH_CPU_TIME=1 in the environment, this thread's CPU
// time instead (comparisons on a machine busy with other work).
double now() {
  static const bool cpu =
      std::getenv("BENCH_CPU_TIME") && std::string(std::getenv("BENCH_CPU_TIME")) == "1";
  if (cpu) {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Args: fabric, policy, busy percent, nodes, TP.
void BM_Place(benchmark::State& state) {
  const auto& p = planner(static_cast<int>(state.range(0)));
  const auto policy = static_cast<Policy>(state.range(1));
  const auto& sets = busy_sets(static_cast<int>(state.range(2)));
  const auto& loads = running(static_cast<int>(state.range(0)), static_cast<int>(state.range(2)));
  fp::placement::JobRequest job;
  job.nodes = static_cast<std::uint32_t>(state.range(3));
  job.tp = static_cast<std::uint32_t>(state.range(4));
  job.runner_up = false;  // as the plugin and the simulator place (no --explain)
  std::vector<double> us;
  std::size_t i = 0, feasible = 0, leaves = 0, split = 0;
  double slowdown = 0, others = 0, objective = 0;
  for (auto _ : state) {
    const auto k = i++ % sets.size();
    const auto& s = sets[k];
    const double t0 = now();
    auto r = p.place(job, s, policy, loads[k].get());
    const double t1 = now();
    benchmark::DoNotOptimize(r);
    state.SetIterationTime(t1 - t0);
    us.push_back((t1 - t0) * 1e6);
    feasible += r.feasible;
    leaves += r.measures.leaves;
    split += r.measures.tp_groups_split;
    slowdown += r.feasible ? r.measures.bandwidth.slowdown : 0;
    others += r.feasible ? r.measures.bandwidth.others : 0;
    objective += r.feasible ? fp::placement::score_of(p.context().weights, r.measures) : 0;
  }
  std::sort(us.begin(), us.end());
  state.counters["p50_us"] = us[us.size() / 2];
  state.counters["p99_us"] = us[std::min(us.size() - 1, us.size() * 99 / 100)];
  state.counters["feasible"] = static_cast<double>(feasible) / static_cast<double>(us.size());
  state.counters["leaves"] = static_cast<double>(leaves) / static_cast<double>(us.size());
  state.counters["tp_split"] = static_cast<double>(split) / static_cast<double>(us.size());
  state.counters["slowdown"] = slowdown / static_cast<double>(std::max<std::size_t>(feasible, 1));
  state.counters["others"] = others / static_cast<double>(std::max<std::size_t>(feasible, 1));
  // The fabric policy's objective (placement::score_of) of each policy's answer, mean over the
  // feasible decisions: what a narrower or wider search costs or buys, next to its time.
  state.counters["objective"] = objective / static_cast<double>(std::max<std::size_t>(feasible, 1));
  state.SetLabel(std::string(fp::policies::to_string(policy)));
}

void Args(benchmark::internal::Benchmark* b) {
  for (int fabric = 0; fabric < 2; ++fabric)
    for (int policy = 0; policy < 3; ++policy)
      for (int busy : {50, 70})
        for (int tp : {8, 16})
          for (int nodes : {8, 64, 512, 2048}) b->Args({fabric, policy, busy, nodes, tp});
}
BENCHMARK(BM_Place)
    ->Apply(Args)
    ->ArgNames({"fabric", "policy", "busy", "nodes", "tp"})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond)
    ->MinTime(std::getenv("BENCH_MIN_TIME") ? std::atof(std::getenv("BENCH_MIN_TIME")) : 0.3);

// The planner's own preparation, over an existing route model (building the model is
// BM_RouteModel in bench_sim).
void BM_PreparePlanner(benchmark::State& state) {
  const int which = static_cast<int>(state.range(0));
  for (auto _ : state)
    benchmark::DoNotOptimize(fp::policies::Planner(fabric(which), {}, &planner(which).routes()));
}
BENCHMARK(BM_PreparePlanner)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->MinTime(1.0);

// A rank file for an allocation scattered over the fabric (Slurm's choice, not ours): the
// ring order (TP-aware leaf order) and the Open MPI rankfile text with 8 ranks per node.
// Arg: hosts in the allocation, taken uniformly at random (seeded) from fabric 0.
void BM_RankFile(benchmark::State& state) {
  const auto ctx = fp::placement::host_map(planner(0).context());
  const auto n = static_cast<std::uint32_t>(state.range(0));
  std::mt19937 rng(77);
  std::vector<fp::fabric::HostId> all;
  for (std::uint32_t i = 0; i < fabric(0).num_hosts(); ++i) all.push_back(fp::fabric::HostId{i});
  std::shuffle(all.begin(), all.end(), rng);
  all.resize(n);
  std::size_t bytes = 0;
  // 8 ranks per 8-GPU node, TP 16 GPUs: groups of 16 ranks on 2 hosts.
  const auto shape = *fp::placement::JobShape::make({.nodes = n, .tp = 16u, .ranks_per_node = 8u});
  for (auto _ : state) {
    auto l = fp::placement::rank_layout(ctx, all, shape);
    const auto text =
        fp::placement::write_rank_file(ctx, *l, fp::placement::RankFormat::kOpenMpi, {});
    bytes = text.size();
    benchmark::DoNotOptimize(text.data());
  }
  state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_RankFile)->Arg(64)->Arg(2048)->Arg(16384)->Unit(benchmark::kMillisecond);

// The SPANK plugin's launch path on a 16,384-host fabric: parse the compact host map
// (`fabric export --format hostmap`), resolve a 2,000-node job's SLURM_JOB_NODELIST and lay
// out its ring (8 ranks per node, TP 16). Arg 0: parse only; arg 1: the whole path; arg 2:
// no host map, derived from the canonical fabric JSON instead (plugstack fabric= alone:
// read_json, build, prepare, host_map), the baseline arg 0 saves.
void BM_HostMapLaunch(benchmark::State& state) {
  const auto text = fp::placement::to_host_map_text(fp::placement::host_map(planner(0).context()));
  if (state.range(0) == 2) {
    const auto json = fp::fabric::to_json(fabric(0));
    for (auto _ : state) {
      fp::fabric::FabricBuilder b;
      if (!fp::fabric::read_json(json, "bench.json", b)) state.SkipWithError("read_json");
      auto f = b.build();
      auto m = fp::placement::host_map(fp::placement::prepare(*f));
      benchmark::DoNotOptimize(m.names.data());
    }
    state.counters["json_bytes"] = static_cast<double>(json.size());
    return;
  }
  std::vector<std::string> names;
  for (std::uint32_t i = 0; i < 2000; ++i)
    names.push_back(fabric(0).host(fp::fabric::HostId{i * 8}).name);
  const auto nodelist = fp::hostlist::compress(names);
  const auto shape =
      *fp::placement::JobShape::make({.nodes = 2000u, .tp = 16u, .ranks_per_node = 8u});
  for (auto _ : state) {
    auto m = fp::placement::parse_host_map(text, "bench.hostmap");
    if (state.range(0) == 1) {
      auto hosts = fp::placement::resolve_hosts(*m, nodelist, "SLURM_JOB_NODELIST");
      auto l = fp::placement::rank_layout(*m, *hosts, shape);
      benchmark::DoNotOptimize(l->hosts.data());
    }
    benchmark::DoNotOptimize(m->names.data());
  }
  state.counters["hostmap_bytes"] = static_cast<double>(text.size());
}
BENCHMARK(BM_HostMapLaunch)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

// NVLink domains (issue #17) on a GB200-class fabric: 16 scalable units of 72 hosts of 4 GPUs
// (4 racks of 18, one NVL72 domain each: 64 domains, 1,152 hosts, 4,608 GPUs), rail-optimised
// scale-out (4 rails, 72 uplinks per rail leaf). Arg 0: the same fabric without domains (the
// blocks are the rail groups: the baseline), 1: with them (the blocks are the domains). Busy
// 50 % and 70 % (32 seeded sets each, no running jobs), as a rack-scale cluster runs: whole
// racks taken by large jobs up to that share, and in half of the other racks 1 to 4 hosts
// taken by small jobs. Jobs of 1 node, 16 nodes with TP 64 (a group of 16 hosts), 36 nodes
// with TP 72 (groups of 18) and 144 nodes with EP 72.
const fp::fabric::Fabric& gb200(int domains) {
  static const fp::fabric::Fabric f0 =
      *fp::fabric::generate("rail:sus=16,hosts=72,rails=4,up=72,radix=144");
  static const fp::fabric::Fabric f1 =
      *fp::fabric::generate("rail:sus=16,hosts=72,rails=4,up=72,radix=144,nvl=18,gpus=4");
  return domains ? f1 : f0;
}
const fp::policies::Planner& gb200_planner(int domains) {
  static const fp::policies::Planner p0(gb200(0)), p1(gb200(1));
  return domains ? p1 : p0;
}
const std::vector<fp::placement::NodeStates>& gb200_busy(int percent) {
  static std::map<int, std::vector<fp::placement::NodeStates>> cache;
  auto& v = cache[percent];
  if (v.empty()) {
    std::mt19937 rng(static_cast<unsigned>(3000 + percent));
    const auto& f = gb200(1);
    const auto n = f.num_hosts();
    std::vector<std::uint32_t> racks(f.domains().size());
    for (std::uint32_t i = 0; i < racks.size(); ++i) racks[i] = i;
    for (int k = 0; k < kBusySets; ++k) {
      auto s = fp::placement::all_free(f);
      std::shuffle(racks.begin(), racks.end(), rng);
      std::size_t busy = 0, r = 0;
      for (; r < racks.size() && busy + 18 <= n * static_cast<std::size_t>(percent) / 100; ++r)
        for (auto h : f.domains()[racks[r]].hosts) {
          s.state[fp::fabric::idx(h)] = fp::placement::HostState::kBusy;
          ++busy;
        }
      for (; r < racks.size(); ++r) {
        if (rng() % 2) continue;
        auto hs = f.domains()[racks[r]].hosts;
        std::shuffle(hs.begin(), hs.end(), rng);
        for (std::size_t i = 0, m = 1 + rng() % 4; i < m; ++i)
          s.state[fp::fabric::idx(hs[i])] = fp::placement::HostState::kBusy;
      }
      v.push_back(std::move(s));
    }
  }
  return v;
}

// Args: domains, policy, busy percent, nodes, TP (GPUs), EP (GPUs, 0: none).
void BM_PlaceDomains(benchmark::State& state) {
  const int domains = static_cast<int>(state.range(0));
  const auto& p = gb200_planner(domains);
  const auto policy = static_cast<Policy>(state.range(1));
  const auto& sets = gb200_busy(static_cast<int>(state.range(2)));
  fp::placement::ShapeSpec spec;
  spec.nodes = static_cast<std::uint32_t>(state.range(3));
  spec.gpus_per_node = 4;
  spec.tp = static_cast<std::uint32_t>(state.range(4));
  if (state.range(5)) spec.ep = static_cast<std::uint32_t>(state.range(5));
  auto job = fp::placement::request(*fp::placement::JobShape::make(spec));
  job.runner_up = false;
  std::vector<double> us;
  std::size_t i = 0, feasible = 0, blocks = 0, split = 0;
  for (auto _ : state) {
    const auto& s = sets[i++ % sets.size()];
    const double t0 = now();
    auto r = p.place(job, s, policy);
    const double t1 = now();
    benchmark::DoNotOptimize(r);
    state.SetIterationTime(t1 - t0);
    us.push_back((t1 - t0) * 1e6);
    feasible += r.feasible;
    blocks += r.measures.leaves;
    // Groups that leave an NVLink domain, whichever blocks the planner uses.
    if (r.feasible) {
      const auto g = job.group_nodes();
      for (std::size_t k = 0; k + g <= r.hosts.size(); k += g)
        for (std::size_t m = k + 1; m < k + g; ++m)
          if (gb200(1).domain_of(r.hosts[m]) != gb200(1).domain_of(r.hosts[k])) {
            ++split;
            break;
          }
    }
  }
  std::sort(us.begin(), us.end());
  state.counters["p50_us"] = us[us.size() / 2];
  state.counters["p99_us"] = us[std::min(us.size() - 1, us.size() * 99 / 100)];
  state.counters["feasible"] = static_cast<double>(feasible) / static_cast<double>(us.size());
  state.counters["blocks"] = static_cast<double>(blocks) / static_cast<double>(us.size());
  state.counters["domain_split"] = static_cast<double>(split) / static_cast<double>(us.size());
  state.SetLabel(std::string(fp::policies::to_string(policy)) + (domains ? " domains" : ""));
}
void DomainArgs(benchmark::internal::Benchmark* b) {
  for (int domains = 0; domains < 2; ++domains)
    for (int policy : {0, 2})  // fabric, slurm-block
      for (int busy : {50, 70})
        for (const auto& [nodes, tp, ep] : {std::tuple{1, 4, 0}, std::tuple{16, 64, 0},
                                            std::tuple{36, 72, 0}, std::tuple{144, 4, 72}})
          b->Args({domains, policy, busy, nodes, tp, ep});
}
BENCHMARK(BM_PlaceDomains)
    ->Apply(DomainArgs)
    ->ArgNames({"domains", "policy", "busy", "nodes", "tp", "ep"})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond)
    ->MinTime(std::getenv("BENCH_MIN_TIME") ? std::atof(std::getenv("BENCH_MIN_TIME")) : 0.3);

}  // namespace

BENCHMARK_MAIN();
