// SPDX-License-Identifier: GPL-2.0-or-later
// The job's shape: JobShape::make, every rule with its exact message, what follows from a
// shape (hosts per group, groups per host, ranks per group), and measure_ring.
#include <gtest/gtest.h>

#include "fabricplace/placement/job_shape.hpp"
#include "fabricplace/placement/placement.hpp"
#include "test_support.hpp"

namespace fabricplace::placement {
namespace {

struct Given {
  std::optional<std::uint32_t> nodes = std::nullopt;
  std::uint32_t gpn = 8;
  std::optional<std::uint32_t> tp = std::nullopt;
  std::uint32_t pp = 1;
  std::optional<std::uint32_t> k = std::nullopt;
};

ShapeSpec spec(const Given& g) {
  ShapeSpec s;
  s.nodes = g.nodes;
  s.gpus_per_node = g.gpn;
  s.tp = g.tp;
  s.pp = g.pp;
  s.ranks_per_node = g.k;
  return s;
}

std::string error_of(const Given& g, const ShapeNames& names = {}) {
  auto s = JobShape::make(spec(g), names);
  if (s) return "";
  EXPECT_EQ(s.error().code, ErrorCode::kUsage);
  EXPECT_TRUE(s.error().file.empty());
  return s.error().message;
}

JobShape made(const Given& g) {
  auto s = JobShape::make(spec(g));
  EXPECT_TRUE(s) << (s ? "" : s.error().message);
  return s ? *s : JobShape{};
}

TEST(JobShape, EveryRuleNamesItsNumbers) {
  struct Case {
    Given given;
    ShapeRule rule;
    const char* message;
  } cases[] = {
      {{.nodes = 0}, ShapeRule::kNoNodes, "--nodes must be at least 1"},
      {{.nodes = 4, .gpn = 0}, ShapeRule::kNoGpus, "--gpus-per-node must be at least 1"},
      {{.nodes = 4, .tp = 0}, ShapeRule::kNoTp, "--tp must be at least 1"},
      {{.nodes = 4, .pp = 0}, ShapeRule::kNoPp, "--pp must be at least 1"},
      {{.nodes = 4, .k = 0}, ShapeRule::kNoRanks, "--tasks-per-node must be at least 1"},
      {{.nodes = 4, .k = 4097}, ShapeRule::kTooManyRanks, "--tasks-per-node 4097: at most 4096"},
      {{.nodes = 4, .tp = 12},
       ShapeRule::kTpPartialNodes,
       "--tp 12 with 8 GPUs per node: a TP group larger than a node must span whole nodes (a "
       "multiple of 8)"},
      {{.nodes = 4, .tp = 3},
       ShapeRule::kTpSplitsNode,
       "--tp 3 with 8 GPUs per node: a TP group smaller than a node must divide it (8 is not a "
       "multiple of 3)"},
      {{.nodes = 3, .tp = 16},
       ShapeRule::kTpDoesNotTile,
       "--tp 16 does not tile the job: 3 nodes x 8 GPUs per node = 24 GPUs, not a multiple of "
       "16"},
      {{.nodes = 6, .tp = 8, .pp = 4},
       ShapeRule::kPpDoesNotTile,
       "--pp 4 with --tp 8 does not tile the job: 48 GPUs are not a multiple of TP x PP = 32"},
      {{.nodes = 3, .tp = 4, .pp = 2},
       ShapeRule::kPpSplitsNodes,
       "--pp 2: 3 nodes do not split into equal pipeline stages"},
      // --tp left out: the message does not name it.
      {{.nodes = 3, .pp = 2},
       ShapeRule::kPpSplitsNodes,
       "--pp 2: 3 nodes do not split into equal pipeline stages"},
      {{.nodes = 4, .tp = 4, .k = 3},
       ShapeRule::kTpNotWholeRanks,
       "--tp 4 with 8 GPUs per node and 3 tasks per node: a TP group would be 4 x 3 / 8 tasks, "
       "not a whole number, and 3 tasks do not split a node into whole TP groups"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(first_broken_rule(spec(c.given)), c.rule) << c.message;
    EXPECT_EQ(error_of(c.given), c.message);
  }
}

TEST(JobShape, RulesInOrder) {
  // Several rules broken: the first in ShapeRule order is the one reported.
  EXPECT_EQ(error_of({.nodes = 0, .gpn = 0}), "--nodes must be at least 1");
  EXPECT_EQ(error_of({.nodes = 3, .tp = 12}),
            "--tp 12 with 8 GPUs per node: a TP group larger than a node must span whole nodes "
            "(a multiple of 8)");
  EXPECT_EQ(error_of({.nodes = 3, .tp = 16, .pp = 2}),
            "--tp 16 does not tile the job: 3 nodes x 8 GPUs per node = 24 GPUs, not a multiple "
            "of 16");
}

TEST(JobShape, WithoutANodeCountOnlyTheNodeFreeRulesRun) {
  // A submission whose node count Slurm decides: TP 16 tiles some count, so it is accepted.
  const auto s = made({.tp = 16});
  EXPECT_EQ(s.nodes, 0u);
  EXPECT_EQ(s.hosts_per_group(), 2u);
  EXPECT_EQ(first_broken_rule(spec({.tp = 16, .pp = 3})), ShapeRule::kOk);
  EXPECT_EQ(error_of({.tp = 12}),
            "--tp 12 with 8 GPUs per node: a TP group larger than a node must span whole nodes "
            "(a multiple of 8)");
}

TEST(JobShape, MessagesUseTheCallersNames) {
  ShapeNames plugin;
  plugin.tp = "--fabric-tp";
  plugin.ranks = "ranks";
  EXPECT_EQ(error_of({.nodes = 3, .gpn = 2, .tp = 4}, plugin),
            "--fabric-tp 4 does not tile the job: 3 nodes x 2 GPUs per node = 6 GPUs, not a "
            "multiple of 4");
  EXPECT_EQ(error_of({.nodes = 1, .tp = 4, .k = 3}, plugin),
            "--fabric-tp 4 with 8 GPUs per node and 3 ranks per node: a TP group would be 4 x 3 "
            "/ 8 ranks, not a whole number, and 3 ranks do not split a node into whole TP groups");
  ShapeNames rankfile;
  rankfile.nodes = "the number of hosts";
  EXPECT_EQ(error_of({.nodes = 0}, rankfile), "the number of hosts must be at least 1");
}

TEST(JobShape, DefaultsResolve) {
  const auto s = made({.nodes = 4});
  EXPECT_EQ(s.nodes, 4u);
  EXPECT_EQ(s.gpus_per_node, 8u);
  EXPECT_EQ(s.tp, 8u);  // a node per group
  EXPECT_EQ(s.pp, 1u);
  EXPECT_EQ(s.ranks_per_node, 8u);  // one rank per GPU
  EXPECT_EQ(s.hosts_per_group(), 1u);
  EXPECT_EQ(s.groups_per_host(), 1u);
  EXPECT_EQ(s.ranks_per_group(), 8u);
  EXPECT_EQ(s.groups(), 4u);
  EXPECT_EQ(s.gpus(), 32u);
}

TEST(JobShape, DerivedCounts) {
  struct Case {
    Given given;
    std::uint32_t hosts_per_group, groups_per_host, ranks_per_group, groups;
  } cases[] = {
      {{.nodes = 8, .tp = 16}, 2, 1, 16, 4},  // 2 hosts, one rank per GPU
      {{.nodes = 16, .gpn = 4, .tp = 32}, 8, 1, 32, 2},
      {{.nodes = 8, .tp = 16, .k = 1}, 2, 1, 2, 4},  // one rank per node: 2 per group
      {{.nodes = 8, .tp = 16, .k = 4}, 2, 1, 8, 4},  // ranks of 2 GPUs: 8 per group
      {{.nodes = 8, .tp = 4}, 1, 2, 4, 8},           // 2 groups per host
      {{.nodes = 8, .tp = 4, .k = 2}, 1, 2, 1, 8},   // a rank of 4 GPUs is a whole group
      {{.nodes = 8, .tp = 4, .k = 1}, 1, 2, 1, 8},   // a rank of 8 GPUs holds 2 groups
      {{.nodes = 8, .tp = 8, .k = 3}, 1, 1, 3, 8},   // a node's 3 ranks form its group
      {{.nodes = 6, .tp = 16, .pp = 3}, 2, 1, 16, 3},
  };
  for (const auto& c : cases) {
    const auto s = made(c.given);
    EXPECT_EQ(s.hosts_per_group(), c.hosts_per_group) << s.tp << " " << s.ranks_per_node;
    EXPECT_EQ(s.group_nodes(), c.hosts_per_group);
    EXPECT_EQ(s.groups_per_host(), c.groups_per_host) << s.tp << " " << s.ranks_per_node;
    EXPECT_EQ(s.ranks_per_group(), c.ranks_per_group) << s.tp << " " << s.ranks_per_node;
    EXPECT_EQ(s.groups(), c.groups) << s.tp << " " << s.ranks_per_node;
  }
}

TEST(JobShape, SpecBuildsTheSameShapeAgain) {
  const auto s = made({.nodes = 8, .tp = 16, .pp = 2, .k = 4});
  auto again = JobShape::make(s.spec());
  ASSERT_TRUE(again);
  EXPECT_EQ(again->nodes, 8u);
  EXPECT_EQ(again->tp, 16u);
  EXPECT_EQ(again->pp, 2u);
  EXPECT_EQ(again->ranks_per_node, 4u);
  // A shape filled in by hand keeps tp 0 and ranks 0 as "the default".
  JobShape hand;
  hand.nodes = 2;
  EXPECT_FALSE(hand.spec().tp);
  EXPECT_FALSE(hand.spec().ranks_per_node);
  EXPECT_EQ(hand.tp_size(), 8u);
  EXPECT_EQ(hand.ranks_per_host(), 8u);
}

// 2 pods x 2 leaves x 4 hosts: p01-leaf01 node001-004 (hosts 0-3), p01-leaf02 4-7,
// p02-leaf01 8-11, p02-leaf02 12-15.
TEST(MeasureRing, CountsEdgesPodsAndSplitGroups) {
  const auto f = test::gen("fat3:pods=2,leaves=2,down=4,up=4");
  const auto c = prepare(f);
  auto ring = [](std::initializer_list<std::uint32_t> ids) {
    std::vector<fabric::HostId> out;
    for (auto i : ids) out.push_back(fabric::HostId{i});
    return out;
  };
  // Leaf-contiguous over 3 leaves of 2 pods: 3 inter-leaf edges, 2 of them between pods.
  const auto a = measure_ring(c.blocks, ring({0, 1, 4, 5, 8, 9}), 2);
  EXPECT_EQ(a.blocks, (std::vector<std::uint32_t>{0, 1, 2}));
  EXPECT_EQ(a.leaves, 3u);
  EXPECT_EQ(a.pods, 2u);
  EXPECT_EQ(a.inter_leaf, 3u);
  EXPECT_EQ(a.inter_pod, 2u);
  EXPECT_EQ(a.tp_groups_split, 0u);
  // Shifted by one host: every group of 2 straddles a boundary.
  const auto b = measure_ring(c.blocks, ring({0, 4, 5, 8, 9, 1}), 2);
  EXPECT_EQ(b.blocks, (std::vector<std::uint32_t>{0, 1, 2}));
  EXPECT_EQ(b.inter_leaf, 3u);  // 0->4, 5->8, 9->1; the wrap 1->0 stays in leaf 0
  EXPECT_EQ(b.tp_groups_split, 3u);
  // One host, one leaf: no edge.
  const auto one = measure_ring(c.blocks, ring({3}), 1);
  EXPECT_EQ(one.inter_leaf, 0u);
  EXPECT_EQ(one.leaves, 1u);
  // A short last group counts like any other.
  EXPECT_EQ(measure_ring(c.blocks, ring({0, 1, 2, 4, 8}), 3).tp_groups_split, 1u);
}

}  // namespace
}  // namespace fabricplace::placement
