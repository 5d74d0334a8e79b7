// SPDX-License-Identifier: GPL-2.0-or-later
// Rank layouts and the rank-file formats, pinned byte for byte on a small 3-level fabric.
#include <gtest/gtest.h>

#include <array>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "fabricplace/common/hostlist.hpp"
#include "fabricplace/fabric/domains.hpp"
#include "fabricplace/placement/rank_layout.hpp"
#include "fabricplace/placement/request.hpp"
#include "test_support.hpp"

namespace fabricplace::placement {
namespace {

using test::gen;

// 2 pods x 2 leaves x 4 hosts: p01-leaf01 node001-004, p01-leaf02 node005-008,
// p02-leaf01 node009-012, p02-leaf02 node013-016.
constexpr const char* kSpec = "fat3:pods=2,leaves=2,down=4,up=4";

std::vector<fabric::HostId> hosts(const fabric::Fabric& f, const char* list) {
  auto h = resolve_hosts(f, list, "--hosts");
  EXPECT_TRUE(h) << (h ? "" : h.error().to_string());
  return h ? *h : std::vector<fabric::HostId>{};
}

// A shape of `hosts` nodes with K ranks per node and one GPU per rank (G = K), so that a TP
// size in GPUs is the same number of ranks.
JobShape per_rank(std::size_t hosts, std::uint32_t k, std::uint32_t tp) {
  ShapeSpec s;
  s.nodes = static_cast<std::uint32_t>(hosts);
  s.gpus_per_node = k;
  s.tp = tp;
  s.ranks_per_node = k;
  auto r = JobShape::make(s);
  EXPECT_TRUE(r) << (r ? "" : r.error().message);
  return r ? *r : JobShape{};
}

std::vector<std::string> names(const fabric::Fabric& f, const RankLayout& l) {
  std::vector<std::string> out;
  for (auto h : l.hosts) out.push_back(f.host(h).name);
  return out;
}

struct Small : ::testing::Test {
  fabric::Fabric f = gen(kSpec);
  Context c = prepare(f);
  RankLayout layout(const char* list, std::uint32_t k, std::uint32_t tp) {
    const auto h = hosts(f, list);
    auto l = rank_layout(c, h, per_rank(h.size(), k, tp));
    EXPECT_TRUE(l) << (l ? "" : l.error().to_string());
    return l ? *l : RankLayout{};
  }
  std::string file(const RankLayout& l, RankFormat fmt, std::uint32_t cores = 4) {
    RankFileOptions o;
    o.cores.cores = cores;
    o.origin = "spec " + std::string(kSpec);
    return write_rank_file(c, l, fmt, o);
  }
};

TEST_F(Small, RingOrderKeepsLeavesAndPodsContiguous) {
  // Given in scrambled order across 3 leaves of 2 pods.
  const auto l = layout("node[014,002,010,001,013,009]", 1, 1);
  EXPECT_EQ(names(f, l), (std::vector<std::string>{"node001", "node002", "node009", "node010",
                                                   "node013", "node014"}));
  EXPECT_EQ(l.leaves, (std::vector<std::string>{"p01-leaf01", "p02-leaf01", "p02-leaf02"}));
  EXPECT_EQ(l.inter_leaf_edges, 3u);  // L leaves -> exactly L inter-leaf edges
  EXPECT_EQ(l.tp_groups_split, 0u);
  EXPECT_TRUE(l.warnings.empty());
}

TEST_F(Small, OneLeafHasNoInterLeafEdge) {
  const auto l = layout("node[003,001,004]", 2, 2);
  EXPECT_EQ(l.inter_leaf_edges, 0u);
  EXPECT_EQ(l.leaves, std::vector<std::string>{"p01-leaf01"});
  EXPECT_EQ(l.ranks(), 6u);
}

TEST_F(Small, TpGroupsOfTwoHostsPairTheOddLeaves) {
  // Hosts per leaf 2, 1 | 2, 1: the plain ring (001 002 005 | 009 010 013) would split two
  // groups (005+009, 010+013); putting the odd leaves next to each other splits only one.
  const auto l = layout("node[001-002,005,009-010,013]", 4, 8);
  EXPECT_EQ(names(f, l), (std::vector<std::string>{"node001", "node002", "node005", "node013",
                                                   "node009", "node010"}));
  EXPECT_EQ(l.inter_leaf_edges, 4u);
  EXPECT_EQ(l.tp_groups_split, 1u);
  ASSERT_EQ(l.warnings.size(), 1u);
  EXPECT_EQ(l.warnings[0],
            "1 TP group(s) of 2 hosts span leaves (the fewest this allocation allows in a "
            "leaf-contiguous ring): the hosts per leaf (p01-leaf02 1, p02-leaf02 1) are not "
            "multiples of 2");
}

TEST_F(Small, WholeGroupsNeverSplit) {
  // 2 + 4 + 2 hosts, TP over 2 hosts: every group inside one leaf whatever the order.
  const auto l = layout("node[003-008,011-012]", 8, 16);
  EXPECT_EQ(l.tp_groups_split, 0u);
  for (std::size_t i = 0; i < l.hosts.size(); i += 2)
    EXPECT_EQ(c.blocks.of_host[fabric::idx(l.hosts[i])],
              c.blocks.of_host[fabric::idx(l.hosts[i + 1])]);
}

TEST_F(Small, RandomAllocationsKeepTheRingInvariants) {
  std::mt19937 rng(20261130);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<fabric::HostId> pick;
    for (std::uint32_t i = 0; i < f.num_hosts(); ++i)
      if (rng() % 2) pick.push_back(fabric::HostId{i});
    if (pick.size() < 2) continue;
    std::shuffle(pick.begin(), pick.end(), rng);
    const std::uint32_t g = pick.size() % 2 == 0 ? 2 : 1;
    auto l = rank_layout(c, pick, per_rank(pick.size(), 2, 2 * g));
    ASSERT_TRUE(l);
    // Same hosts, each leaf one contiguous run, each pod one contiguous run.
    auto sorted = l->hosts;
    std::sort(sorted.begin(), sorted.end());
    std::sort(pick.begin(), pick.end());
    EXPECT_EQ(sorted, pick);
    std::set<std::uint32_t> leaves_seen, pods_seen;
    for (std::size_t i = 0; i < l->hosts.size(); ++i) {
      const auto k = c.blocks.of_host[fabric::idx(l->hosts[i])];
      if (i == 0 || k != c.blocks.of_host[fabric::idx(l->hosts[i - 1])]) {
        EXPECT_TRUE(leaves_seen.insert(k).second) << "leaf " << k << " visited twice";
        if (i == 0 ||
            c.blocks.pod[k] != c.blocks.pod[c.blocks.of_host[fabric::idx(l->hosts[i - 1])]]) {
          EXPECT_TRUE(pods_seen.insert(c.blocks.pod[k]).second);
        }
      }
    }
    EXPECT_EQ(l->inter_leaf_edges, leaves_seen.size() > 1 ? leaves_seen.size() : 0u);
    EXPECT_EQ(l->leaves.size(), leaves_seen.size());
  }
}

// TP groups (runs of g hosts in ring order) whose hosts sit under more than one leaf.
std::uint32_t count_split(const Context& c, const std::vector<fabric::HostId>& ring,
                          std::uint32_t g) {
  std::uint32_t n = 0;
  for (std::size_t i = 0; i < ring.size(); i += g) {
    std::set<std::uint32_t> leaves;
    for (std::size_t j = i; j < i + g; ++j) leaves.insert(c.blocks.of_host[fabric::idx(ring[j])]);
    n += leaves.size() > 1;
  }
  return n;
}

// Random allocations on 2 pods x 4 leaves, TP groups of 2 and 3 hosts: the layout's split
// count equals the best over every leaf order that keeps leaves and pods contiguous,
// computed here by brute force over all 8! orders.
TEST(RankLayoutOrder, FewestSplitsEqualsBruteForce) {
  const auto f = gen("fat3:pods=2,leaves=4,down=4,up=4");
  const auto c = prepare(f);
  std::mt19937 rng(5);
  int nontrivial = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const std::uint32_t g = 2 + trial % 2;
    std::vector<std::vector<fabric::HostId>> per_leaf(8);
    std::uint32_t n = 0;
    for (std::uint32_t i = 0; i < f.num_hosts(); ++i)
      if (rng() % 3) {
        per_leaf[c.blocks.of_host[i]].push_back(fabric::HostId{i});
        ++n;
      }
    while (n % g) {  // drop hosts until the groups tile
      for (auto& v : per_leaf)
        if (!v.empty() && n % g) {
          v.pop_back();
          --n;
        }
    }
    std::vector<fabric::HostId> pick;
    std::vector<std::uint32_t> leaves;
    for (std::uint32_t k = 0; k < 8; ++k)
      if (!per_leaf[k].empty()) {
        pick.insert(pick.end(), per_leaf[k].begin(), per_leaf[k].end());
        leaves.push_back(k);
      }
    auto l = rank_layout(c, pick, per_rank(pick.size(), 1, g));
    ASSERT_TRUE(l);
    std::uint32_t best = ~0u;
    std::sort(leaves.begin(), leaves.end());
    do {
      std::set<std::uint32_t> pods;
      bool contiguous = true;
      for (std::size_t i = 0; i < leaves.size(); ++i)
        if (i == 0 || c.blocks.pod[leaves[i]] != c.blocks.pod[leaves[i - 1]])
          contiguous = contiguous && pods.insert(c.blocks.pod[leaves[i]]).second;
      if (!contiguous) continue;
      std::vector<fabric::HostId> ring;
      for (auto k : leaves) ring.insert(ring.end(), per_leaf[k].begin(), per_leaf[k].end());
      best = std::min(best, count_split(c, ring, g));
    } while (std::next_permutation(leaves.begin(), leaves.end()));
    EXPECT_EQ(l->tp_groups_split, best) << "trial " << trial;
    EXPECT_EQ(count_split(c, l->hosts, g), l->tp_groups_split) << "trial " << trial;
    nontrivial += best > 0;
  }
  EXPECT_GE(nontrivial, 20);  // most draws force splits: the test exercises the search
}

