// SPDX-License-Identifier: GPL-2.0-or-later
// topology/block export: base blocks pod by pod, each pod at a multiple of a power of two
// positions, placeholders (State=FUTURE nodes) where a pod has fewer leaves, BlockSizes from
// the largest leaf (shorter leaves filled up with State=FUTURE nodes). `scontrol show
// topology` of a live slurmctld 24.11 lists what this writes (tests/slurm,
// differential_block).
#include "fabricplace/fabric/slurm_block.hpp"

#include <gtest/gtest.h>

#include "fabricplace/common/hostlist.hpp"
#include "fabricplace/fabric/domains.hpp"
#include "fabricplace/fabric/sources.hpp"
#include "test_support.hpp"

using namespace fabricplace;
using namespace fabricplace::fabric;

namespace {

Fabric spec(const std::string& s) {
  auto f = load_fabric(s);
  EXPECT_TRUE(f) << f.error().to_string();
  return std::move(*f);
}

std::string body(const std::string& text) {  // the file without its comments and blank lines
  std::string out;
  std::size_t at = 0;
  while (at < text.size()) {
    auto end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    const auto line = text.substr(at, end - at);
    if (!line.empty() && line[0] != '#') out += line + "\n";
    at = end + 1;
  }
  return out;
}

}  // namespace

TEST(SlurmBlockExport, PodsOfThreeLeavesArePaddedToFour) {
  const Fabric f = spec("fat3:pods=2,leaves=3,down=4,up=4");
  const auto b = slurm_blocks(f, slurm_tree(f));
  EXPECT_EQ(b.base_size, 4u);
  EXPECT_EQ(b.pod_slots, 4u);
  EXPECT_EQ(b.sizes, (std::vector<std::uint32_t>{4, 16}));
  EXPECT_EQ(body(to_slurm_block(f, b)),
            "BlockName=p01-leaf01 Nodes=node[001-004]\n"
            "BlockName=p01-leaf02 Nodes=node[005-008]\n"
            "BlockName=p01-leaf03 Nodes=node[009-012]\n"
            "BlockName=fabricplace-pad01 Nodes=fabricplace-pad01-[1-4]\n"
            "BlockName=p02-leaf01 Nodes=node[013-016]\n"
            "BlockName=p02-leaf02 Nodes=node[017-020]\n"
            "BlockName=p02-leaf03 Nodes=node[021-024]\n"
            "BlockName=fabricplace-pad02 Nodes=fabricplace-pad02-[1-4]\n"
            "BlockSizes=4,16\n");
  EXPECT_EQ(body(to_slurm_block_nodes(b)),
            "NodeName=fabricplace-pad01-[1-4] State=FUTURE\n"
            "NodeName=fabricplace-pad02-[1-4] State=FUTURE\n");
}

TEST(SlurmBlockExport, PowerOfTwoPodsNeedNoPlaceholder) {
  const Fabric f = spec("fat3:pods=2,leaves=2,down=4,up=4");
  const auto b = slurm_blocks(f, slurm_tree(f));
  EXPECT_EQ(b.sizes, (std::vector<std::uint32_t>{4, 8}));
  EXPECT_EQ(body(to_slurm_block_nodes(b)), "");
  EXPECT_EQ(b.blocks.size(), 4u);
}

TEST(SlurmBlockExport, TwoLevelFabricIsOnePod) {
  const Fabric f = spec("fat2:leaves=3,down=4,up=4");
  const auto b = slurm_blocks(f, slurm_tree(f));
  EXPECT_EQ(b.pods, 1u);
  EXPECT_EQ(b.pod_slots, 1u);
  EXPECT_EQ(body(to_slurm_block(f, b)),
            "BlockName=leaf01 Nodes=node[001-004]\n"
            "BlockName=leaf02 Nodes=node[005-008]\n"
            "BlockName=leaf03 Nodes=node[009-012]\n"
            "BlockSizes=4\n");
}

// One host short (lost at discovery, or a smaller leaf): the leaf is filled up with a
// State=FUTURE node, so the base size, and with it BlockSizes, stays the other leaves'.
TEST(SlurmBlockExport, AShortLeafIsFilledUpNotTheBaseLowered) {
  auto f = test::read_tree_source(
      "SwitchName=l1 Nodes=n[01-04]\nSwitchName=l2 Nodes=n[05-07]\nSwitchName=s1 Switches=l[1-2]\n",
      false);
  ASSERT_TRUE(f) << f.error().to_string();
  const auto b = slurm_blocks(*f, slurm_tree(*f));
  EXPECT_EQ(b.base_size, 4u);
  EXPECT_EQ(body(to_slurm_block(*f, b)),
            "BlockName=l1 Nodes=n[01-04]\n"
            "BlockName=l2 Nodes=fabricplace-pad01-1,n[05-07]\n"
            "BlockSizes=4\n");
  EXPECT_EQ(body(to_slurm_block_nodes(b)), "NodeName=fabricplace-pad01-1 State=FUTURE\n");
}

