// SPDX-License-Identifier: GPL-2.0-or-later
// Exact placements on the shared fabrics: the hosts chosen, the ring order, the TP groups,
// the explanation, and why not when no placement exists.
#include <gtest/gtest.h>

#include "fabricplace/common/hostlist.hpp"
#include "fabricplace/policies/policies.hpp"
#include "test_support.hpp"

namespace fabricplace::policies {
namespace {

using placement::JobRequest;
using placement::NodeStates;
using placement::Placement;

JobRequest job(std::uint32_t nodes, std::uint32_t tp = 0) {
  JobRequest j;
  j.nodes = nodes;
  j.tp = tp;
  return j;
}

std::vector<std::string> names(const fabric::Fabric& f, const std::vector<fabric::HostId>& hs) {
  std::vector<std::string> out;
  for (auto h : hs) out.push_back(f.host(h).name);
  return out;
}
// The ranks, host by host: "node001 node002 ...".
std::string ranks(const fabric::Fabric& f, const Placement& p) {
  std::string s;
  for (const auto& n : names(f, p.hosts)) s += (s.empty() ? "" : " ") + n;
  return s;
}
std::string expand(const std::string& hostlist) {
  std::string s;
  const auto all = hostlist::expand(hostlist);
  for (const auto& n : all.value()) s += (s.empty() ? "" : " ") + n;
  return s;
}
std::vector<std::string> groups(const fabric::Fabric& f, const Placement& p) {
  std::vector<std::string> out;
  for (const auto& g : p.tp_groups) out.push_back(hostlist::compress(names(f, g)));
  return out;
}
NodeStates free_only(const fabric::Fabric& f, const std::string& hostlist) {
  auto s = placement::free_hosts(f, hostlist);
  if (!s) throw test::TestSetupFailure(s.error().to_string());
  return *s;
}
using Leaves = std::vector<std::string>;

// A degraded link enters through its capacity, where the ring's routes cross it. over_L20 is
// 4:1 oversubscribed; one uplink of leaf01 (to spine04) trains at 1x (50 Gb/s). opensm's
// ftree sends leaf01's traffic to node036, 044, 052 and 060 of leaf02 over it (D-mod-K).
TEST(FabricPolicy, DegradedUplinkEntersThroughItsCapacity) {
  const auto f = test::load(test::fabric_file("over_L20-degraded.ibnetdiscover.txt"));
  const Planner planner(f);
  // Free: node001 (leaf01), node036 (leaf02), node065 (leaf03); one host per leaf, so a
  // 2-node job spans two leaves. first-fit takes node001 and node036: their ring crosses
  // the 1x uplink and runs at a quarter of a host link.
  const auto s = free_only(f, "node001,node036,node065");
  const auto ff = planner.place(job(2), s, Policy::kFirstFit);
  ASSERT_TRUE(ff.feasible) << ff.reason;
  EXPECT_EQ(ranks(f, ff), expand("node001,node036"));
  EXPECT_DOUBLE_EQ(ff.measures.bandwidth.slowdown, 4.0);
  EXPECT_EQ(placement::bottleneck_name(f, ff.measures.bandwidth), "leaf01[36] -> spine04[1]");
  EXPECT_EQ(ff.measures.bandwidth.before, 0);
  EXPECT_EQ(ff.measures.bandwidth.after, 1);
  // The fabric policy measures every pair of leaves and takes one whose ring runs at full
  // speed: leaf01 with leaf03 and leaf02 with leaf03 tie, and the pair without the faulty
  // uplink wins (the next job's routes may cross it).
  const auto p = planner.place(job(2), s, Policy::kFabric);
  ASSERT_TRUE(p.feasible) << p.reason;
  EXPECT_EQ(ranks(f, p), expand("node036,node065"));
  EXPECT_DOUBLE_EQ(p.measures.bandwidth.slowdown, 1.0);
  EXPECT_DOUBLE_EQ(ff.score - p.score, 1000 * 2 * (4.0 - 1));

  // On the whole idle fabric a 40-node ring needs two leaves and none of its two
  // inter-leaf edges would be routed over the 1x uplink: leaf01 scores as well as any, and
  // the tie goes to the leaves with sound uplinks.
  const auto all = placement::all_free(f);
  const auto whole = planner.place(job(40), all, Policy::kFabric);
  ASSERT_TRUE(whole.feasible) << whole.reason;
  EXPECT_EQ(whole.leaves, (Leaves{"leaf02", "leaf03"}));
  EXPECT_EQ(ranks(f, whole), expand("node[033-072]"));
  EXPECT_DOUBLE_EQ(whole.measures.bandwidth.slowdown, 1.0);
  EXPECT_EQ(whole.measures.leaves, 2u);
  EXPECT_EQ(whole.measures.pods, 1u);
  EXPECT_EQ(whole.measures.ring_inter_leaf, 2u);
  EXPECT_EQ(whole.measures.leftover, 24u);
  EXPECT_EQ(whole.measures.fresh_blocks, 1u);  // leaf02: 8 of its 32 hosts
  EXPECT_DOUBLE_EQ(whole.score, 2 * 100 + 50 + 2 * 10 + 24 + 20);
}

// A job that fits one leaf uses no uplink: the degraded uplink does not matter, best fit
// does. Free: leaf01 20, leaf02 12, leaf03 10. 10 nodes -> leaf03, the tightest fit.
TEST(FabricPolicy, BestFitInsideOneLeaf) {
  const auto f = test::load(test::fabric_file("over_L20-degraded.ibnetdiscover.txt"));
  const Planner planner(f);
  const auto s = free_only(f, "node[001-020,033-044,065-074]");
  for (Policy pol : {Policy::kFabric, Policy::kSlurmTree}) {
    const auto p = planner.place(job(10), s, pol);
    ASSERT_TRUE(p.feasible) << p.reason;
    EXPECT_EQ(p.leaves, (Leaves{"leaf03"})) << to_string(pol);
    EXPECT_EQ(ranks(f, p), expand("node[065-074]")) << to_string(pol);
    EXPECT_EQ(p.measures.leftover, 0u);
    EXPECT_EQ(p.measures.ring_inter_leaf, 0u);
    EXPECT_EQ(p.measures.bandwidth.slowdown, 1);
  }
  const auto p = planner.place(job(10), s, Policy::kFabric);
  ASSERT_TRUE(p.has_runner_up);
  EXPECT_EQ(p.runner_up_leaves, (Leaves{"leaf02"}));
  EXPECT_EQ(p.runner_up.leftover, 2u);
  EXPECT_EQ(planner.place(job(10), s, Policy::kFirstFit).leaves, (Leaves{"leaf01"}));
}

// TP 16 on 8-GPU nodes: groups of two hosts under one leaf. Free: leaf01 5, leaf02 5,
// leaf03 2. Four groups need two leaves; leaf01 + leaf02 hold 2 + 2. Slurm's tree plugin
// takes all 5 of leaf01 and ranks in index order, so one TP group straddles two leaves.
TEST(FabricPolicy, TpGroupsStayUnderOneLeaf) {
  const auto f = test::load(test::fabric_file("fat2_L8.ibnetdiscover.txt"));
  const Planner planner(f);
  const auto s = free_only(f, "node[001-005,021-025,041-042]");
  const auto p = planner.place(job(8, 16), s, Policy::kFabric);
  ASSERT_TRUE(p.feasible) << p.reason;
  EXPECT_EQ(ranks(f, p), expand("node[001-004,021-024]"));
  EXPECT_EQ(groups(f, p), (std::vector<std::string>{"node[001-002]", "node[003-004]",
                                                    "node[021-022]", "node[023-024]"}));
  EXPECT_EQ(p.measures.tp_groups_split, 0u);
  EXPECT_EQ(p.measures.leftover, 2u);

  const auto slurm = planner.place(job(8, 16), s, Policy::kSlurmTree);
  ASSERT_TRUE(slurm.feasible);
  EXPECT_EQ(ranks(f, slurm), expand("node[001-005,021-023]"));
  EXPECT_EQ(groups(f, slurm), (std::vector<std::string>{"node[001-002]", "node[003-004]",
                                                        "node[005,021]", "node[022-023]"}));
  EXPECT_EQ(slurm.measures.tp_groups_split, 1u);
  EXPECT_GT(slurm.score, p.score);
}

// Best fit across leaves: free leaf01 3, leaf02 4, leaf03 6; four TP-16 groups. Two leaves
// suffice (3 + 2 or 3 + 1 groups); leaf03 + leaf01 leaves one host behind, leaf03 + leaf02
// two. Ring: leaf01's hosts, then leaf03's.
TEST(FabricPolicy, BestFitAcrossLeaves) {
  const auto f = test::load(test::fabric_file("fat2_L8.ibnetdiscover.txt"));
  const auto p =
      Planner(f).place(job(8, 16), free_only(f, "node[001-003,021-024,041-046]"), Policy::kFabric);
  ASSERT_TRUE(p.feasible) << p.reason;
  EXPECT_EQ(p.leaves, (Leaves{"leaf01", "leaf03"}));
  EXPECT_EQ(ranks(f, p), expand("node[001-002,041-046]"));
  EXPECT_EQ(p.measures.leftover, 1u);
  ASSERT_TRUE(p.has_runner_up);
  EXPECT_EQ(p.runner_up_leaves, (Leaves{"leaf02", "leaf03"}));
  EXPECT_EQ(p.runner_up.leftover, 2u);
}

// Never a host on a degraded host link: node001's cable trains at 1x.
TEST(FabricPolicy, AvoidsUnhealthyHosts) {
  const auto f = test::gen("fat2:leaves=2,down=4,up=4,degrade=leaf01:1:w=1");
  const Planner planner(f);
  const auto all = placement::all_free(f);
  const auto p = planner.place(job(4), all, Policy::kFabric);
  ASSERT_TRUE(p.feasible) << p.reason;
  EXPECT_EQ(ranks(f, p), expand("node[005-008]"));
  EXPECT_EQ(p.measures.unhealthy_hosts, 0u);
  const auto slurm = planner.place(job(4), all, Policy::kSlurmTree);
  EXPECT_EQ(ranks(f, slurm), expand("node[001-004]"));
  EXPECT_EQ(slurm.measures.unhealthy_hosts, 1u);
  // Eight hosts need node001: the fabric policy says so.
  const auto none = planner.place(job(8), all, Policy::kFabric);
  EXPECT_FALSE(none.feasible);
  EXPECT_EQ(none.reason, "job needs 8 hosts; 7 usable (8 free, less 1 unhealthy or cut off)");
}

TEST(FabricPolicy, Exclusions) {
  const auto f = test::gen("fat2:leaves=3,down=4,up=4");
  const Planner planner(f);
  auto j = job(4);
  j.exclude = *placement::resolve_hosts(f, "node[001,006]", "--exclude");
  for (Policy pol : kPolicies) {
    const auto p = planner.place(j, placement::all_free(f), pol);
    ASSERT_TRUE(p.feasible);
    for (const auto& n : names(f, p.hosts)) EXPECT_TRUE(n != "node001" && n != "node006") << n;
  }
  EXPECT_EQ(ranks(f, planner.place(j, placement::all_free(f), Policy::kFabric)),
            expand("node[009-012]"));
}

// Rail-optimised: a TP group must stay in one rail group (scalable unit); the leaves named
// are the virtual leaves of the topology.conf export.
TEST(FabricPolicy, RailGroups) {
  const auto f = test::load(test::fabric_file("rail_4su.ibnetdiscover.txt"));
  const Planner planner(f);
  const auto s = free_only(f, "node[001-012,021-036,041-052,061-070]");
  const auto p = planner.place(job(24, 16), s, Policy::kFabric);
  ASSERT_TRUE(p.feasible) << p.reason;
  // Capacities in TP-16 pairs: su01 6, su02 8, su03 6, su04 5. Twelve pairs need two rail
  // groups: su01 + su03 hold exactly 12 and leave nothing behind (su02 + su04, the greedy
  // choice, would leave two hosts).
  EXPECT_EQ(p.leaves, (Leaves{"su01", "su03"}));
  EXPECT_EQ(ranks(f, p), expand("node[001-012,041-052]"));
  EXPECT_EQ(p.measures.leftover, 0u);
  EXPECT_EQ(p.measures.tp_groups_split, 0u);
  EXPECT_EQ(p.measures.ring_inter_leaf, 2u);
}

TEST(FabricPolicy, InfeasibleReasons) {
  const auto f = test::load(test::fabric_file("fat2_L8.ibnetdiscover.txt"));
  const Planner planner(f);
  const auto all = placement::all_free(f);
  EXPECT_EQ(planner.place(job(21, 168), all, Policy::kFabric).reason,
            "TP group needs 21 hosts under one leaf; the largest leaf, leaf01, has 20");
  EXPECT_EQ(planner.place(job(12), free_only(f, "node[001-010]"), Policy::kFabric).reason,
            "job needs 12 hosts; 10 usable (10 free; 150 busy)");
  EXPECT_EQ(
      planner.place(job(6, 16), free_only(f, "node[001-003,021-023]"), Policy::kFabric).reason,
      "job needs 3 TP groups of 2 hosts, each under one leaf; the usable hosts form only "
      "2 (leaf01 1, leaf02 1)");
  const auto f3 = test::load(test::fabric_file("fat3_small.ibnetdiscover.txt"));
  const auto p = Planner(f3).place(job(2, 16), free_only(f3, "node[021,121,161]"), Policy::kFabric);
  EXPECT_FALSE(p.feasible);
  EXPECT_EQ(p.reason,
            "TP group needs 2 hosts under one leaf; no leaf has 2 usable hosts; best leaf "
            "p01-leaf02 has 1");
  // The baselines only count hosts.
  EXPECT_EQ(planner.place(job(12), free_only(f, "node[001-010]"), Policy::kFirstFit).reason,
            "job needs 12 hosts; only 10 are free");
  EXPECT_EQ(planner.place(job(12), free_only(f, "node[001-010]"), Policy::kSlurmTree).reason,
            "no switch has 12 free, not excluded nodes under it (the most is 10); Slurm would "
            "leave the job "
            "pending");
}

// Three levels: a job that fits one pod stays there; one that cannot spans the fewest pods,
// and the ring crosses between pods exactly twice.
TEST(FabricPolicy, PodsOnThreeLevels) {
  const auto f = test::load(test::fabric_file("fat3_small.ibnetdiscover.txt"));
  const Planner planner(f);
  // Free: p01's leaves 20, 20, 5, 0; p02's 15, 15, 15, 15. Three leaves are the fewest for
  // 45 nodes and for 55. 45 fit in either pod with nothing left over: p01, the first. 55 fit
  // in no pod: p01's two full leaves and one of p02's.
  const auto s = free_only(f, "node[001-045,081-095,101-115,121-135,141-155]");
  const auto p45 = planner.place(job(45), s, Policy::kFabric);
  ASSERT_TRUE(p45.feasible) << p45.reason;
  EXPECT_EQ(p45.leaves, (Leaves{"p01-leaf01", "p01-leaf02", "p01-leaf03"}));
  EXPECT_EQ(p45.measures.pods, 1u);
  const auto p55 = planner.place(job(55), s, Policy::kFabric);
  ASSERT_TRUE(p55.feasible) << p55.reason;
  EXPECT_EQ(p55.measures.leaves, 3u);
  EXPECT_EQ(p55.measures.pods, 2u);
  EXPECT_EQ(p55.measures.ring_inter_leaf, 3u);
  EXPECT_EQ(p55.measures.ring_inter_pod, 2u);
  EXPECT_EQ(p55.leaves, (Leaves{"p01-leaf01", "p01-leaf02", "p02-leaf01"}));
  EXPECT_EQ(ranks(f, p55), expand("node[001-040,081-095]"));
}

// TP 2 on 8-GPU nodes: four TP groups per host, listed once each, in rank order.
TEST(FabricPolicy, TpSmallerThanANode) {
  const auto f = test::gen("fat2:leaves=2,down=4,up=4");
  const auto p = Planner(f).place(job(2, 2), placement::all_free(f), Policy::kFabric);
  ASSERT_TRUE(p.feasible) << p.reason;
  EXPECT_EQ(groups(f, p), (std::vector<std::string>{"node001", "node001", "node001", "node001",
                                                    "node002", "node002", "node002", "node002"}));
}

// A leaf without uplinks is cut off from the rest of the fabric: its hosts are split off
// (unhealthy), and the fabric policy does not use them even where they would fit.
TEST(FabricPolicy, LeafWithoutUplinks) {
  const auto f = test::gen("fat2:leaves=3,down=4,up=1,cut=leaf01:5");
  const Planner planner(f);
  // leaf01 = node[001-004] (no uplink), leaf02 = node[005-008], leaf03 = node[009-012].
  const auto s = free_only(f, "node[001-006,009-011]");
  const auto p = planner.place(job(4), s, Policy::kFabric);
  ASSERT_TRUE(p.feasible) << p.reason;
  EXPECT_EQ(p.leaves, (Leaves{"leaf02", "leaf03"}));
  EXPECT_EQ(p.measures.unhealthy_hosts, 0u);
  // Slurm's top switch is spine01, which does not reach leaf01: it stays out too. First-fit
  // takes leaf01, and with a fifth host its ring leaves leaf01, which has no uplink.
  const auto slurm = planner.place(job(4), s, Policy::kSlurmTree);
  EXPECT_EQ(slurm.leaves, (Leaves{"leaf02", "leaf03"}));
  EXPECT_EQ(planner.place(job(4), s, Policy::kFirstFit).measures.unhealthy_hosts, 4u);
  const auto ff = planner.place(job(5), s, Policy::kFirstFit);
  EXPECT_FALSE(ff.measures.bandwidth.routed);
  EXPECT_GE(ff.score, 1000 * 5 * (placement::kNoRoute - 1));
}

// Across pods, the pods term is part of the search (review finding): leaves of p03 have
// degraded uplinks; p02 + p04 hold the job with healthy uplinks and nothing left over.
TEST(FabricPolicy, BestSetAcrossPods) {
  const auto f = test::gen(
      "fat3:pods=4,leaves=2,down=3,up=3,spines=3,spine_up=2,degrade=p03-leaf02:6:w=1,"
      "degrade=p03-leaf01:4:w=1");
  const auto p = Planner(f).place(job(10), free_only(f, "node[001-006,008-023]"), Policy::kFabric);
  ASSERT_TRUE(p.feasible) << p.reason;
  EXPECT_EQ(p.leaves, (Leaves{"p02-leaf01", "p02-leaf02", "p04-leaf01", "p04-leaf02"}));
  EXPECT_DOUBLE_EQ(p.measures.bandwidth.slowdown, 1.0);
  EXPECT_EQ(p.measures.leftover, 0u);
}

// When every search agrees, the runner-up drops each chosen leaf in turn: here only
// dropping leaf04 (the cheapest) leaves a set that holds the job.
TEST(FabricPolicy, RunnerUpWhenSearchesAgree) {
  const auto f = test::gen("fat2:leaves=5,down=10,up=10");
  const auto p = Planner(f).place(job(31), free_only(f, "node[001-031,041-042]"), Policy::kFabric);
  ASSERT_TRUE(p.feasible) << p.reason;
  EXPECT_EQ(p.leaves, (Leaves{"leaf01", "leaf02", "leaf03", "leaf04"}));
  ASSERT_TRUE(p.has_runner_up);
  EXPECT_EQ(p.runner_up_leaves, (Leaves{"leaf01", "leaf02", "leaf03", "leaf05"}));
}

}  // namespace
}  // namespace fabricplace::policies
