// SPDX-License-Identifier: GPL-2.0-or-later
// The bandwidth objective (issue #14): placements judged by the predicted communication
// slowdown on the route model in force, with the running jobs' load (placement::Traffic),
// the exact hosts each time.
#include <gtest/gtest.h>

#include <initializer_list>

#include "fabricplace/common/hostlist.hpp"
#include "fabricplace/fabric/health.hpp"
#include "fabricplace/placement/report.hpp"
#include "fabricplace/policies/policies.hpp"
#include "test_support.hpp"

namespace fabricplace::policies {
namespace {

using fabric::HostId;
using placement::JobRequest;
using placement::Placement;

JobRequest job(std::uint32_t nodes) {
  JobRequest j;
  j.nodes = nodes;
  return j;
}
std::string ranks(const fabric::Fabric& f, const std::vector<HostId>& hosts) {
  std::vector<std::string> names;
  for (auto h : hosts) names.push_back(f.host(h).name);
  return hostlist::compress(names);
}
std::vector<HostId> hosts(const fabric::Fabric& f, const std::string& list) {
  auto r = placement::resolve_hosts(f, list, "test");
  if (!r) throw test::TestSetupFailure(r.error().to_string());
  return *r;
}
placement::NodeStates free_only(const fabric::Fabric& f, const std::string& list) {
  auto s = placement::free_hosts(f, list);
  if (!s) throw test::TestSetupFailure(s.error().to_string());
  return *s;
}

// The host rows of a tiers CSV: per pod P (in order) `leaves` leaves P1, P2, ... of `hosts`
// hosts under one spine sP, every spine under `core`; hosts n001, n002, ... in that order.
std::string hosts_csv(std::initializer_list<const char*> pods, int leaves, int hosts,
                      const char* core) {
  std::string s = "host,leaf,spine,core\n";
  int n = 0;
  for (const char* pod : pods)
    for (int l = 1; l <= leaves; ++l)
      for (int h = 0; h < hosts; ++h) {
        char row[64];
        std::snprintf(row, sizeof row, "n%03d,%s%d,s%s,%s\n", ++n, pod, l, pod, core);
        s += row;
      }
  return s;
}

// A 3-level Ethernet Clos of two pods, each of one spine with `core_links` links to the core
// (one by default: the core is 16:1 of the leaves' uplinks): 4 leaves of 4 hosts per pod,
// 400G everywhere, leaves non-blocking. `core_a` is the rate of pod a's core link.
std::string two_pods(const std::string& core_a = "", int core_links = 1) {
  std::string s = hosts_csv({"a", "b"}, 4, 4, "c1");
  s += "links,lower,upper,count,rate\nhost,leaf,1,400G\nleaf,spine,4,400G\nspine,core," +
       std::to_string(core_links) + ",400G\n";
  if (!core_a.empty()) s += "sa,c1," + std::to_string(core_links) + "," + core_a + "\n";
  return s;
}
// Context::pod_scarcity of each pod that holds blocks, in block order.
std::vector<double> scarcity(const placement::Context& c) {
  std::vector<double> out;
  std::vector<std::uint32_t> seen;
  for (auto p : c.blocks.pod)
    if (std::find(seen.begin(), seen.end(), p) == seen.end()) {
      seen.push_back(p);
      out.push_back(c.pod_scarcity[p]);
    }
  return out;
}
fabric::Fabric csv(const std::string& text) {
  auto f = test::read_tree_source(text, true);
  if (!f) throw test::TestSetupFailure(f.error().to_string());
  return std::move(*f);
}

// Free: a1 whole (n001-004), a2 n005-006, a3 n009, a4 n013, b1 whole (n017-020). An 8-node
// job fits two leaves in two pods (a1 + b1: its ring crosses the core twice) or four leaves
// in pod a (no core link).
const char* kFree = "n[001-006,009,013,017-020]";

TEST(BandwidthObjective, IdleHealthyCoreTakesTheFewestLeaves) {
  // 16 core links per pod: the core is as thick as the leaves' uplinks.
  const auto f = csv(two_pods("", 16));
  const Planner planner(f);
  EXPECT_EQ(planner.routes().label(), "ecmp");
  EXPECT_EQ(scarcity(planner.context()), (std::vector<double>{1.0, 1.0}));
  const auto p = planner.place(job(8), free_only(f, kFree), Policy::kFabric);
  ASSERT_TRUE(p.feasible) << p.reason;
  EXPECT_EQ(ranks(f, p.hosts), "n[001-004,017-020]");
  EXPECT_EQ(p.leaves, (std::vector<std::string>{"a1", "b1"}));
  EXPECT_DOUBLE_EQ(p.measures.bandwidth.slowdown, 1.0);
  // Both 1.0: locality decides. 2 leaves, 2 pods, 2 crossings against 4, 1, 4.
  EXPECT_DOUBLE_EQ(p.measures.thin_core, 0.0);
  EXPECT_DOUBLE_EQ(p.score, 2 * 100 + 2 * 50 + 2 * 10);
  ASSERT_TRUE(p.has_runner_up);
  EXPECT_EQ(p.runner_up_leaves, (std::vector<std::string>{"a1", "a2", "a3", "a4"}));
  EXPECT_DOUBLE_EQ(p.runner_up_score, 4 * 100 + 50 + 4 * 10);
}

TEST(BandwidthObjective, IdleThinCoreKeepsTheJobInOnePod) {
  // One core link per pod, healthy and idle: the ring over a1 and b1 would run at full speed
  // (s = 1), but it crosses the fabric's thinnest tier, 16:1 of the leaves' uplinks, where
  // every job that spans pods competes. Each pod counts 16 times in the pods term then.
  const auto f = csv(two_pods());
  const Planner planner(f);
  EXPECT_EQ(scarcity(planner.context()), (std::vector<double>{16.0, 16.0}));
  const auto states = free_only(f, kFree);
  const auto p = planner.place(job(8), states, Policy::kFabric);
  ASSERT_TRUE(p.feasible) << p.reason;
  EXPECT_EQ(ranks(f, p.hosts), "n[001-006,009,013]");
  EXPECT_EQ(p.leaves, (std::vector<std::string>{"a1", "a2", "a3", "a4"}));
  EXPECT_DOUBLE_EQ(p.score, 4 * 100 + 50 + 4 * 10);
  ASSERT_TRUE(p.has_runner_up);
  EXPECT_EQ(p.runner_up_leaves, (std::vector<std::string>{"a1", "b1"}));
  EXPECT_DOUBLE_EQ(p.runner_up.bandwidth.slowdown, 1.0);
  EXPECT_DOUBLE_EQ(p.runner_up.thin_core, 2 * 15.0);
  EXPECT_DOUBLE_EQ(p.runner_up_score, 2 * 100 + 2 * 16 * 50 + 2 * 10);
  const auto text = placement::placement_text(planner.context(), job(8), p, true);
  EXPECT_NE(text.find("pods                    1             2 (core 16.00:1)\n"),
            std::string::npos)
      << text;
  // slurm-tree keeps it in one pod too: the thin tier is crossed no more often than it does.
  const auto st = planner.place(job(8), states, Policy::kSlurmTree);
  EXPECT_EQ(st.measures.pods, 1u);
}

TEST(BandwidthObjective, DegradedCoreLinkKeepsTheJobInOnePod) {
  // The fabric of IdleHealthyCoreTakesTheFewestLeaves (a1 + b1 there), with pod a's 16 core
  // links at 100G: a ring edge from a1 to b1 is two ecmp flows, each half the edge over a
  // 100G link, so a ring over a1 and b1 runs at half a host link.
  const auto f = csv(two_pods("100G", 16));
  const Planner planner(f);
  const auto states = free_only(f, kFree);
  const auto p = planner.place(job(8), states, Policy::kFabric);
  ASSERT_TRUE(p.feasible) << p.reason;
  EXPECT_EQ(ranks(f, p.hosts), "n[001-006,009,013]");
  EXPECT_EQ(p.leaves, (std::vector<std::string>{"a1", "a2", "a3", "a4"}));
  EXPECT_DOUBLE_EQ(p.measures.bandwidth.slowdown, 1.0);
  ASSERT_TRUE(p.has_runner_up);
  EXPECT_EQ(p.runner_up_leaves, (std::vector<std::string>{"a1", "b1"}));
  EXPECT_DOUBLE_EQ(p.runner_up.bandwidth.slowdown, 2.0);
  // --explain says why, in bandwidth.
  const auto text = placement::placement_text(planner.context(), job(8), p, true);
  EXPECT_NE(text.find("predicted slowdown      1.00          2.00\n"), std::string::npos) << text;
  EXPECT_NE(text.find("runner-up bottleneck: c1[3] -> sa[7] (100 Gb/s): 0 -> 0.5 ring edges; "
                      "the job's ring runs at 50 % of a host link\n"),
            std::string::npos)
      << text;
  // Measured like any ring: the two-pod set over the slow link.
  const auto two = placement::evaluate(planner.context(), job(8), states,
                                       hosts(f, "n[001-004,017-020]"), "x");
  EXPECT_DOUBLE_EQ(two.measures.bandwidth.slowdown, 2.0);
  EXPECT_EQ(placement::bottleneck_name(f, two.measures.bandwidth), "c1[3] -> sa[7]");
}

TEST(BandwidthObjective, RunningRingOnTheCoreKeepsTheJobInOnePod) {
  // Healthy core links, but a running job's ring (n007 in a2, n021 in b2) crosses them both
  // ways: a ring over a1 and b1 would share them, slowing itself and the running job to 2.
  // This core is 16:1, thin enough to keep the job in pod a when idle too (below), so what
  // the running ring changes here is the runner-up's measure; the case where the running
  // ring alone moves the job is LoadedCoreLinkKeepsTheJobInOnePodIdleCoreDoesNot.
  const auto f = csv(two_pods());
  const Planner planner(f);
  placement::Traffic traffic(planner.routes(), planner.context().capacity,
                             &planner.context().groups);
  const auto running = traffic.add(hosts(f, "n007,n021"), 4711, "4711");
  ASSERT_TRUE(running);
  EXPECT_DOUBLE_EQ(traffic.slowdown(*running), 1.0);
  const auto states = free_only(f, kFree);
  const auto p = planner.place(job(8), states, Policy::kFabric, &traffic);
  ASSERT_TRUE(p.feasible) << p.reason;
  EXPECT_EQ(ranks(f, p.hosts), "n[001-006,009,013]");
  EXPECT_DOUBLE_EQ(p.measures.bandwidth.slowdown, 1.0);
  EXPECT_EQ(p.measures.bandwidth.slowed, 0u);
  ASSERT_TRUE(p.has_runner_up);
  EXPECT_EQ(p.runner_up_leaves, (std::vector<std::string>{"a1", "b1"}));
  EXPECT_DOUBLE_EQ(p.runner_up.bandwidth.slowdown, 2.0);
  EXPECT_DOUBLE_EQ(p.runner_up.bandwidth.before, 1.0);
  EXPECT_DOUBLE_EQ(p.runner_up.bandwidth.after, 2.0);
  EXPECT_EQ(p.runner_up.bandwidth.slowed, 1u);
  EXPECT_DOUBLE_EQ(p.runner_up.bandwidth.others, 2 * (2.0 - 1.0));  // 2 nodes, 1 -> 2
  // Removing the job restores the idle fabric exactly: the runner-up then runs at full
  // speed, and only the thin core keeps the job in one pod (IdleThinCoreKeepsTheJobInOnePod).
  traffic.remove(*running);
  for (auto l : traffic.load()) EXPECT_EQ(l, 0u);
  const auto idle = planner.place(job(8), states, Policy::kFabric, &traffic);
  EXPECT_EQ(ranks(f, idle.hosts), "n[001-006,009,013]");
  EXPECT_DOUBLE_EQ(idle.runner_up.bandwidth.slowdown, 1.0);
}

// The case where the fewest leaves may win when idle: two pods of 5 leaves x 4 hosts,
// one 400G uplink per leaf, ONE 800G core link per pod (c = 5 x 400 / 800 = 2.5). Idle, an
// 8-node job takes a1 + b1 (two leaves over two pods) before a1-a4; a running ring between
// a5 and b3-b4 that puts two edges each way on both core links keeps it in pod a.
TEST(BandwidthObjective, LoadedCoreLinkKeepsTheJobInOnePodIdleCoreDoesNot) {
  std::string s = hosts_csv({"a", "b"}, 5, 4, "c1");
  s += "links,lower,upper,count,rate\nhost,leaf,1,400G\nleaf,spine,1,400G\nspine,core,1,800G\n";
  const auto f = csv(s);
  const Planner planner(f);
  EXPECT_EQ(scarcity(planner.context()), (std::vector<double>{2.5, 2.5}));
  // Free: a1 whole (n001-004), a2 n005-006, a3 n009, a4 n013, b1 whole (n021-024).
  const auto states = free_only(f, "n[001-006,009,013,021-024]");
  const auto idle = planner.place(job(8), states, Policy::kFabric);
  ASSERT_TRUE(idle.feasible) << idle.reason;
  EXPECT_EQ(idle.leaves, (std::vector<std::string>{"a1", "b1"}));
  EXPECT_EQ(ranks(f, idle.hosts), "n[001-004,021-024]");
  EXPECT_DOUBLE_EQ(idle.measures.bandwidth.slowdown, 1.0);
  placement::Traffic traffic(planner.routes(), planner.context().capacity,
                             &planner.context().groups);
  ASSERT_TRUE(traffic.add(hosts(f, "n017,n029,n018,n033"), 4711, "4711"));
  const auto p = planner.place(job(8), states, Policy::kFabric, &traffic);
  ASSERT_TRUE(p.feasible) << p.reason;
  EXPECT_EQ(p.leaves, (std::vector<std::string>{"a1", "a2", "a3", "a4"}));
  EXPECT_EQ(ranks(f, p.hosts), "n[001-006,009,013]");
  EXPECT_DOUBLE_EQ(p.measures.bandwidth.slowdown, 1.0);
  EXPECT_EQ(p.measures.bandwidth.slowed, 0u);
  ASSERT_TRUE(p.has_runner_up);
  EXPECT_EQ(p.runner_up_leaves, (std::vector<std::string>{"a1", "b1"}));
  EXPECT_DOUBLE_EQ(p.runner_up.bandwidth.slowdown, 1.5);  // 3 edges on 800G
}

// The same fabric, idle, with pod a's one core link trained at 200G instead of 800G: the
// fewest leaves (a1 + b1) would run the ring over it at half a host link, so the job takes
// four leaves of pod a; the explanation names the slow link and the runner-up's ring share.
TEST(BandwidthObjective, DegradedSingleCoreLinkKeepsTheJobInOnePod) {
  std::string s = hosts_csv({"a", "b"}, 5, 4, "c1");
  s += "links,lower,upper,count,rate\nhost,leaf,1,400G\nleaf,spine,1,400G\nspine,core,1,800G\n"
       "sa,c1,1,200G\n";
  const auto f = csv(s);
  const Planner planner(f);
  const auto states = free_only(f, "n[001-006,009,013,021-024]");
  const auto p = planner.place(job(8), states, Policy::kFabric);
  ASSERT_TRUE(p.feasible) << p.reason;
  EXPECT_EQ(p.leaves, (std::vector<std::string>{"a1", "a2", "a3", "a4"}));
  EXPECT_EQ(ranks(f, p.hosts), "n[001-006,009,013]");
  EXPECT_DOUBLE_EQ(p.measures.bandwidth.slowdown, 1.0);
  ASSERT_TRUE(p.has_runner_up);
  EXPECT_EQ(p.runner_up_leaves, (std::vector<std::string>{"a1", "b1"}));
  EXPECT_DOUBLE_EQ(p.runner_up.bandwidth.slowdown, 2.0);
  const auto text = placement::placement_text(planner.context(), job(8), p, true);
  EXPECT_NE(text.find("predicted slowdown      1.00          2.00\n"), std::string::npos) << text;
  EXPECT_NE(text.find("runner-up bottleneck: sa[2] -> c1[1] (200 Gb/s): 0 -> 1 ring edges; the "
                      "job's ring runs at 50 % of a host link\n"),
            std::string::npos)
      << text;
}

// A thin core (4 leaves of 4 hosts per pod, one core link per pod spine: 4:1) and a job that
// fits 4 leaves over 3 pods or 5 leaves over 2: nothing is slowed either way, and the set
// over fewer pods is found (the search proposes the fewest pods that hold the job, with as
// many leaves as that takes), so it crosses the core no more often than slurm-tree.
TEST(BandwidthObjective, ThinCoreFewerPodsWithMoreLeaves) {
  const auto f = test::gen("fat3:pods=4,leaves=4,down=4,up=4,spine_up=1");
  const Planner planner(f);
  const auto states = free_only(f, "node[001-010,013-014,017-022,025-026,033-036,049-052]");
  const auto p = planner.place(job(16), states, Policy::kFabric);
  ASSERT_TRUE(p.feasible) << p.reason;
  EXPECT_EQ(ranks(f, p.hosts), "node[001-010,013-014,017-020]");
  EXPECT_EQ(p.measures.leaves, 5u);
  EXPECT_EQ(p.measures.pods, 2u);
  EXPECT_DOUBLE_EQ(p.measures.bandwidth.slowdown, 1.0);
  const auto st = planner.place(job(16), states, Policy::kSlurmTree);
  EXPECT_LE(p.measures.ring_inter_pod, st.measures.ring_inter_pod);
  EXPECT_LE(p.score, st.score);
}

// Six pods of 4 leaves x 8 hosts, pod f's core 16:1, the others non-blocking. A 10-node job
// fits two leaves of any pod; inside one pod no core link is crossed, so pod f's thin core
// does not keep its tightest fit (f1 + f2: 6 + 4 free hosts) out of the search.
TEST(BandwidthObjective, ThinCoreDoesNotCostASetInsideThePod) {
  std::string s = hosts_csv({"a", "b", "c", "d", "e", "f"}, 4, 8, "core");
  s += "links,lower,upper,count,rate\nhost,leaf,1,400G\nleaf,spine,8,400G\n"
       "spine,core,32,400G\nsf,core,2,400G\n";
  const auto f = csv(s);
  const Planner planner(f);
  EXPECT_EQ(scarcity(planner.context()), (std::vector<double>{1, 1, 1, 1, 1, 16}));
  const auto states = free_only(f, "n[001-016,033-048,065-080,097-112,129-144,161-166,169-172]");
  const auto p = planner.place(job(10), states, Policy::kFabric);
  ASSERT_TRUE(p.feasible) << p.reason;
  EXPECT_EQ(p.leaves, (std::vector<std::string>{"f1", "f2"}));
  EXPECT_EQ(ranks(f, p.hosts), "n[161-166,169-172]");
  EXPECT_DOUBLE_EQ(p.score, 2 * 100 + 50 + 2 * 10);
}

// With a core as thick as the leaves' uplinks (16 links per pod), bandwidth alone decides:
// a running ring over a2 and b2 saturates its two core links, and the new job's ring
// hashed onto one of them would share it.
TEST(BandwidthObjective, RunningRingOnAThickCoreIsMeasuredNotGuessed) {
  const auto f = csv(two_pods("", 16));
  const Planner planner(f);
  placement::Traffic traffic(planner.routes(), planner.context().capacity,
                             &planner.context().groups);
  ASSERT_TRUE(traffic.add(hosts(f, "n007,n021"), 4711, "4711"));
  const auto p = planner.place(job(8), free_only(f, kFree), Policy::kFabric, &traffic);
  ASSERT_TRUE(p.feasible) << p.reason;
  EXPECT_DOUBLE_EQ(p.measures.bandwidth.slowdown, 1.0);
  EXPECT_EQ(p.measures.bandwidth.slowed, 0u);
  EXPECT_EQ(ranks(f, p.hosts), "n[001-004,017-020]");
}

// A 2-level fabric of 4 leaves of 4 hosts with ONE uplink each (4:1). A running job's ring
// over leaf01 and leaf02 loads their uplinks; a new job that needs two leaves avoids them.
TEST(BandwidthObjective, RunningRingOnALeafsUplinksIsAvoided) {
  const auto f = test::gen("fat2:leaves=4,down=4,up=1");
  const Planner planner(f);
  EXPECT_EQ(planner.routes().label(), "ftree");
  placement::Traffic traffic(planner.routes(), planner.context().capacity,
                             &planner.context().groups);
  ASSERT_TRUE(traffic.add(hosts(f, "node001,node005"), 1, "running"));
  // Free: leaf01 node002-004, leaf02 node006-008, leaf03 node009-011, leaf04 node013-015.
  const auto states = free_only(f, "node[002-004,006-008,009-011,013-015]");
  const auto idle = planner.place(job(6), states, Policy::kFabric);
  EXPECT_EQ(ranks(f, idle.hosts), "node[002-004,006-008]");
  const auto p = planner.place(job(6), states, Policy::kFabric, &traffic);
  ASSERT_TRUE(p.feasible) << p.reason;
  EXPECT_EQ(ranks(f, p.hosts), "node[009-011,013-015]");
  EXPECT_DOUBLE_EQ(p.measures.bandwidth.slowdown, 1.0);
  EXPECT_EQ(p.measures.bandwidth.slowed, 0u);
  // first-fit shares the loaded uplinks.
  const auto ff = planner.place(job(6), states, Policy::kFirstFit, &traffic);
  EXPECT_EQ(ranks(f, ff.hosts), "node[002-004,006-008]");
  EXPECT_DOUBLE_EQ(ff.measures.bandwidth.slowdown, 2.0);
  EXPECT_EQ(ff.measures.bandwidth.slowed, 1u);
}

// Two loaded leaves: running rings from leaf01 and leaf02 (node007-008, node015-016) to
// leaf08 fill both uplinks of each. An 8-node job fits leaf01 + leaf02 (6 free each: the
// fewest leaves, L = 2) but avoids both only on leaf03-06 (2 free each: L + 2). The repair
// rounds follow the bottleneck from leaf01 to leaf02, then fill without either.
TEST(BandwidthObjective, TwoLoadedLeavesAreAvoidedWithTwoLeavesMore) {
  const auto f = test::gen("fat2:leaves=8,down=8,up=2");
  const Planner planner(f);
  placement::Traffic traffic(planner.routes(), planner.context().capacity,
                             &planner.context().groups);
  std::uint64_t id = 1;
  for (const char* ring : {"node007,node057", "node008,node058", "node015,node059", "node016,node060"})
    ASSERT_TRUE(traffic.add(hosts(f, ring), id++, "running"));
  const auto states = free_only(f, "node[001-006,009-014,017-018,025-026,033-034,041-042]");
  const auto p = planner.place(job(8), states, Policy::kFabric, &traffic);
  ASSERT_TRUE(p.feasible) << p.reason;
  EXPECT_EQ(ranks(f, p.hosts), "node[017-018,025-026,033-034,041-042]");
  EXPECT_DOUBLE_EQ(p.measures.bandwidth.slowdown, 1.0);
  EXPECT_EQ(p.measures.bandwidth.slowed, 0u);
  // Idle, the fewest leaves.
  const auto idle = planner.place(job(8), states, Policy::kFabric);
  EXPECT_EQ(idle.leaves.size(), 2u);
}

// Pipeline stages (--pp 2, stages of 4 nodes) over leaf01 (2 free), leaf02 (4) and leaf03
// (2), each leaf with one uplink. Node i of stage 1 sends to node i of stage 2: with both in
// one leaf (node001 | node002, node005 | node006, ...) those pairs cross no uplink and only
// the two stages' rings do, 3 edges each: 6 edges over the uplinks, the busiest carrying 2.
// Stages aligned to leaves (leaf02 first: stage 1 inside it) cross them 10 times (4 edges on
// the busiest), the plain order 12 (6).
TEST(BandwidthObjective, PipelineStagePairsStayInsideBlocks) {
  const auto f = test::gen("fat2:leaves=4,down=4,up=1");
  const Planner planner(f);
  auto j = job(8);
  j.pp = 2;
  const auto states = free_only(f, "node[001-002,005-010]");
  const auto p = planner.place(j, states, Policy::kFabric);
  ASSERT_TRUE(p.feasible) << p.reason;
  std::string order;
  for (auto h : p.hosts) order += f.host(h).name + " ";
  EXPECT_EQ(order, "node001 node005 node007 node009 node002 node006 node008 node010 ");
  EXPECT_EQ(p.measures.stages_in_block, 0u);
  EXPECT_EQ(p.measures.pp_inter_leaf, 6u);
  EXPECT_DOUBLE_EQ(p.measures.bandwidth.slowdown, 2.0);
  const auto aligned = placement::evaluate(planner.context(), j, states,
                                           hosts(f, "node005,node006,node007,node008,node001,"
                                                    "node002,node009,node010"),
                                           "x");
  EXPECT_EQ(aligned.measures.stages_in_block, 1u);
  EXPECT_EQ(aligned.measures.pp_inter_leaf, 10u);
  EXPECT_DOUBLE_EQ(aligned.measures.bandwidth.slowdown, 4.0);
  const auto ff = planner.place(j, states, Policy::kFirstFit);
  EXPECT_EQ(ranks(f, ff.hosts), "node[001-002,005-010]");
  EXPECT_EQ(ff.measures.stages_in_block, 0u);
  EXPECT_EQ(ff.measures.pp_inter_leaf, 12u);
  EXPECT_DOUBLE_EQ(ff.measures.bandwidth.slowdown, 6.0);
  // The stages in the output.
  const auto text = placement::placement_text(planner.context(), j, p, false);
  EXPECT_NE(text.find("pipeline: 2 stages of 4 nodes, 0 inside one leaf; 6 edges of their "
                      "traffic between leaves (stage rings, stage to stage)\n"
                      "  stage 1: leaf01 node001 -> leaf02 node[005,007] -> leaf03 node009\n"
                      "  stage 2: leaf01 node002 -> leaf02 node[006,008] -> leaf03 node010\n"),
            std::string::npos)
      << text;
  // The job's traffic: each stage's ring and node i of stage 1 <-> node i of stage 2.
  const auto edges = placement::job_edges(hosts(f, "node[001-004]"), 2);
  std::vector<std::string> got;
  for (const auto& [x, y] : edges) got.push_back(f.host(x).name + ">" + f.host(y).name);
  EXPECT_EQ(got, (std::vector<std::string>{"node001>node002", "node002>node001", "node001>node003",
                                           "node003>node001", "node002>node004", "node004>node002",
                                           "node003>node004", "node004>node003"}));
}

// A pipeline's host fans out (its stage ring's edge and the sends to the next stage and
// back) over its own NIC whatever the placement: on an idle non-blocking fabric the forecast
// is full speed (it was 3.00 when each flow counted as a ring edge on the host link).
TEST(BandwidthObjective, PipelineFanOutOnTheHostLinkIsNotContention) {
  const auto f = test::gen("fat2:leaves=4,down=4,up=4");
  const Planner planner(f);
  auto j = job(8);
  j.pp = 4;
  const auto p = planner.place(j, placement::all_free(f), Policy::kFabric);
  ASSERT_TRUE(p.feasible) << p.reason;
  EXPECT_EQ(ranks(f, p.hosts), "node[001-008]");
  EXPECT_DOUBLE_EQ(p.measures.bandwidth.slowdown, 1.0);
  EXPECT_TRUE(p.measures.bandwidth.bottleneck != fabric::kNone);
}

// A large fabric (136 leaves of 2 hosts, one uplink each: more blocks than the search's
// kRefineBlocks), where the refinements run only where the best set is slowed. (This runs
// that path; what the refinements buy there is in the benchmark's objective column.) A running
// ring loads leaf01 and leaf02's uplinks: a 4-node job that can avoid them takes leaf03 and
// leaf04 at full speed; one that cannot (only hosts of those leaves and two others free) is
// slowed, and the refinements run before it is placed on the only hosts there are.
TEST(BandwidthObjective, LargeFabricAvoidsLoadedLeavesAndPlacesSlowedJobs) {
  const auto f = test::gen("fat2:leaves=136,down=2,up=1,radix=160");
  const Planner planner(f);
  placement::Traffic traffic(planner.routes(), planner.context().capacity,
                             &planner.context().groups);
  ASSERT_TRUE(traffic.add(hosts(f, "node001,node003"), 4711, "4711"));
  const auto avoid =
      planner.place(job(4), free_only(f, "node[002,004-008]"), Policy::kFabric, &traffic);
  ASSERT_TRUE(avoid.feasible) << avoid.reason;
  EXPECT_EQ(ranks(f, avoid.hosts), "node[005-008]");
  EXPECT_DOUBLE_EQ(avoid.measures.bandwidth.slowdown, 1.0);
  EXPECT_EQ(avoid.measures.bandwidth.slowed, 0u);
  const auto slowed =
      planner.place(job(4), free_only(f, "node[002,004,010,012]"), Policy::kFabric, &traffic);
  ASSERT_TRUE(slowed.feasible) << slowed.reason;
  EXPECT_EQ(ranks(f, slowed.hosts), "node[002,004,010,012]");
  EXPECT_DOUBLE_EQ(slowed.measures.bandwidth.slowdown, 2.0);
  EXPECT_EQ(slowed.measures.bandwidth.slowed, 1u);
}

// --compare's table stays in columns when a cell is wider than its column (a core ratio from
// assumed link figures is 37 characters): every row's cells start where the header's do.
TEST(Report, CompareColumnsWidenForLongCells) {
  const auto f = test::gen("fat2:leaves=2,down=4,up=4");
  const auto c = placement::prepare(f);
  placement::Placement wide, narrow;
  wide.policy = "fabric";
  narrow.policy = "slurm-tree";
  wide.feasible = narrow.feasible = true;
  wide.measures.pods = 2;
  wide.measures.thin_core = 3.0;
  wide.measures.core_assumed = true;
  narrow.measures.pods = 1;
  const auto text = placement::compare_text(c, job(2), {wide, narrow});
  const auto header = text.substr(0, text.find('\n'));
  const auto col = header.find("slurm-tree");
  ASSERT_NE(col, std::string::npos) << text;
  EXPECT_GT(col, 24u + 37u) << text;  // the fabric column widened past its 16
  std::size_t rows = 0;
  for (std::size_t at = 0, end; (end = text.find('\n', at)) != at; at = end + 1, ++rows) {
    const auto line = text.substr(at, end - at);
    ASSERT_GT(line.size(), col) << line;
    EXPECT_EQ(line[col - 1], ' ') << line;
    EXPECT_NE(line[col], ' ') << line;
  }
  EXPECT_EQ(rows, 14u) << text;
  EXPECT_NE(text.find("pods                    2 (core 2.50:1, assumed link figures) 1"),
            std::string::npos)
      << text;
}

// The thinnest tier (the simulator's thin_tier_crossings): the leaves' uplinks on a 2:1
// two-level fat-tree; the pods' core links when the pod spines have fewer core uplinks than
// leaf ports (the core's share compounds the leaves'); the leaves when both are equally thin.
TEST(ThinnestTier, IsTheTierWithTheLeastCapacityPerHost) {
  struct Case {
    const char* spec;
    int tier;
    double ratio;
  };
  // Leaves 4:1 and a non-blocking core above them: both tiers carry a quarter of the hosts'
  // rate, the lower one counts. With one core uplink per pod spine the core carries 1/16.
  const Case cases[] = {
      {"fat2:leaves=4,down=4,up=2", 1, 0.5},
      {"fat3:pods=2,leaves=4,down=16,up=16,spine_up=2", 2, 0.5},
      {"fat3:pods=2,leaves=4,down=4,up=4", 1, 1.0},
      {"fat3:pods=2,leaves=4,down=16,up=4,spine_up=4", 1, 0.25},
      {"fat3:pods=2,leaves=4,down=16,up=4,spine_up=1", 2, 0.0625},
  };
  for (const auto& c : cases) {
    const auto f = test::gen(c.spec);
    const Planner planner(f);
    const auto t = placement::thinnest_tier(planner.context());
    EXPECT_EQ(t.tier, c.tier) << c.spec;
    EXPECT_DOUBLE_EQ(t.ratio, c.ratio) << c.spec;
  }
}

TEST(Traffic, LoadsAndSlowdownsAreExact) {
  const auto f = test::gen("fat2:leaves=4,down=4,up=1");
  const Planner planner(f);
  placement::Traffic t(planner.routes(), planner.context().capacity);
  const auto a = t.add(hosts(f, "node001,node005"), 1, "a");
  const auto b = t.add(hosts(f, "node002,node006"), 2, "b");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(t.size(), 2u);
  // Both rings cross leaf01's and leaf02's single uplinks both ways: 2 edges on each.
  EXPECT_DOUBLE_EQ(t.slowdown(*a), 2.0);
  EXPECT_DOUBLE_EQ(t.slowdown(*b), 2.0);
  EXPECT_EQ(t.id(*b), "b");
  EXPECT_EQ(t.nodes(*a), 2u);
  t.remove(*a);
  EXPECT_DOUBLE_EQ(t.slowdown(*b), 1.0);
  const auto c = t.add(hosts(f, "node003,node007,node011"), 3, "c");
  ASSERT_TRUE(c);
  EXPECT_EQ(*c, *a);  // the handle is reused
  EXPECT_DOUBLE_EQ(t.slowdown(*b), 2.0);
  t.remove(*b);
  t.remove(*c);
  EXPECT_EQ(t.size(), 0u);
  for (auto l : t.load()) EXPECT_EQ(l, 0u);
}

// A leaf uplink lost since the previous discovery leaves its pod as thin as before (it
// carried the pod's share like the others), as a degraded one does; one that was never
// there (no previous discovery says so) is simply not built.
TEST(BandwidthObjective, ALostLeafUplinkDoesNotMakeItsPodThicker) {
  const std::string spec = "fat3:pods=2,leaves=2,down=2,up=2,spine_up=1";
  const auto before = test::gen(spec);
  // 2 leaves x 2 uplinks over 2 core links per pod.
  EXPECT_EQ(scarcity(Planner(before).context()), (std::vector<double>{2.0, 2.0}));
  const auto cut = test::gen(spec + ",cut=p01-leaf01:3");
  EXPECT_EQ(scarcity(Planner(cut).context()), (std::vector<double>{1.5, 2.0}));
  fabric::FabricBuilder b("after");
  ASSERT_TRUE(b.merge(cut));
  ASSERT_EQ(fabric::note_lost_links(b, before), 1u);
  const auto f = test::build(b);
  ASSERT_EQ(f.topology().lost_links.size(), 1u);
  const Planner planner(f);
  EXPECT_EQ(scarcity(planner.context()), (std::vector<double>{2.0, 2.0}));
  EXPECT_EQ(planner.context().uplink_why[0], "2.00:1 oversubscribed, 1 lost uplink");
}

// The group values a Traffic keeps current as jobs come and go (what the fabric policy's
// estimate reads) are exactly edge_slowdown over the load now, for every route model.
TEST(Traffic, TrackedGroupSlowdownsEqualRecomputed) {
  const auto f = test::gen("fat3:pods=2,leaves=4,down=4,up=2,spine_up=1");
  for (auto kind : {routes::Kind::kFtree, routes::Kind::kEcmp, routes::Kind::kAdaptive}) {
    routes::Spec spec;
    spec.automatic = false;
    spec.kind = kind;
    auto m = routes::make_model(f, spec);
    ASSERT_TRUE(m) << m.error().to_string();
    const Planner planner(f, {}, m->get());
    const auto& ctx = planner.context();
    const auto& g = ctx.groups;
    // Block uplinks up and down, then both pods' links to the core up and down.
    ASSERT_EQ(g.size(), 2 * ctx.blocks.size() + 2 * ctx.tier2_up.size());
    ASSERT_EQ(ctx.tier2_up.size(), 2u);
    auto same = [&](std::size_t i, const std::vector<routes::DirLink>& want) {
      const auto got = g.links_of(i);
      return std::vector<routes::DirLink>(got.begin(), got.end()) == want;
    };
    for (std::size_t k = 0; k < ctx.blocks.size(); ++k) {
      EXPECT_TRUE(same(ctx.block_group(k, false), ctx.block_up[k])) << k;
      EXPECT_TRUE(same(ctx.block_group(k, true), ctx.block_down[k])) << k;
    }
    for (std::size_t t = 0; t < 2; ++t) {
      EXPECT_TRUE(same(ctx.tier2_group(t, false), ctx.tier2_up[t])) << t;
      EXPECT_TRUE(same(ctx.tier2_group(t, true), ctx.tier2_down[t])) << t;
    }
    EXPECT_EQ(g.fluid, kind == routes::Kind::kAdaptive);
    placement::Traffic t(**m, ctx.capacity, &g);
    EXPECT_EQ(t.groups(), &g);
    std::size_t loaded = 0;
    auto check = [&](const char* when) {
      loaded = 0;
      for (std::uint32_t i = 0; i < g.size(); ++i) {
        const double want = placement::edge_slowdown(ctx.capacity, g.fluid, t.load(), g.links_of(i));
        EXPECT_DOUBLE_EQ(t.group_slowdown(i), want) << to_string(kind) << " " << when << " group " << i;
        loaded += want > 1 ? 1 : 0;
      }
    };
    check("idle");
    const auto a = t.add(hosts(f, "node001,node005,node017,node021"), 1, "a");
    const auto b = t.add(hosts(f, "node002,node018"), 2, "b");
    const auto c = t.add(hosts(f, "node003,node007,node011,node015"), 3, "c");
    ASSERT_TRUE(a && b && c);
    check("three jobs");
    EXPECT_GT(loaded, 0u) << to_string(kind);  // the check compares loaded groups too
    t.remove(*b);
    check("b removed");
    t.remove(*a);
    t.remove(*c);
    check("all removed");
    EXPECT_EQ(loaded, 0u);
    for (std::uint32_t i = 0; i < g.size(); ++i) EXPECT_DOUBLE_EQ(t.group_slowdown(i), g.idle[i]);
  }
}

}  // namespace
}  // namespace fabricplace::policies