// Review case, 2 pods x 4 leaves, hosts per leaf 1,2,2,2 | 1,2,2,2 and groups of 2 hosts:
// the plain order splits 4 groups; the two odd leaves can meet at the pod boundary (1).
TEST(RankLayoutOrder, OddLeavesMeetAcrossPods) {
  const auto f = gen("fat3:pods=2,leaves=4,down=4,up=4");
  const auto c = prepare(f);
  const auto pick =
      *resolve_hosts(f, "node[001,005-006,009-010,013-014,017,021-022,025-026,029-030]", "h");
  auto l = rank_layout(c, pick, per_rank(pick.size(), 1, 2));
  ASSERT_TRUE(l);
  EXPECT_EQ(l->tp_groups_split, 1u);
  EXPECT_EQ(l->inter_leaf_edges, 8u);
}

// Beyond the exhaustive search (2 pods x 8 leaves: 2 x 8! x 8! orders), the greedy order
// still reaches the optimum for groups of 2 hosts when every leaf holds at least 2: one
// split per pair of odd leaves (each odd leaf must share a group with another one).
TEST(RankLayoutOrder, GreedyPairsOddLeavesOnLargeAllocations) {
  const auto f = gen("fat3:pods=2,leaves=8,down=4,up=4");
  const auto c = prepare(f);
  std::mt19937 rng(11);
  int forced = 0;
  for (int trial = 0; trial < 100; ++trial) {
    // Hosts per leaf 0, 2, 3 or 4; an odd total is made even by growing a leaf of 3 to 4.
    std::vector<std::uint32_t> count(16);
    std::uint32_t total = 0;
    for (auto& k : count) total += k = std::array<std::uint32_t, 4>{0, 2, 3, 4}[rng() % 4];
    if (total % 2) *std::find(count.begin(), count.end(), 3u) = 4;
    std::vector<fabric::HostId> pick;
    std::uint32_t odd_leaves = 0, used = 0;
    for (std::uint32_t k = 0; k < 16; ++k) {
      for (std::uint32_t j = 0; j < count[k]; ++j) pick.push_back(fabric::HostId{4 * k + j});
      odd_leaves += count[k] % 2;
      used += count[k] > 0;
    }
    if (pick.empty()) continue;
    std::shuffle(pick.begin(), pick.end(), rng);
    forced += odd_leaves > 0;
    auto l = rank_layout(c, pick, per_rank(pick.size(), 1, 2));
    ASSERT_TRUE(l);
    EXPECT_EQ(l->tp_groups_split, odd_leaves / 2) << "trial " << trial;
    EXPECT_EQ(count_split(c, l->hosts, 2), l->tp_groups_split);
    EXPECT_EQ(l->inter_leaf_edges, used > 1 ? used : 0u);
  }
  EXPECT_GE(forced, 80);
}