// A rail-optimised fabric: base blocks are the rail groups (a scalable unit's hosts across
// its rails), not the rail leaves, so a rail group's hosts are one block; one pod, one size.
TEST(SlurmBlockExport, RailGroupsAreTheBaseBlocks) {
  const Fabric f = spec("rail:sus=2,rails=4,hosts=4");
  const auto b = slurm_blocks(f, slurm_tree(f));
  EXPECT_TRUE(b.virtual_leaves);
  EXPECT_EQ(b.base_size, 4u);
  EXPECT_EQ(b.pod_slots, 1u);
  EXPECT_EQ(b.sizes, (std::vector<std::uint32_t>{4}));
  const auto text = to_slurm_block(f, b);
  EXPECT_EQ(body(text),
            "BlockName=su01 Nodes=node[001-004]\n"
            "BlockName=su02 Nodes=node[005-008]\n"
            "BlockSizes=4\n");
  EXPECT_NE(text.find("# Base blocks are rail groups (a rail-optimised fabric), in order; one pod"),
            std::string::npos)
      << text;
  EXPECT_EQ(body(to_slurm_block_nodes(b)), "");
}

// NVLink domains are the base blocks: pod by pod, each pod padded to a power of two of them,
// BlockSizes from the largest domain.
TEST(SlurmBlockExport, DomainsAreTheBaseBlocks) {
  const Fabric f = spec("fat3:pods=2,leaves=2,down=9,up=2,spines=2,spine_up=2,nvl=6,gpus=4");
  const auto b = slurm_blocks(f, slurm_tree(f));
  EXPECT_TRUE(b.domains);
  EXPECT_EQ(b.sizes, (std::vector<std::uint32_t>{6, 24}));
  EXPECT_EQ(body(to_slurm_block(f, b)),
            "BlockName=nvl01 Nodes=node[001-006]\n"
            "BlockName=nvl02 Nodes=node[007-012]\n"  // across p01-leaf01 and p01-leaf02
            "BlockName=nvl03 Nodes=node[013-018]\n"
            "BlockName=fabricplace-pad01 Nodes=fabricplace-pad01-[1-6]\n"
            "BlockName=nvl04 Nodes=node[019-024]\n"
            "BlockName=nvl05 Nodes=node[025-030]\n"
            "BlockName=nvl06 Nodes=node[031-036]\n"
            "BlockName=fabricplace-pad02 Nodes=fabricplace-pad02-[1-6]\n"
            "BlockSizes=6,24\n");
}

// From nvidia-smi: a rack with a tray out is a short domain, filled up to the base size (and
// the tray, reporting no GPU, a block of its leaf's hosts in no domain); a rack not reported
// keeps its position as a block of its leaf's hosts; each pod is padded to 4 positions.
TEST(SlurmBlockExport, ShortAndMissingDomainsKeepPositions) {
  const Fabric bare = spec("fat3:pods=2,leaves=2,down=4,up=2,spines=2,spine_up=2");
  std::vector<DomainMember> m;
  auto put = [&](const std::string& hosts, const std::string& domain) {
    auto names = hostlist::expand(hosts);
    ASSERT_TRUE(names);
    for (const auto& h : *names) m.push_back({h, domain, 4, 1});
  };
  put("node[001-003]", "rackA");  // node004: its tray out (no GPU rows)
  put("node[009-012]", "rackC");  // node[005-008] not reported
  put("node[013-016]", "rackD");
  auto f = with_domains(bare, m, "smi.txt");
  ASSERT_TRUE(f) << f.error().to_string();
  const auto b = slurm_blocks(*f, slurm_tree(*f));
  EXPECT_EQ(body(to_slurm_block(*f, b)),
            "BlockName=rackA Nodes=fabricplace-pad01-1,node[001-003]\n"
            "BlockName=p01-leaf01 Nodes=fabricplace-pad02-[1-3],node004\n"
            "BlockName=p01-leaf02 Nodes=node[005-008]\n"
            "BlockName=fabricplace-pad03 Nodes=fabricplace-pad03-[1-4]\n"
            "BlockName=rackC Nodes=node[009-012]\n"
            "BlockName=rackD Nodes=node[013-016]\n"
            "BlockName=fabricplace-pad04 Nodes=fabricplace-pad04-[1-4]\n"
            "BlockName=fabricplace-pad05 Nodes=fabricplace-pad05-[1-4]\n"
            "BlockSizes=4,16\n");
}
