// SPDX-License-Identifier: GPL-2.0-or-later
// slurm-block (Slurm 24.11's eval_nodes_block) and slurm-tree's 24.11 variant, on cases a
// live slurmctld 24.11 decided (tests/slurm, differential_block and differential_tree: the
// same fabrics, busy nodes and jobs), node for node.
#include <gtest/gtest.h>

#include "fabricplace/common/hostlist.hpp"
#include "fabricplace/fabric/sources.hpp"
#include "fabricplace/policies/policies.hpp"
#include "test_support.hpp"

namespace fabricplace::policies {
namespace {

struct Lab {
  fabric::Fabric f;
  explicit Lab(const std::string& spec) : f(*fabric::load_fabric(spec)) {}
  placement::Placement place(std::uint32_t nodes, const std::string& busy,
                             std::optional<std::uint32_t> segment = 0,
                             Policy pol = Policy::kSlurmBlock,
                             SlurmSeries series = SlurmSeries::k2411) const {
    placement::JobRequest j;
    j.nodes = nodes;
    j.segment = segment;
    auto s = placement::busy_hosts(f, busy);
    if (!s) throw test::TestSetupFailure(s.error().to_string());
    return Planner(f, {}, nullptr, series).place(j, *s, pol);
  }
  std::string hosts(const placement::Placement& p) const {
    std::vector<std::string> names;
    for (auto h : p.hosts) names.push_back(f.host(h).name);
    return hostlist::compress(names);
  }
};

// 2 pods x 3 leaves x 4 hosts: blocks p01-leaf01..03, a placeholder, p02-leaf01..03, a
// placeholder; BlockSizes=4,16.
const Lab& padded() {
  static const Lab r("fat3:pods=2,leaves=3,down=4,up=4");
  return r;
}

TEST(SlurmBlock, IdleFabricTakesTheLaterPodAndItsFullestLeavesLast) {
  // 6 nodes need 2 base blocks: level 2 (a pod). Both pods hold 12: the later wins the tie.
  // Its leaves: none holds 6, so the fullest, the later on a tie (p02-leaf03), then 2 from
  // the later leaf that holds the rest (p02-leaf02).
  const auto p = padded().place(6, "");
  ASSERT_TRUE(p.feasible) << p.reason;
  EXPECT_EQ(padded().hosts(p), "node[017-018,021-024]");
  EXPECT_EQ(padded().hosts(padded().place(9, "")), "node[013,017-024]");
}

TEST(SlurmBlock, SegmentsArePlacedOneAfterTheOther) {
  EXPECT_EQ(padded().hosts(padded().place(12, "", 4u)), "node[013-024]");
  // Segments of 2 over a busy fabric: the llblock counts carried from one segment to the
  // next (Slurm's own quirk) decide where the later ones go.
  const auto p = padded().place(10, "node[003-005,009,013,015-016,019-021,023]", 2u);
  ASSERT_TRUE(p.feasible) << p.reason;
  EXPECT_EQ(padded().hosts(p), "node[001-002,006-007,010-011,017-018,022,024]");
  EXPECT_EQ(padded().hosts(padded().place(6, "node[001-002,005-006,009,017-019,021-023]", 2u)),
            "node[003-004,007-008,010-011]");
}

TEST(SlurmBlock, PendsWhereNoBlockOfItsLevelHoldsIt) {
  // Free (1, 3, 1 | 3, 1, 1): 10 free hosts, but neither pod holds 8.
  const auto p = padded().place(8, "node[001-003,006,009-010,012,014,017-018,020-022,024]");
  EXPECT_FALSE(p.feasible);
  EXPECT_EQ(p.reason,
            "no block of 4 base blocks has 8 usable nodes (topology/block keeps a job inside one "
            "block of the smallest size that fits); Slurm would leave the job pending");
  const auto big = padded().place(12, "", 6u);
  EXPECT_FALSE(big.feasible);
  EXPECT_EQ(big.reason,
            "--segment 6 is larger than a base block (4 nodes, BlockSizes' first value): Slurm "
            "does not support it (ESLURM_REQUESTED_TOPO_CONFIG_UNAVAILABLE)");
  EXPECT_EQ(padded().place(6, "", 4u).reason, "--segment 4 does not divide the job's 6 nodes");
  // Beyond INT_MAX: compared as given (as an int it was negative, and the reason said
  // "--segment -294967296 does not divide the job's 6 nodes").
  EXPECT_EQ(padded().place(6, "", 4000000000u).reason,
            "--segment 4000000000 is larger than a base block (4 nodes, BlockSizes' first value): "
            "Slurm does not support it (ESLURM_REQUESTED_TOPO_CONFIG_UNAVAILABLE)");
}

TEST(SlurmBlock, TheTpGroupIsTheSegmentUnlessOneIsGiven) {
  // TP groups of 3 nodes (24 GPUs, 8 per node): segments of 3, each inside one leaf, where
  // the job without a segment takes 4 + 2.
  placement::JobRequest j;
  j.nodes = 6;
  j.gpus_per_node = 8;
  j.tp = 24;
  const auto& f = padded().f;
  const auto states = *placement::busy_hosts(f, "");
  const Planner planner(f);
  EXPECT_EQ(padded().hosts(planner.place(j, states, Policy::kSlurmBlock)), "node[017-019,021-023]");
  j.segment = 0;  // none
  EXPECT_EQ(padded().hosts(planner.place(j, states, Policy::kSlurmBlock)), "node[017-018,021-024]");
}

// slurmctld 24.11 on fat3 2 pods x 2 leaves x 4 hosts, free (1, 2 | 4, 3), 6 nodes: it keeps
// the job in the second pod (4 + 2), where 22.05 (and our 22.05 variant) take 2 leaves of
// both pods' ends.
TEST(SlurmTree2411, KeepsTheJobInOnePodWhere2205Splits) {
  static const Lab r("fat3:pods=2,leaves=2,down=4,up=4");
  const std::string busy = "node[001-003,005-006,013]";
  EXPECT_EQ(r.hosts(r.place(6, busy, 0u, Policy::kSlurmTree, SlurmSeries::k2411)),
            "node[009-012,014-015]");
  EXPECT_EQ(r.hosts(r.place(6, busy, 0u, Policy::kSlurmTree, SlurmSeries::k2205)), "node[007-012]");
}

}  // namespace
}  // namespace fabricplace::policies