// The tiling rules are JobShape::make's (test_job_shape.cpp); a layout refuses what is left.
TEST_F(Small, BadRequestsAreUsageErrors) {
  const auto two = per_rank(2, 4, 8);
  auto twice = rank_layout(c, {fabric::HostId{0}, fabric::HostId{0}}, two);
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.error().code, ErrorCode::kUsage);
  EXPECT_EQ(twice.error().message, "host node001 is listed twice");
  auto none = rank_layout(c, {}, two);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().message, "no hosts to lay ranks on");
  auto other = rank_layout(c, hosts(f, "node[001-004]"), two);
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error().message, "a job shape of 2 nodes for 4 hosts");
  // A shape filled in by hand is held to the same rules.
  JobShape odd;
  odd.nodes = 3;
  odd.tp = 16;
  auto untiled = rank_layout(c, hosts(f, "node[001-003]"), odd);
  ASSERT_FALSE(untiled);
  EXPECT_EQ(untiled.error().message,
            "--tp 16 does not tile the job: 3 nodes x 8 GPUs per node = 24 GPUs, not a multiple "
            "of 16");
}

// --tp counts GPUs: with K ranks per host of G GPUs a TP group is T x K / G ranks, and its
// hosts are T / G. Pinned on the same 6 hosts as TpGroupsOfTwoHostsPairTheOddLeaves.
TEST_F(Small, TpInGpusMapsToRanks) {
  const auto pick = hosts(f, "node[001-002,005,009-010,013]");
  auto shape = [&](std::uint32_t tp, std::uint32_t k) {
    ShapeSpec s;
    s.nodes = 6;
    s.tp = tp;
    s.ranks_per_node = k;
    return *JobShape::make(s);
  };
  // TP 16 on 8-GPU hosts, 4 ranks each: 2 hosts and 8 ranks per group; the odd leaves meet.
  auto pairs = rank_layout(c, pick, shape(16, 4));
  ASSERT_TRUE(pairs);
  EXPECT_EQ(pairs->tp_ranks(), 8u);
  EXPECT_EQ(names(f, *pairs), (std::vector<std::string>{"node001", "node002", "node005", "node013",
                                                        "node009", "node010"}));
  EXPECT_EQ(pairs->tp_groups_split, 1u);
  // TP 8 (what `rankfile --tp 8` meant in ranks before): one host per group, 4 ranks; the
  // plain ring order, nothing split.
  auto hosts_each = rank_layout(c, pick, shape(8, 4));
  ASSERT_TRUE(hosts_each);
  EXPECT_EQ(hosts_each->tp_ranks(), 4u);
  EXPECT_EQ(names(f, *hosts_each), (std::vector<std::string>{"node001", "node002", "node005",
                                                             "node009", "node010", "node013"}));
  EXPECT_EQ(hosts_each->tp_groups_split, 0u);
  EXPECT_TRUE(hosts_each->warnings.empty());
  EXPECT_EQ(file(*hosts_each, RankFormat::kSlurm, 4).size(), 6u * 4 * 8);
  // One rank per 8-GPU host (torchrun style), TP 16: groups of 2 ranks on 2 hosts.
  auto one_rank = rank_layout(c, pick, shape(16, 1));
  ASSERT_TRUE(one_rank);
  EXPECT_EQ(one_rank->tp_ranks(), 2u);
  EXPECT_EQ(one_rank->hosts, pairs->hosts);
  const auto json = nlohmann::json::parse(file(*one_rank, RankFormat::kJson));
  EXPECT_EQ(json["gpus_per_node"], 8);
  EXPECT_EQ(json["tp"], 16);
  EXPECT_EQ(json["tp_ranks"], 2);
  EXPECT_EQ(json["ranks"][3]["tp_group"], 1);
  EXPECT_EQ(json["ranks"][4]["tp_group"], 2);
  // One rank per host, TP 4: each rank holds 2 whole groups, so a group is one rank.
  auto whole = rank_layout(c, pick, shape(4, 1));
  ASSERT_TRUE(whole);
  EXPECT_EQ(whole->tp_ranks(), 1u);
}

