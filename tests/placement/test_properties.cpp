// SPDX-License-Identifier: GPL-2.0-or-later
// Properties over seeded random fabrics, busy sets and jobs:
//  - the fabric policy finds a placement whenever one exists that keeps every TP group under
//    one leaf (rail group) on usable hosts, and then every TP group is under one leaf;
//  - it uses the fewest leaves possible (computed here independently);
//  - its ring order is a permutation of its hosts in which every leaf is one contiguous run,
//    so a ring over L > 1 leaves has exactly L inter-leaf edges;
//  - its score is the minimum over every set of L* leaves (brute force), whenever its
//    knapsack can run over the whole fabric; ring edges between pods = pods used when > 1;
//  - the baselines place iff enough hosts are free, in node index order.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <random>
#include <set>

#include "fabricplace/common/hostlist.hpp"
#include "fabricplace/policies/policies.hpp"
#include "test_support.hpp"

namespace fabricplace::policies {
namespace {

using fabric::HostId;
using fabric::idx;
using placement::HostState;

struct Case {
  std::string spec;
};

Case random_fabric(std::mt19937& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  switch (pick(0, 2)) {
    case 0: {
      const int leaves = pick(2, 8), down = pick(2, 12), up = pick(1, 8);
      std::string s = "fat2:leaves=" + std::to_string(leaves) + ",down=" + std::to_string(down) +
                      ",up=" + std::to_string(up);
      for (int k = pick(0, 2); k > 0; --k) {  // a few hosts on 1x cables
        char leaf[16];
        std::snprintf(leaf, sizeof leaf, "leaf%02d", pick(1, leaves));
        const std::string d =
            ",degrade=" + std::string(leaf) + ":" + std::to_string(pick(1, down)) + ":w=1";
        if (s.find(d) == std::string::npos) s += d;
      }
      return {s};
    }
    case 1: {
      const int pods = pick(2, 4), leaves = pick(2, 4), down = pick(2, 8);
      std::string s = "fat3:pods=" + std::to_string(pods) + ",leaves=" + std::to_string(leaves) +
                      ",down=" + std::to_string(down) + ",up=2,spines=2,spine_up=2";
      for (int k = pick(0, 3); k > 0; --k) {  // a few leaf uplinks trained at 1x
        char leaf[32];
        std::snprintf(leaf, sizeof leaf, "p%02d-leaf%02d", pick(1, pods), pick(1, leaves));
        const std::string d =
            ",degrade=" + std::string(leaf) + ":" + std::to_string(down + pick(1, 2)) + ":w=1";
        if (s.find(d) == std::string::npos) s += d;
      }
      return {s};
    }
    default:
      return {"rail:sus=" + std::to_string(pick(2, 5)) + ",hosts=" + std::to_string(pick(2, 8)) +
              ",rails=" + std::to_string(pick(1, 4))};
  }
}

// Fewest blocks whose capacities reach G (0: none).
std::uint32_t fewest_blocks(std::vector<std::uint32_t> cap, std::uint32_t G) {
  std::sort(cap.rbegin(), cap.rend());
  std::uint64_t sum = 0;
  for (std::uint32_t i = 0; i < cap.size(); ++i)
    if ((sum += cap[i]) >= G) return i + 1;
  return 0;
}

// usable_hosts (words of eight hosts over each block's run of ids, host by host elsewhere)
// against the test written plainly here, host by host: the same hosts and the same counts, on random fabrics, states, host health and exclusions, with blocks whose
// hosts are one run of ids and, by trading hosts between blocks, blocks whose are not.
TEST(PlacementProperties, UsableHostCountsMatchThePlainTest) {
  std::mt19937 rng(2027);
  int split_blocks = 0;
  for (int it = 0; it < 120; ++it) {
    const auto f = test::gen(random_fabric(rng).spec);
    auto c = placement::prepare(f);
    const std::size_t n = f.hosts().size();
    if (it % 2 == 1 && c.blocks.size() >= 2) {
      // Blocks 0 and 1 trade their first hosts: neither is one run of ids any more.
      auto& a = c.blocks.hosts[0];
      auto& b = c.blocks.hosts[1];
      std::swap(a.front(), b.front());
      std::sort(a.begin(), a.end());
      std::sort(b.begin(), b.end());
      for (auto h : a) c.blocks.of_host[idx(h)] = 0;
      for (auto h : b) c.blocks.of_host[idx(h)] = 1;
      split_blocks += 2;
    }
    placement::NodeStates st;
    st.state.resize(n);
    for (auto& x : st.state) x = static_cast<HostState>(rng() % 5);
    for (auto& g : c.healthy) g = rng() % 4 != 0;
    placement::JobRequest job;
    for (std::size_t h = 0; h < n; ++h)
      if (rng() % 9 == 0) job.exclude.push_back(HostId{static_cast<std::uint32_t>(h)});
    for (const bool healthy_only : {false, true}) {
      std::vector<std::uint8_t> want(n, 0);
      for (std::size_t h = 0; h < n; ++h)
        want[h] = st.state[h] == HostState::kFree && c.blocks.of_host[h] != fabric::kNone &&
                  (!healthy_only || c.healthy[h] != 0);
      for (auto h : job.exclude) want[idx(h)] = 0;
      ASSERT_EQ(placement::usable_hosts(c, job, st, healthy_only), want) << it;
      placement::BlockCounts counts;
      ASSERT_EQ(placement::usable_hosts(c, job, st, healthy_only, counts), want) << it;
      for (std::size_t k = 0; k < c.blocks.size(); ++k) {
        std::uint32_t usable = 0, free = 0;
        for (auto h : c.blocks.hosts[k]) {
          usable += want[idx(h)];
          free += st.state[idx(h)] == HostState::kFree;
        }
        ASSERT_EQ(counts.usable[k], usable) << "iteration " << it << ", block " << k;
        ASSERT_EQ(counts.free[k], free) << "iteration " << it << ", block " << k;
      }
    }
  }
  EXPECT_GT(split_blocks, 100);
}

TEST(PlacementProperties, RandomFabricsBusySetsAndJobs) {
  std::mt19937 rng(20261130);
  int feasible_seen = 0, multi_leaf_seen = 0, brute_checked = 0, infeasible_seen = 0,
      more_leaves_seen = 0;
  for (int iter = 0; iter < 150; ++iter) {
    const Case c = random_fabric(rng);
    SCOPED_TRACE("case " + std::to_string(iter) + ": " + c.spec);
    const auto f = test::gen(c.spec);
    const Planner planner(f);
    const auto& ctx = planner.context();
    const auto& b = ctx.blocks;
    for (int round = 0; round < 4; ++round) {
      placement::NodeStates st = placement::all_free(f);
      const double busy = std::uniform_real_distribution<double>(0, 0.8)(rng);
      for (auto& s : st.state) {
        const double r = std::uniform_real_distribution<double>(0, 1)(rng);
        s = r < busy ? HostState::kBusy : r < busy + 0.03 ? HostState::kDrained : HostState::kFree;
      }
      placement::JobRequest job;
      job.gpus_per_node = 8;
      const std::uint32_t g = std::array<std::uint32_t, 4>{1, 1, 2, 4}[rng() % 4];
      job.tp = 8 * g;
      job.nodes = g * std::uniform_int_distribution<std::uint32_t>(
                          1, std::max<std::uint32_t>(
                                 1, static_cast<std::uint32_t>(f.num_hosts() / g / 2)))(rng);
      SCOPED_TRACE("job " + std::to_string(job.nodes) + " nodes, TP groups of " +
                   std::to_string(g));
      ASSERT_TRUE(placement::validate(job));

      // Independent feasibility and L*.
      std::vector<std::uint32_t> cap(b.size(), 0);
      for (std::size_t k = 0; k < b.size(); ++k) {
        std::uint32_t usable = 0;
        for (HostId h : b.hosts[k]) usable += st.free(h) && ctx.healthy[idx(h)];
        cap[k] = usable / g;
      }
      const std::uint32_t Lstar = fewest_blocks(cap, job.groups());

      const auto p = planner.place(job, st, Policy::kFabric);
      ASSERT_EQ(p.feasible, Lstar != 0) << p.reason;
      // Without the runner-up (the plugin, the simulator): the same choice, no runner-up.
      {
        auto lean = job;
        lean.runner_up = false;
        const auto q = planner.place(lean, st, Policy::kFabric);
        EXPECT_EQ(q.hosts, p.hosts);
        EXPECT_EQ(q.score, p.score);
        EXPECT_FALSE(q.has_runner_up);
      }
      if (!p.feasible) {
        ++infeasible_seen;
        EXPECT_FALSE(p.reason.empty());
      } else {
        ++feasible_seen;
        ASSERT_EQ(p.hosts.size(), job.nodes);
        std::set<std::uint32_t> distinct;
        for (HostId h : p.hosts) {
          EXPECT_TRUE(st.free(h) && ctx.healthy[idx(h)]) << f.host(h).name;
          distinct.insert(idx(h));
        }
        EXPECT_EQ(distinct.size(), job.nodes);
        // TP groups: consecutive ranks, one block each.
        ASSERT_EQ(p.tp_groups.size(), job.groups());
        for (std::size_t gi = 0; gi < p.tp_groups.size(); ++gi) {
          ASSERT_EQ(p.tp_groups[gi].size(), g);
          for (std::size_t j = 0; j < g; ++j) {
            EXPECT_EQ(p.tp_groups[gi][j], p.hosts[gi * g + j]);
            EXPECT_EQ(b.of_host[idx(p.tp_groups[gi][j])], b.of_host[idx(p.tp_groups[gi][0])]);
          }
        }
        EXPECT_EQ(p.measures.tp_groups_split, 0u);
        // At least the fewest leaves (more only when bandwidth pays for them).
        std::set<std::uint32_t> used;
        for (HostId h : p.hosts) used.insert(b.of_host[idx(h)]);
        const auto L = static_cast<std::uint32_t>(used.size());
        EXPECT_GE(L, Lstar);
        EXPECT_EQ(p.measures.leaves, L);
        if (L > Lstar) ++more_leaves_seen;
        // Ring: each block one contiguous run (cyclically): L inter-block edges when L > 1.
        std::uint32_t edges = 0;
        for (std::size_t i = 0; i < p.hosts.size() && p.hosts.size() > 1; ++i)
          edges += b.of_host[idx(p.hosts[i])] != b.of_host[idx(p.hosts[(i + 1) % p.hosts.size()])];
        EXPECT_EQ(edges, L > 1 ? L : 0u);
        EXPECT_EQ(p.measures.ring_inter_leaf, edges);
        std::set<std::uint32_t> pods_used;
        for (auto k : used) pods_used.insert(b.pod[k]);
        EXPECT_EQ(p.measures.pods, pods_used.size());
        EXPECT_EQ(p.measures.ring_inter_pod, pods_used.size() > 1 ? pods_used.size() : 0u);
        if (L > 1) ++multi_leaf_seen;

        // Optimality: brute force over every set of L* and L* + 1 blocks (small fabrics),
        // each with the policy's host rule (smaller blocks give all their groups, the
        // largest the rest; usable hosts in index order; blocks by pod, then index) and
        // measured by evaluate(): none scores lower than the policy's choice.
        std::size_t eligible = 0;
        for (auto x : cap) eligible += x > 0;
        if (Lstar > 1 && Lstar <= 4 && eligible <= 12) {
          double best = std::numeric_limits<double>::infinity();
          std::string best_set;
          std::vector<std::uint32_t> pick;
          std::function<void(std::uint32_t, std::uint32_t)> rec = [&](std::uint32_t from,
                                                                      std::uint32_t size) {
            if (pick.size() == size) {
              std::uint64_t sum = 0;
              for (auto k : pick) sum += cap[k];
              if (sum < job.groups()) return;
              for (auto k : pick)
                if (ctx.block_up[k].empty() || b.component[k] != b.component[pick[0]]) return;
              // The policy's host rule: one block takes what the others leave (not wholly
              // free if possible, then the largest, the last on ties); the others give all.
              std::uint64_t total = 0;
              for (auto k : pick) total += cap[k];
              auto whole = [&](std::uint32_t k) {
                return std::all_of(b.hosts[k].begin(), b.hosts[k].end(),
                                   [&](HostId h) { return st.free(h); });
              };
              std::int64_t rest = -1;
              for (auto k : pick) {
                if (total - cap[k] >= job.groups()) continue;
                const auto r = static_cast<std::uint32_t>(rest);
                if (rest < 0 || (!whole(k) && whole(r)) ||
                    (whole(k) == whole(r) && cap[k] >= cap[r]))
                  rest = k;
              }
              if (rest < 0) return;  // a block to spare: the smaller sets cover it
              std::map<std::uint32_t, std::uint32_t> take;
              for (auto k : pick) take[k] = cap[k];
              take[static_cast<std::uint32_t>(rest)] = static_cast<std::uint32_t>(
                  job.groups() - (total - cap[static_cast<std::uint32_t>(rest)]));
              std::vector<HostId> hosts;
              for (auto [k, t] : take) {
                std::uint32_t want = t * g;
                for (HostId h : b.hosts[k])
                  if (want && st.free(h) && ctx.healthy[idx(h)]) hosts.push_back(h), --want;
              }
              auto q = placement::evaluate(ctx, job, st, placement::ring_order(b, hosts), "x");
              if (q.score < best - 1e-9) {
                best = q.score;
                best_set.clear();
                for (auto k : pick) best_set += b.name[k] + " ";
              }
              return;
            }
            for (std::uint32_t k = from; k < b.size(); ++k) {
              if (cap[k] == 0) continue;
              pick.push_back(k);
              rec(k + 1, size);
              pick.pop_back();
            }
          };
          rec(0, Lstar);
          if (Lstar < eligible) rec(0, Lstar + 1);
          EXPECT_LE(p.score, best + 1e-6) << "better: " << best_set << "; free: " << [&] {
            std::vector<std::string> names;
            for (std::uint32_t h = 0; h < f.num_hosts(); ++h)
              if (st.free(HostId{h})) names.push_back(f.host(HostId{h}).name);
            return hostlist::compress(names);
          }();
          ++brute_checked;
        }
      }

      // Baselines: feasible iff enough free hosts; node index order; distinct free hosts.
      std::uint32_t free = 0;
      for (std::uint32_t h = 0; h < f.num_hosts(); ++h)
        free += st.free(HostId{h}) && b.of_host[h] != fabric::kNone;
      for (Policy pol : {Policy::kSlurmTree, Policy::kFirstFit}) {
        const auto q = planner.place(job, st, pol);
        ASSERT_EQ(q.feasible, free >= job.nodes) << to_string(pol) << ": " << q.reason;
        if (!q.feasible) continue;
        ASSERT_EQ(q.hosts.size(), job.nodes);
        for (std::size_t i = 0; i < q.hosts.size(); ++i) {
          EXPECT_TRUE(st.free(q.hosts[i]));
          if (i) {
            EXPECT_LT(idx(q.hosts[i - 1]), idx(q.hosts[i])) << to_string(pol);
          }
        }
        // With no unhealthy host in play and no TP group split, no baseline's placement
        // scores better than ours.
        if (p.feasible &&
            std::all_of(q.hosts.begin(), q.hosts.end(),
                        [&](HostId h) { return ctx.healthy[idx(h)]; }) &&
            q.measures.tp_groups_split == 0) {
          EXPECT_LE(p.score, q.score + 1e-6) << to_string(pol);
        }
      }
    }
  }
  // The generator exercised what the properties are about.
  EXPECT_GT(feasible_seen, 200);
  EXPECT_GT(multi_leaf_seen, 60);
  EXPECT_GT(infeasible_seen, 20);
  EXPECT_GT(brute_checked, 100);
  std::printf(
      "feasible %d (multi-leaf %d, more than the fewest leaves %d), infeasible %d, brute-force "
      "checked %d\n",
      feasible_seen, multi_leaf_seen, more_leaves_seen, infeasible_seen, brute_checked);
}

}  // namespace
}  // namespace fabricplace::policies
