// SPDX-License-Identifier: GPL-2.0-or-later
// slurm-tree against cases derived by hand from Slurm 22.05's source (select/cons_tres
// job_test.c: _eval_nodes_topo, _topo_choose_best_switch, _topo_compare_switches,
// _topo_add_dist; topology_tree.c for levels, parents and distances) and against what a real
// slurmctld did on these layouts (docs/placement.md, "The slurm-tree baseline"). The
// differential test against a live slurmctld arrives with the project's Slurm test cluster.
#include <gtest/gtest.h>

#include "fabricplace/common/hostlist.hpp"
#include "fabricplace/policies/policies.hpp"
#include "test_support.hpp"

namespace fabricplace::policies {
namespace {

placement::Placement place(const fabric::Fabric& f, std::uint32_t nodes, const std::string& free,
                           Policy pol = Policy::kSlurmTree) {
  placement::JobRequest j;
  j.nodes = nodes;
  auto s = placement::free_hosts(f, free);
  if (!s) throw test::TestSetupFailure(s.error().to_string());
  return Planner(f).place(j, *s, pol);
}

std::string hosts(const fabric::Fabric& f, const placement::Placement& p) {
  std::vector<std::string> names;
  for (auto h : p.hosts) names.push_back(f.host(h).name);
  return hostlist::compress(names);
}

class SlurmTree3 : public ::testing::Test {
 protected:
  // fat3_small: 4 pods x 4 leaves x 20 hosts; p01-leaf01 = node[001-020], p01-leaf02 =
  // node[021-040], p02-leaf01 = node[081-100], p02-leaf02 = node[101-120].
  fabric::Fabric f = test::load(test::fabric_file("fat3_small.ibnetdiscover.txt"));
};

TEST_F(SlurmTree3, Tables) {
  const auto ctx = placement::prepare(f);
  const auto t = slurm_tables(ctx.tree);
  // 16 leaves, 4 merged pod spines, 1 merged core: levels 0, 1, 2 as Slurm numbers them.
  ASSERT_EQ(t.n, 21u);
  EXPECT_EQ(t.level[0], 0);
  EXPECT_EQ(t.level[16], 1);
  EXPECT_EQ(t.level[20], 2);
  EXPECT_EQ(t.parent[0], 16u);
  EXPECT_EQ(t.parent[16], 20u);
  EXPECT_EQ(t.parent[20], 0u);  // listed by no switch: xcalloc's 0
  EXPECT_EQ(t.d(0, 1), 2u);     // leaf - pod spine - leaf
  EXPECT_EQ(t.d(0, 4), 4u);     // leaf - spine - core - spine - leaf
  EXPECT_EQ(t.d(0, 20), 2u);
}

// Observed on slurmctld 22.05 (DESIGN.md section 6): free (1, 2 | 4, 3), 6 nodes.
// The top switch is the core (the last switch of the highest level holding 6). Round 1
// (6 left): no leaf holds 6; p01-leaf02 beats p01-leaf01 (same parent, larger); p02-leaf01
// beats it because its pod spine (7) holds 6 and p01's (3) does not; p02-leaf02 loses to
// p02-leaf01 (same parent, smaller). Take 4. Round 2 (2 left): distances are 2 inside p02,
// 4 to p01. p01-leaf01 (1, far) first, p01-leaf02 holds 2 and wins; p02-leaf02 is nearer
// but both hold 2 and it is larger (3 > 2): tcs < 0, it loses. So 2 nodes come from the
// other pod's tighter leaf.
TEST_F(SlurmTree3, ObservedOtherPodsTighterLeaf) {
  const auto p = place(f, 6, "node[001,021-022,081-084,101-103]");
  ASSERT_TRUE(p.feasible) << p.reason;
  EXPECT_EQ(hosts(f, p), "node[021-022,081-084]");
  EXPECT_EQ(p.measures.pods, 2u);
  // The fabric policy keeps the job in p02: 4 + 2 of its 4 + 3.
  EXPECT_EQ(hosts(f, place(f, 6, "node[001,021-022,081-084,101-103]", Policy::kFabric)),
            "node[081-083,101-103]");
}

// Observed: free (3, 3 | 4, 2), 7 nodes, three leaves where two suffice. Round 1: no leaf,
// no spine holds 7 (6 and 6); comparing leaves of different pods climbs to equal spines and
// ties, so p01-leaf01 (first) stays. Round 2 (4 left): p01-leaf02 is nearer (2 < 4) and
// takes 3. Round 3 (1 left): both p02 leaves hold 1; the smaller, p02-leaf02, wins.
TEST_F(SlurmTree3, ObservedThreeLeavesWhereTwoSuffice) {
  const auto p = place(f, 7, "node[001-003,021-023,081-084,101-102]");
  ASSERT_TRUE(p.feasible) << p.reason;
  EXPECT_EQ(hosts(f, p), "node[001-003,021-023,101]");
  EXPECT_EQ(p.measures.leaves, 3u);
  const auto ours = place(f, 7, "node[001-003,021-023,081-084,101-102]", Policy::kFabric);
  EXPECT_EQ(ours.measures.leaves, 2u);
  EXPECT_EQ(hosts(f, ours), "node[001-003,081-084]");
}

// The nearest leaf wins when it compares at least as well: free p01-leaf01 10, p01-leaf02 3,
// p02-leaf01 20, p02-leaf02 6; 25 nodes. Round 1: p02's spine (26) holds the job, p01's (13)
// does not, so p02-leaf01 (the larger of p02) is taken whole. Round 2 (5 left): p02-leaf02
// (distance 2, holds 5 with 6) beats p01-leaf01 (distance 4, holds 5 with 10): nearer, and
// both hold the rest but it is smaller.
TEST_F(SlurmTree3, NearestLeafThatFits) {
  const auto p = place(f, 25, "node[001-010,021-023,081-100,101-106]");
  ASSERT_TRUE(p.feasible) << p.reason;
  EXPECT_EQ(hosts(f, p), "node[081-105]");
}

// Without p02-leaf02, p02's spine (20) no longer holds 25 and the spines compare by count:
// p02-leaf01 first again (20 > 13); then the rest from p01-leaf01, which holds 5 (p01-leaf02
// does not).
TEST_F(SlurmTree3, ClimbsToTheLargerSpine) {
  const auto p = place(f, 25, "node[001-010,021-023,081-100]");
  ASSERT_TRUE(p.feasible) << p.reason;
  EXPECT_EQ(hosts(f, p), "node[001-005,081-100]");
}

// Two levels: best fit. The smallest leaf that holds the job; on a tie, the first in
// topology.conf order; ranks in node index order.
TEST(SlurmTree2, BestFitAndFileOrder) {
  const auto f = test::load(test::fabric_file("fat2_L8.ibnetdiscover.txt"));
  // Free: leaf01 8, leaf02 5, leaf03 5, leaf04 12. 5 nodes: leaf02 (5, first of the two).
  EXPECT_EQ(hosts(f, place(f, 5, "node[001-008,021-025,041-045,061-072]")), "node[021-025]");
  // 6 nodes: leaf01 (8) is the smallest that holds 6.
  EXPECT_EQ(hosts(f, place(f, 6, "node[001-008,021-025,041-045,061-072]")), "node[001-006]");
  // 15 nodes: no leaf holds 15; the largest, leaf04 (12), then the smallest that holds 3:
  // leaf02 (5). Ranks follow node index: leaf02's hosts come first.
  const auto p = place(f, 15, "node[001-008,021-025,041-045,061-072]");
  EXPECT_EQ(hosts(f, p), "node[021-023,061-072]");
  EXPECT_EQ(f.host(p.hosts.front()).name, "node021");
}

// Rail-optimised: Slurm sees one virtual leaf per rail group (topology.conf export). Free:
// su01 12, su02 16, su03 12, su04 10; 11 nodes: su04 (10) cannot, su01 is the smallest that
// can (first of su01 and su03).
TEST(SlurmTree2, RailGroupsAreLeaves) {
  const auto f = test::load(test::fabric_file("rail_4su.ibnetdiscover.txt"));
  const auto p = place(f, 11, "node[001-012,021-036,041-052,061-070]");
  ASSERT_TRUE(p.feasible) << p.reason;
  EXPECT_EQ(hosts(f, p), "node[001-011]");
  EXPECT_EQ(p.leaves, (std::vector<std::string>{"su01"}));
}

}  // namespace
}  // namespace fabricplace::policies