// The host map carries everything a layout needs: from its text, every allocation gets the
// same ring and the same rank files, byte for byte, as from the full fabric.
TEST(HostMap, RoundTripGivesIdenticalRankFiles) {
  for (const char* spec : {kSpec, "fat2:leaves=3,down=5,up=5", "rail:sus=2,hosts=4,rails=4"}) {
    const auto f = gen(spec);
    const auto c = prepare(f);
    const auto direct = host_map(c);
    const auto text = to_host_map_text(direct);
    auto back = parse_host_map(text, "x.hostmap");
    ASSERT_TRUE(back) << back.error().to_string();
    auto without_origin = [](std::string t) {
      const auto from = t.find("# from:");
      return t.erase(from, t.find('\n', from) - from);
    };
    EXPECT_EQ(without_origin(to_host_map_text(*back)), without_origin(text));
    std::mt19937 rng(3);
    for (int trial = 0; trial < 30; ++trial) {
      std::vector<std::string> pick;
      for (const auto& n : direct.names)
        if (rng() % 2) pick.push_back(n);
      if (pick.size() < 2) continue;
      pick.resize(pick.size() / 2 * 2);
      const auto list = hostlist::compress(pick);
      auto a = rank_layout(direct, *resolve_hosts(direct, list, "h"), per_rank(pick.size(), 2, 4));
      auto b = rank_layout(*back, *resolve_hosts(*back, list, "h"), per_rank(pick.size(), 2, 4));
      ASSERT_TRUE(a && b);
      for (auto fmt : {RankFormat::kOpenMpi, RankFormat::kSlurm, RankFormat::kJson})
        EXPECT_EQ(write_rank_file(direct, *a, fmt, {}), write_rank_file(*back, *b, fmt, {}))
            << spec << " " << list;
    }
  }
}

TEST(HostMap, Text) {
  const auto f = gen("fat3:pods=2,leaves=2,down=2,up=2");
  EXPECT_EQ(to_host_map_text(host_map(prepare(f))),
            "fabricplace-hostmap 1\n"
            "# Hosts per leaf for rank order at launch (fabricplace fabric export --format "
            "hostmap).\n"
            "# from: spec fat3:pods=2,leaves=2,down=2,up=2\n"
            "# leaf NAME POD HOST...: leaves in topology.conf order, hosts in ring order;\n"
            "# end HOSTS: the number of hosts, so that a truncated copy is caught\n"
            "leaf p01-leaf01 0 node001 node002\n"
            "leaf p01-leaf02 0 node003 node004\n"
            "leaf p02-leaf01 1 node005 node006\n"
            "leaf p02-leaf02 1 node007 node008\n"
            "end 8\n");
}

// What the blocks are travels with the map (a comment line, so a reader that predates it
// still reads the map): the plugin's messages then say "NVLink domain", not "leaf".
TEST(HostMap, BlockKindRoundTrips) {
  const std::pair<const char*, fabric::BlockKind> cases[] = {
      {"fat2:leaves=2,down=4,up=4", fabric::BlockKind::kLeaf},
      {"rail:sus=2,hosts=4,rails=4", fabric::BlockKind::kRailGroup},
      {"fat2:leaves=2,down=4,up=4,nvl=2,gpus=4", fabric::BlockKind::kDomain}};
  for (const auto& [spec, kind] : cases) {
    const auto f = gen(spec);
    const auto m = host_map(prepare(f));
    EXPECT_EQ(m.blocks.kind, kind) << spec;
    const auto text = to_host_map_text(m);
    EXPECT_EQ(text.find("# blocks: ") != std::string::npos, kind != fabric::BlockKind::kLeaf)
        << text;
    auto back = parse_host_map(text, "x.hostmap");
    ASSERT_TRUE(back) << back.error().to_string();
    EXPECT_EQ(back->blocks.kind, kind) << spec;
    EXPECT_EQ(to_lua_table(m).find("  blocks = \"") != std::string::npos,
              kind != fabric::BlockKind::kLeaf);
  }
  const auto m = host_map(prepare(gen("fat2:leaves=2,down=4,up=4,nvl=2,gpus=4")));
  EXPECT_NE(to_host_map_text(m).find("# blocks: domain\n"), std::string::npos);
  EXPECT_NE(to_lua_table(m).find("  blocks = \"domain\",\n"), std::string::npos);
  // A rail-optimised fabric's rails travel too, for the plugin's NCCL_IB_HCA at launch; and
  // whether a job's hosts share a domain is read from the domain blocks.
  const auto rail = host_map(prepare(gen("rail:sus=2,hosts=4,rails=4,nvl=2,gpus=4")));
  const auto rail_text = to_host_map_text(rail);
  EXPECT_NE(rail_text.find("# rails: mlx5_0:1:0:0 mlx5_1:1:1:0 mlx5_2:1:2:0 mlx5_3:1:3:0\n"),
            std::string::npos)
      << rail_text;
  auto rail_back = parse_host_map(rail_text, "r.hostmap");
  ASSERT_TRUE(rail_back) << rail_back.error().to_string();
  ASSERT_EQ(rail_back->rails.size(), 4u);
  EXPECT_EQ(rail_back->rails[3].nccl(), "mlx5_3:1:3:0");
  EXPECT_TRUE(shares_domain(
      *rail_back, (std::vector<fabric::HostId>{fabric::HostId{0}, fabric::HostId{1}})));  // nvl01
  EXPECT_FALSE(shares_domain(
      *rail_back,
      (std::vector<fabric::HostId>{fabric::HostId{1}, fabric::HostId{2}})));  // nvl01, nvl02
  EXPECT_FALSE(shares_domain(host_map(prepare(gen("fat2:leaves=2,down=4,up=4"))),
                             (std::vector<fabric::HostId>{
                                 fabric::HostId{0}, fabric::HostId{1}})));  // leaves are no domains
  EXPECT_TRUE(host_map(prepare(gen("fat2:leaves=2,down=4,up=4"))).rails.empty());
  auto bad_rails =
      parse_host_map("fabricplace-hostmap 1\n# rails: mlx5_0:1:x:0\nleaf a 0 n1\nend 1\n", "f");
  ASSERT_FALSE(bad_rails);
  EXPECT_EQ(bad_rails.error().to_string(),
            "f:2: \"# rails:\" line: expected DEVICE:PORT:RAIL:PLANE entries (mlx5_0:1:0:0), got "
            "\"mlx5_0:1:x:0\"");
  auto bad = parse_host_map("fabricplace-hostmap 1\n# blocks: rack\nleaf a 0 n1\nend 1\n", "f");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().to_string(),
            "f:2: \"# blocks:\" line: expected leaf, rail-group or domain, got \"rack\"");
}

// "# rails:", "# blocks:" and "# generation:" lines are data, checked as such: however they
// are spaced, only after the header and before "end", once each; a rails line lists each
// device once and at least one. Before, each of these read silently (a "#rails:" line was a
// comment: no NCCL_IB_HCA at launch; a second line won or added to the first).
TEST(HostMap, DataLinesCheckedAsSuch) {
  auto err = [](std::string_view text) {
    auto m = parse_host_map(text, "f");
    return m ? std::string("parsed") : m.error().to_string();
  };
  const std::string leaf = "leaf a 0 n1\nend 1\n";
  EXPECT_EQ(err("fabricplace-hostmap 1\n# rails: mlx5_0:1:0:0\n# rails: mlx5_1:1:1:0\n" + leaf),
            "f:3: \"# rails:\" line again (the first at line 2): expected one");
  EXPECT_EQ(err("fabricplace-hostmap 1\n# blocks: domain\n# blocks: rail-group\n" + leaf),
            "f:3: \"# blocks:\" line again (the first at line 2): expected one");
  EXPECT_EQ(err("fabricplace-hostmap 1\n# generation: 0123456789abcdef\n"
                "# generation: 0123456789abcdee\n" +
                leaf),
            "f:3: \"# generation:\" line again (the first at line 2): expected one");
  EXPECT_EQ(err("fabricplace-hostmap 1\n# rails: mlx5_0:1:0:0 mlx5_0:1:1:0\n" + leaf),
            "f:2: \"# rails:\" line: device \"mlx5_0\" twice: expected one entry per HCA device");
  EXPECT_EQ(err("fabricplace-hostmap 1\n# rails:\n" + leaf),
            "f:2: \"# rails:\" line: expected DEVICE:PORT:RAIL:PLANE entries (mlx5_0:1:0:0), got "
            "none");
  // Spaced otherwise, still the data line, and checked.
  EXPECT_EQ(err("fabricplace-hostmap 1\n#rails: mlx5_0:1:x:0\n" + leaf),
            "f:2: \"# rails:\" line: expected DEVICE:PORT:RAIL:PLANE entries (mlx5_0:1:0:0), got "
            "\"mlx5_0:1:x:0\"");
  EXPECT_EQ(err("fabricplace-hostmap 1\n#  blocks : rack\n" + leaf),
            "f:2: \"# blocks:\" line: expected leaf, rail-group or domain, got \"rack\"");
  auto spaced = parse_host_map("fabricplace-hostmap 1\n#rails: mlx5_0:1:0:0\n#blocks:domain\n" +
                                   leaf,
                               "f");
  ASSERT_TRUE(spaced) << spaced.error().to_string();
  ASSERT_EQ(spaced->rails.size(), 1u);
  EXPECT_EQ(spaced->rails[0].nccl(), "mlx5_0:1:0:0");
  EXPECT_EQ(spaced->blocks.kind, fabric::BlockKind::kDomain);
  // Before the header, or after "end".
  EXPECT_EQ(err("# rails: mlx5_0:1:0:0\nfabricplace-hostmap 1\n" + leaf),
            "f:1: \"# rails:\" line before the \"fabricplace-hostmap 1\" line: expected that "
            "line first (a host map written by `fabricplace fabric export --format hostmap`)");
  EXPECT_EQ(err("fabricplace-hostmap 1\n" + leaf + "# blocks: domain\n"),
            "f:4: \"# blocks:\" line after the \"end\" line: expected it before the leaf lines "
            "(two host maps in one file?)");
  // Other comments stay comments (the writer's own "# leaf NAME ..." and "# end HOSTS").
  EXPECT_EQ(err("fabricplace-hostmap 1\n# railsX: no\n# leaf NAME POD HOST...\n" + leaf),
            "parsed");
}

TEST(HostMap, BadInputNamesTheLine) {
  auto err = [](std::string_view text) {
    auto m = parse_host_map(text, "f.hostmap");
    EXPECT_FALSE(m);
    return m ? std::string() : m.error().to_string();
  };
  EXPECT_EQ(err(""),
            "f.hostmap: empty host map: expected a \"fabricplace-hostmap 1\" line, leaf lines and "
            "an \"end\" line (write it with `fabricplace fabric export --format hostmap`, or "
            "`fabricplace slurm sync`)");
  EXPECT_EQ(err("leaf a 0 n1\n"),
            "f.hostmap:1: expected \"fabricplace-hostmap 1\" (a host map written by "
            "`fabricplace fabric export --format hostmap`)");
  EXPECT_EQ(err("fabricplace-hostmap 2\n"),
            "f.hostmap:1: host map format \"2\"; this fabricplace reads format 1");
  EXPECT_EQ(err("fabricplace-hostmap 1\n# c\nleaf a x n1\n"),
            "f.hostmap:3: pod \"x\": expected a non-negative integer");
  EXPECT_EQ(err("fabricplace-hostmap 1\nleaf a 0\n"),
            "f.hostmap:2: expected \"leaf NAME POD HOST...\"");
  EXPECT_EQ(err("fabricplace-hostmap 1\nleaf a 0 n1 n2\nleaf b 0 n3 n1\nend 4\n"),
            "f.hostmap:3: host \"n1\" is already listed on line 2");
  // Truncated: no end line, or one that does not count the hosts listed.
  EXPECT_EQ(err("fabricplace-hostmap 1\nleaf a 0 n1 n2\n"),
            "f.hostmap:2: no \"end\" line: the host map is truncated (rewrite it with "
            "`fabricplace fabric export --format hostmap`)");
  EXPECT_EQ(err("fabricplace-hostmap 1\n"),
            "f.hostmap:1: no \"end\" line: the host map is truncated (rewrite it with "
            "`fabricplace fabric export --format hostmap`)");
  EXPECT_EQ(err("fabricplace-hostmap 1\nleaf a 0 n1 n2\nend 3\n"),
            "f.hostmap:3: \"end\" line: expected \"end 2\" (the number of hosts listed)");
  EXPECT_EQ(err("fabricplace-hostmap 1\nleaf a 0 n1\nend 1\nleaf b 0 n2\n"),
            "f.hostmap:4: text after the \"end\" line: expected nothing after it (two host maps "
            "in one file? write it again with `fabricplace fabric export --format hostmap`)");
  auto m = parse_host_map("fabricplace-hostmap 1\nleaf a 0 n1 n2\nend 2\n", "f");
  ASSERT_TRUE(m);
  auto unknown = resolve_hosts(*m, "n[1-4]", "SLURM_JOB_NODELIST");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().message, "SLURM_JOB_NODELIST: 2 host(s) not in the fabric: n[3-4]");
  // A node list whose count wraps 64 bits (524288 x 2^32 x 8 bytes) is refused before
  // anything is expanded: what the plugin does with such a SLURM_JOB_NODELIST.
  auto wide = resolve_hosts(*m, "n[0-524287][0-4294967295]", "SLURM_JOB_NODELIST");
  ASSERT_FALSE(wide);
  EXPECT_EQ(
      wide.error().message.rfind("SLURM_JOB_NODELIST: hostlist \"n[0-524287][0-4294967295]\", "
                                 "column 12: expands to more than ",
                                 0),
      0u)
      << wide.error().message;
}

TEST(RankFormat, Names) {
  EXPECT_EQ(parse_rank_format("openmpi"), RankFormat::kOpenMpi);
  EXPECT_EQ(parse_rank_format("torchrun"), RankFormat::kTorchrun);
  EXPECT_FALSE(parse_rank_format("OpenMPI"));
  EXPECT_FALSE(parse_rank_format(""));
}

// Hosts node009, node001, node002 (given out of order), 2 tasks per node, TP 2.
struct Formats : Small {
  RankLayout l = layout("node[009,001-002]", 2, 2);
};

TEST_F(Formats, OpenMpiSlotsSplitTheCores) {
  EXPECT_EQ(file(l, RankFormat::kOpenMpi, 4),
            "rank 0=node001 slot=0-1\n"
            "rank 1=node001 slot=2-3\n"
            "rank 2=node002 slot=0-1\n"
            "rank 3=node002 slot=2-3\n"
            "rank 4=node009 slot=0-1\n"
            "rank 5=node009 slot=2-3\n");
  // One core each when they match; shared (wrapped) when there are more ranks than cores,
  // never a core the node lacks (Open MPI 4.1 exits silently on one).
  EXPECT_EQ(file(l, RankFormat::kOpenMpi, 2).substr(0, 44),
            "rank 0=node001 slot=0\nrank 1=node001 slot=1\n");
  const auto four = layout("node001", 4, 4);
  EXPECT_EQ(file(four, RankFormat::kOpenMpi, 3),
            "rank 0=node001 slot=0\n"
            "rank 1=node001 slot=1\n"
            "rank 2=node001 slot=2\n"
            "rank 3=node001 slot=0\n");
  const auto odd = layout("node001", 2, 2);
  EXPECT_EQ(file(odd, RankFormat::kOpenMpi, 5),
            "rank 0=node001 slot=0-1\n"
            "rank 1=node001 slot=2-3\n");
}

TEST_F(Formats, Hostfiles) {
  EXPECT_EQ(file(l, RankFormat::kHostfile), "node001 slots=2\nnode002 slots=2\nnode009 slots=2\n");
  EXPECT_EQ(file(l, RankFormat::kMpich), "node001:2\nnode002:2\nnode009:2\n");
  EXPECT_EQ(file(l, RankFormat::kSlurm), "node001\nnode001\nnode002\nnode002\nnode009\nnode009\n");
}

TEST_F(Formats, Torchrun) {
  EXPECT_EQ(
      file(l, RankFormat::kTorchrun),
      R"(# torchrun environment written by fabricplace from spec fat3:pods=2,leaves=2,down=4,up=4
# Source it on every node, then:
#   torchrun --nnodes=$NNODES --nproc-per-node=$NPROC_PER_NODE --node-rank=$NODE_RANK \
#     --master-addr=$MASTER_ADDR --master-port=$MASTER_PORT train.py
# (static rendezvous: torchrun honours --node-rank only without --rdzv-backend)
# Node ranks follow the fabric ring: 2 leaves, 2 inter-leaf ring edges.
NNODES=3
NPROC_PER_NODE=2
MASTER_ADDR=node001
MASTER_PORT=29500
case "${SLURMD_NODENAME:-$(hostname -s)}" in
  node001) NODE_RANK=0 ;;
  node002) NODE_RANK=1 ;;
  node009) NODE_RANK=2 ;;
  *) echo "fabricplace: ${SLURMD_NODENAME:-$(hostname -s)} is not a host of this job" >&2
     return 1 2>/dev/null || exit 1 ;;
esac
export NNODES NPROC_PER_NODE MASTER_ADDR MASTER_PORT NODE_RANK
)");
}

TEST_F(Formats, Json) {
  const auto one = layout("node[009,001]", 1, 1);
  EXPECT_EQ(file(one, RankFormat::kJson), R"({
  "hosts": [
    "node001",
    "node009"
  ],
  "hostlist": "node[001,009]",
  "tasks_per_node": 1,
  "gpus_per_node": 1,
  "tp": 1,
  "tp_ranks": 1,
  "leaves": [
    "p01-leaf01",
    "p02-leaf01"
  ],
  "inter_leaf_edges": 2,
  "tp_groups_split": 0,
  "ranks": [
    {
      "rank": 0,
      "host": "node001",
      "local_rank": 0,
      "node_rank": 0,
      "tp_group": 0,
      "leaf": "p01-leaf01"
    },
    {
      "rank": 1,
      "host": "node009",
      "local_rank": 0,
      "node_rank": 1,
      "tp_group": 1,
      "leaf": "p02-leaf01"
    }
  ]
}
)");
}

// With the node's topology known (hwloc), local rank k uses GPU k, its nearest HCA and the
// cores near it, on every host.
TEST_F(Formats, LocalRanksFromTheNodeTopology) {
  RankFileOptions o;
  o.local = {{"0-3", 0u, "mlx5_0"}, {"4-7", 1u, "mlx5_1"}};
  o.node_source = "dgx.xml";
  EXPECT_EQ(write_rank_file(c, l, RankFormat::kOpenMpi, o).substr(0, 50),
            "rank 0=node001 slot=0-3\nrank 1=node001 slot=4-7\nra");
  const auto env = write_rank_file(c, l, RankFormat::kTorchrun, o);
  EXPECT_NE(env.find("CUDA_DEVICE_ORDER=PCI_BUS_ID\n"
                     "CUDA_VISIBLE_DEVICES=0,1\n"
                     "NCCL_IB_HCA==mlx5_0,mlx5_1\n"
                     "FABRICPLACE_NCCL_IB_HCA_BY_LOCAL_RANK=\"=mlx5_0 =mlx5_1\"\n"
                     "case "),
            std::string::npos)
      << env;
  EXPECT_NE(env.find("\nexport CUDA_DEVICE_ORDER CUDA_VISIBLE_DEVICES NCCL_IB_HCA "
                     "FABRICPLACE_NCCL_IB_HCA_BY_LOCAL_RANK\n"),
            std::string::npos);
  const auto json = nlohmann::json::parse(write_rank_file(c, l, RankFormat::kJson, o));
  EXPECT_EQ(json["ranks"][3]["host"], "node002");
  EXPECT_EQ(json["ranks"][3]["slot"], "4-7");
  EXPECT_EQ(json["ranks"][3]["cuda_visible_devices"], "1");
  EXPECT_EQ(json["ranks"][3]["nccl_ib_hca"], "=mlx5_1");
  // No GPUs on the node (only cores known): slots only, no GPU variables.
  o.local = {{"0", std::nullopt, ""}, {"1", std::nullopt, ""}};
  EXPECT_EQ(write_rank_file(c, l, RankFormat::kTorchrun, o).find("CUDA"), std::string::npos);
  EXPECT_FALSE(
      nlohmann::json::parse(write_rank_file(c, l, RankFormat::kJson, o))["ranks"][0].contains(
          "cuda_visible_devices"));
}

}  // namespace
}  // namespace fabricplace::placement

namespace fabricplace::placement {

// NVLink domains: the rank order is domain-contiguous, then leaf-contiguous inside a domain
// (here domains whose hosts interleave two leaves by index); the torchrun environment and the
// JSON ask NCCL for MNNVL when hosts share a domain, and name each rail's HCA with its rail
// and plane on a rail-optimised fabric.
TEST(RankLayoutDomains, DomainThenLeafContiguousAndNcclEnv) {
  const auto bare = test::gen("fat2:leaves=2,down=4,up=4");  // leaf01 node[001-004]
  std::vector<fabric::DomainMember> m;
  for (const char* h : {"node001", "node005", "node002", "node006"}) m.push_back({h, "X", 4, 1});
  for (const char* h : {"node003", "node004", "node007", "node008"}) m.push_back({h, "Y", 4, 1});
  auto f = fabric::with_domains(bare, m, "smi.txt");
  ASSERT_TRUE(f) << f.error().to_string();
  const auto ctx = prepare(*f);
  const auto map = host_map(ctx);
  auto hosts = resolve_hosts(*f, "node[001-008]", "--hosts");
  ASSERT_TRUE(hosts);
  ShapeSpec s;
  s.nodes = 8;
  s.gpus_per_node = 4;
  s.ranks_per_node = 4;
  s.tp = 16;
  auto shape = JobShape::make(s);
  ASSERT_TRUE(shape);
  auto l = rank_layout(map, *hosts, *shape);
  ASSERT_TRUE(l) << l.error().to_string();
  std::vector<std::string> order;
  for (auto h : l->hosts) order.push_back(f->host(h).name);
  EXPECT_EQ(order, (std::vector<std::string>{"node001", "node002", "node005", "node006", "node003",
                                             "node004", "node007", "node008"}));
  EXPECT_EQ(l->leaves, (std::vector<std::string>{"X", "Y"}));
  EXPECT_EQ(l->tp_groups_split, 0u);
  RankFileOptions o;
  o.mnnvl = shares_domain(*f, l->hosts);
  EXPECT_TRUE(o.mnnvl);
  EXPECT_TRUE(hca_rails(*f).empty());  // single-rail: NCCL's own search stands
  const auto env = write_rank_file(map, *l, RankFormat::kTorchrun, o);
  EXPECT_NE(env.find("\nNCCL_MNNVL_ENABLE=1\n"), std::string::npos) << env;
  EXPECT_NE(env.find("export NNODES NPROC_PER_NODE MASTER_ADDR MASTER_PORT NODE_RANK "
                     "NCCL_MNNVL_ENABLE\n"),
            std::string::npos)
      << env;
  EXPECT_EQ(env.find("NCCL_IB_HCA"), std::string::npos);
  // One host per domain: nothing to ask for.
  EXPECT_FALSE(shares_domain(*f, {*f->find_host("node001"), *f->find_host("node003")}));

  // Rails and planes: planes=1 gives each rail its own subnet.
  const auto rail = test::gen("rail:sus=2,hosts=4,rails=4,planes=1,nvl=4,gpus=4");
  const auto rails = hca_rails(rail);
  ASSERT_EQ(rails.size(), 4u);
  EXPECT_EQ(rails[2].nccl(), "mlx5_2:1:2:2");
  const auto shared = hca_rails(test::gen("rail:sus=2,hosts=4,rails=4"));
  ASSERT_EQ(shared.size(), 4u);
  EXPECT_EQ(shared[3].nccl(), "mlx5_3:1:3:0");  // one spine plane for every rail
  const auto rctx = prepare(rail);
  const auto rmap = host_map(rctx);
  auto rh = resolve_hosts(rail, "node[003-006]", "--hosts");
  ASSERT_TRUE(rh);
  s.nodes = 4;
  s.tp = 4;
  auto rl = rank_layout(rmap, *rh, *JobShape::make(s));
  ASSERT_TRUE(rl);
  RankFileOptions ro;
  ro.rails = rails;
  ro.mnnvl = shares_domain(rail, rl->hosts);
  const auto j = nlohmann::json::parse(write_rank_file(rmap, *rl, RankFormat::kJson, ro));
  EXPECT_EQ(j["nccl_env"]["NCCL_IB_HCA"], "=mlx5_0:1:0:0,mlx5_1:1:1:1,mlx5_2:1:2:2,mlx5_3:1:3:3");
  EXPECT_EQ(j["nccl_env"]["NCCL_MNNVL_ENABLE"], "1");
  EXPECT_EQ(j["leaves"], nlohmann::json::array({"nvl01", "nvl02"}));
}

}  // namespace fabricplace::placement
