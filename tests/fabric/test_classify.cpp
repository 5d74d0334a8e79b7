// SPDX-License-Identifier: GPL-2.0-or-later
// Classification details: oversubscription, degraded links by tier, split hosts, rails,
// levels beyond 3, warnings.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "fabricplace/fabric/report.hpp"
#include "fabricplace/fabric/slurm_tree.hpp"
#include "fabricplace/fabric/sources.hpp"
#include "fabricplace/fabric/spec.hpp"
#include "test_support.hpp"

using namespace fabricplace;
using namespace fabricplace::fabric;

namespace {
Fabric gen(const std::string& spec) {
  return test::gen(spec);
}
}  // namespace

TEST(Classify, OversubscriptionIsHostBandwidthOverUplinkBandwidth) {
  const Fabric f = test::load(test::fabric_file("over_L20.ibnetdiscover.txt"));
  ASSERT_EQ(f.topology().leaf_stats.size(), 20u);
  for (const auto& st : f.topology().leaf_stats) {
    EXPECT_EQ(st.hosts, 32u);
    EXPECT_EQ(st.down_links, 32u);
    EXPECT_EQ(st.up_links, 8u);
    EXPECT_DOUBLE_EQ(st.down_gbps, 32 * 200.0);
    EXPECT_DOUBLE_EQ(st.oversubscription, 4.0);
  }
}

TEST(Classify, DegradedUplinksRaiseOversubscriptionAndAreFlaggedPerTier) {
  // leaf01's first uplink trains at 1x, a spine-core link at EDR.
  const Fabric f =
      gen("fat3:pods=2,leaves=2,down=4,up=4,spines=2,degrade=p01-leaf01:5:w=1,degrade=p01-spine01:"
          "5:s=EDR");
  const auto& t = f.topology();
  ASSERT_EQ(t.degraded_links.size(), 2u);
  std::map<std::string, std::string> reasons;
  for (const auto& d : t.degraded_links) {
    const Link& l = f.link(d.link);
    const NodeId lo = t.level[idx(l.node_a)] < t.level[idx(l.node_b)] ? l.node_a : l.node_b;
    reasons[t.switch_name[idx(lo)]] = d.reason;
  }
  EXPECT_EQ(reasons["p01-leaf01"], "width 1x < 4x");
  EXPECT_EQ(reasons["p01-spine01"], "speed EDR < HDR");
  // leaf01: 4 hosts x 200 down, uplinks 50 + 3 x 200 = 650 up.
  EXPECT_NEAR(t.leaf_stats[0].oversubscription, 800.0 / 650.0, 1e-12);
  // Hosts behind the degraded uplink: leaf01's four hosts; behind the spine-core link:
  // all of pod 1.
  for (const auto& d : t.degraded_links) {
    const auto hosts = hosts_behind(f, d.link);
    EXPECT_EQ(hosts.size(), d.reason.starts_with("width") ? 4u : 8u) << d.reason;
  }
  ASSERT_EQ(t.tiers.size(), 3u);
  EXPECT_EQ(t.tiers[1].lower, 1);
  EXPECT_EQ(t.tiers[1].degraded, 1u);
  EXPECT_EQ(t.tiers[2].nominal.to_string(), "4xHDR");
}

TEST(Classify, NominalIsTheTiersMostCommonRateNotTheFastest) {
  // Every host link at EDR except one at HDR: the EDR links are nominal, nothing degraded
  // below it; the HDR one is above nominal, not degraded.
  std::string spec = "fat2:leaves=1,down=4,up=4,speed=EDR,degrade=leaf01:1:s=HDR";
  const Fabric f = gen(spec);
  EXPECT_TRUE(f.topology().degraded_links.empty());
  EXPECT_EQ(f.topology().tiers[0].nominal.to_string(), "4xEDR");
}

TEST(Classify, CutUplinksLeaveHostsSplitFromTheFabric) {
  // leaf02 loses all its uplinks: its hosts form their own connected part.
  const Fabric f = gen("fat2:leaves=3,down=2,up=2,spines=1,cut=leaf02:3,cut=leaf02:4");
  const auto& t = f.topology();
  EXPECT_EQ(t.num_components, 2u);
  std::vector<std::string> split;
  for (HostId h : t.split_hosts) split.push_back(f.host(h).name);
  EXPECT_EQ(split, (std::vector<std::string>{"node003", "node004"}));
  EXPECT_EQ(t.leaf_stats[1].up_links, 0u);
  EXPECT_TRUE(std::isinf(t.leaf_stats[1].oversubscription));
  ASSERT_FALSE(t.warnings.empty());
  EXPECT_EQ(t.warnings.back(),
            "2 host(s) reach a different set of fabric parts than most hosts: node[003-004]");
  // Two pods: the cut-off leaf is a part of its own.
  EXPECT_EQ(t.pods.size(), 2u);
}

TEST(Classify, RailPlanesAreSeparatePartsButNoHostIsSplit) {
  const Fabric f = gen("rail:sus=2,hosts=4,rails=4,up=4,planes=1");
  EXPECT_EQ(f.topology().num_components, 4u);
  EXPECT_TRUE(f.topology().split_hosts.empty());
  EXPECT_TRUE(f.topology().warnings.empty());
  // Each plane's spines carry their rail.
  for (NodeId s : f.switches()) {
    if (f.topology().level[idx(s)] == 2) {
      EXPECT_NE(f.topology().node_rail[idx(s)], kNone);
    }
  }
}

TEST(Classify, IsolatedHcaAndUnreachableSwitchWarn) {
  // A host whose only link is cut has no leaf; a switch with no path to any HCA is level 0.
  FabricBuilder b("hand-made");
  NodeRecord sw{0x10, NodeType::kSwitch, "MF0;leafA:X/U1", 4};
  NodeRecord lonely{0x11, NodeType::kSwitch, "MF0;island:X/U1", 4};
  NodeRecord ca1{0x20, NodeType::kCa, "h1 mlx5_0", 1};
  NodeRecord ca2{0x22, NodeType::kCa, "h2 mlx5_0", 1};
  for (const auto& n : {sw, lonely, ca1, ca2}) ASSERT_TRUE(b.add_node(n));
  ASSERT_TRUE(b.add_link(0x10, 1, 0x20, 1, {LinkWidth::k4x, LinkSpeed::kHDR}));
  ASSERT_TRUE(b.add_port(0x22, PortRecord{1, 0x23, 0, 0}));
  auto f = b.build();
  ASSERT_TRUE(f);
  test::expect_valid(*f);
  const auto& w = f->topology().warnings;
  auto has = [&](const std::string& s) { return std::find(w.begin(), w.end(), s) != w.end(); };
  EXPECT_TRUE(has("switch island (0x0000000000000011) has no path to any HCA"));
  EXPECT_TRUE(has("HCA \"h2 mlx5_0\" has no active link"));
  EXPECT_TRUE(has("host h2 reaches no leaf switch"));
  EXPECT_EQ(f->topology().level[idx(*f->find_switch("island"))], 0);
}

TEST(Classify, FourLevelTreesGetLevelFour) {
  // tiers CSV cannot say 4 levels; build one by hand: host - leaf - spine - core - super.
  FabricBuilder b;
  const LinkRate r{LinkWidth::k4x, LinkSpeed::kHDR};
  Guid g = 0x100;
  std::vector<Guid> chain;
  for (const char* d : {"MF0;l:X", "MF0;s:X", "MF0;c:X", "MF0;top:X"}) {
    ASSERT_TRUE(b.add_node(NodeRecord{g, NodeType::kSwitch, d, 8}));
    chain.push_back(g++);
  }
  ASSERT_TRUE(b.add_node(NodeRecord{0x900, NodeType::kCa, "h mlx5_0", 1}));
  ASSERT_TRUE(b.add_link(0x900, 1, chain[0], 1, r));
  for (std::size_t i = 0; i + 1 < chain.size(); ++i)
    ASSERT_TRUE(b.add_link(chain[i], 2, chain[i + 1], 1, r));
  auto f = b.build();
  ASSERT_TRUE(f);
  test::expect_valid(*f);
  EXPECT_EQ(f->topology().max_level, 4);
  EXPECT_EQ(f->topology().level[idx(*f->find_switch("top"))], 4);
}

TEST(Classify, SwitchNamesAreUniqueAndSlurmSafe) {
  FabricBuilder b;
  ASSERT_TRUE(b.add_node(NodeRecord{0xabc001, NodeType::kSwitch, "MF0;leaf 1:X/U1", 4}));
  ASSERT_TRUE(b.add_node(NodeRecord{0xabc002, NodeType::kSwitch, "MF0;leaf 1:X/U1", 4}));
  ASSERT_TRUE(
      b.add_node(NodeRecord{0xabc003, NodeType::kSwitch, "Quantum Mellanox Technologies", 4}));
  ASSERT_TRUE(b.add_node(NodeRecord{0xabc004, NodeType::kSwitch, "", 4}));
  auto f = b.build();
  ASSERT_TRUE(f);
  test::expect_valid(*f);
  const auto& n = f->topology().switch_name;
  EXPECT_EQ(n[0], "leaf_1-abc001");
  EXPECT_EQ(n[1], "leaf_1-abc002");
  EXPECT_EQ(n[2], "Quantum_Mellanox_Technologies");
  EXPECT_EQ(n[3], "sw-0000000000abc004");
}

TEST(Hosts, AreInNaturalOrderWhateverTheirNames) {
  // Mixed shapes: the fast path (prefix + number) and the general comparison must agree.
  FabricBuilder b;
  Guid g = 0x100;
  for (const char* h : {"node10", "node9", "node009", "gpu-a2", "gpu-a10", "node", "n1x", "n01x",
                        "node0100", "zeta"}) {
    ASSERT_TRUE(b.add_node(NodeRecord{g, NodeType::kCa, std::string(h) + " mlx5_0", 1}));
    g += 2;
  }
  auto f = b.build();
  ASSERT_TRUE(f);
  test::expect_valid(*f);  // check() verifies natural order of hosts
  std::vector<std::string> names;
  for (const auto& h : f->hosts()) names.push_back(h.name);
  EXPECT_EQ(names, (std::vector<std::string>{"gpu-a2", "gpu-a10", "n1x", "n01x", "node", "node9",
                                             "node009", "node10", "node0100", "zeta"}));
}

namespace {
bool has_warning(const Fabric& f, const std::string& text) {
  const auto& w = f.topology().warnings;
  return std::any_of(w.begin(), w.end(),
                     [&](const std::string& s) { return s.find(text) != std::string::npos; });
}
Fabric from_topology_conf(const std::string& text) {
  FabricBuilder b("conf");
  auto r = read_slurm_topology(text, "t.conf", SourceOptions{}, b);
  if (!r) {
    ADD_FAILURE() << r.error().to_string();
    throw test::TestSetupFailure("setup failed");
  }
  return test::build(b);
}
}  // namespace

TEST(Classify, ADualHomedHostDoesNotMakeTheFabricRailOptimised) {
  // A storage node with a second HCA on another leaf.
  FabricBuilder b("dual");
  ASSERT_TRUE(b.merge(test::gen("fat2:leaves=4,down=4,up=4")));
  ASSERT_TRUE(b.add_node(NodeRecord{0x2000, NodeType::kCa, "node001 mlx5_1", 1}));
  ASSERT_TRUE(b.add_port(0x2000, PortRecord{1, 0x2001, 0, 0}));
  const Guid leaf02 = 0xfc6a1c0300100002;  // spine01, leaf01, leaf02, ...
  ASSERT_TRUE(b.add_link(0x2000, 1, leaf02, 20, {LinkWidth::k4x, LinkSpeed::kHDR}));
  auto f = b.build();
  ASSERT_TRUE(f);
  test::expect_valid(*f);
  const auto& t = f->topology();
  EXPECT_FALSE(t.rail_optimised);
  EXPECT_TRUE(t.rails.empty());
  EXPECT_EQ(t.pods.size(), 1u);
  const HostId h = *f->find_host("node001");
  EXPECT_EQ(t.host_leaves[idx(h)].size(), 2u);
  EXPECT_EQ(t.switch_name[idx(t.host_leaf[idx(h)])], "leaf01");  // its first HCA's leaf
  EXPECT_TRUE(has_warning(*f,
                          "1 host(s) reach several leaves on a single-rail fabric (dual-homed); "
                          "each is placed under its first HCA's leaf: node001"));
  const auto tree = slurm_tree(*f);
  ASSERT_EQ(tree.switches.front().name, "leaf01");
  EXPECT_EQ(tree.switches.front().hosts.size(), 4u);
  EXPECT_EQ(tree.switches[1].hosts.size(), 4u);  // leaf02 does not list node001 again
}

TEST(Classify, RailGroupsAreHostsWithTheSameLeavesNotEverythingTheyTouch) {
  // n1's second HCA is cabled into SU 2's rail-1 leaf; n9 has lost its rail-1 link.
  const Fabric f = from_topology_conf(
      "SwitchName=su1r0 Nodes=n[1-4]\nSwitchName=su1r1 Nodes=n[2-4]\n"
      "SwitchName=su2r0 Nodes=n[5-9]\nSwitchName=su2r1 Nodes=n[1,5-8]\n"
      "SwitchName=spine Switches=su1r0,su1r1,su2r0,su2r1\n");
  const auto& t = f.topology();
  ASSERT_TRUE(t.rail_optimised);
  ASSERT_EQ(t.pods.size(), 2u);
  auto leaves = [&](std::uint32_t p) {
    std::vector<std::string> v;
    for (NodeId l : t.pods[p].leaves) v.push_back(t.switch_name[idx(l)]);
    return v;
  };
  EXPECT_EQ(leaves(0), (std::vector<std::string>{"su1r0", "su1r1"}));
  EXPECT_EQ(leaves(1), (std::vector<std::string>{"su2r0", "su2r1"}));
  EXPECT_EQ(t.host_pod[idx(*f.find_host("n1"))], 0u);  // tie: its first HCA's group
  EXPECT_EQ(t.host_pod[idx(*f.find_host("n9"))], 1u);
  EXPECT_TRUE(
      has_warning(f, "1 host(s) have HCAs on leaves of another rail group (miscabled?): n1"));
  EXPECT_TRUE(
      has_warning(f, "1 host(s) reach only some of their rail group's leaves (a rail down?): n9"));
  const auto tree = slurm_tree(f);
  ASSERT_GE(tree.switches.size(), 2u);
  EXPECT_EQ(tree.switches[0].hosts.size(), 4u);  // n[1-4]
  EXPECT_EQ(tree.switches[1].hosts.size(), 5u);  // n[5-9]
}

TEST(Classify, ALeafWhoseHostsAreAllDownStaysALeaf) {
  const Fabric f =
      test::gen("fat2:leaves=4,down=4,up=4,cut=leaf04:1,cut=leaf04:2,cut=leaf04:3,cut=leaf04:4");
  const auto& t = f.topology();
  const NodeId leaf04 = *f.find_switch("leaf04");
  EXPECT_EQ(t.level[idx(leaf04)], 1);
  EXPECT_EQ(t.max_level, 2);
  EXPECT_EQ(t.leaves.size(), 4u);
  EXPECT_EQ(t.pods.size(), 1u);
  EXPECT_TRUE(has_warning(
      f,
      "1 switch(es) without any active HCA link are taken as leaves without hosts (their "
      "links use leaf uplink ports): leaf04"));
  const auto tree = slurm_tree(f);
  EXPECT_EQ(tree.switches.size(), 4u);  // leaf01-03 and the spine; leaf04 left out
  EXPECT_EQ(tree.switches.back().children.size(), 3u);
  // In a 3-level tree the cores stay cores.
  const Fabric g =
      test::gen("fat3:pods=2,leaves=2,down=2,up=2,spines=2,cut=p01-leaf02:1,cut=p01-leaf02:2");
  EXPECT_EQ(g.topology().level[idx(*g.find_switch("p01-leaf02"))], 1);
  EXPECT_EQ(g.topology().level[idx(*g.find_switch("core001"))], 3);
  EXPECT_EQ(g.topology().max_level, 3);
}

TEST(Classify, RouterLinksAreNotHostBandwidth) {
  FabricBuilder b("router");
  ASSERT_TRUE(b.merge(test::gen("fat2:leaves=1,down=2,up=2")));
  ASSERT_TRUE(b.add_node(NodeRecord{0x3000, NodeType::kRouter, "gw1", 1}));
  const Guid leaf01 = 0xfc6a1c0300100001;
  ASSERT_TRUE(b.add_link(0x3000, 1, leaf01, 10, {LinkWidth::k4x, LinkSpeed::kHDR}));
  auto f = b.build();
  ASSERT_TRUE(f);
  test::expect_valid(*f);
  EXPECT_EQ(f->topology().leaf_stats[0].down_links, 2u);
  EXPECT_DOUBLE_EQ(f->topology().leaf_stats[0].oversubscription, 1.0);
}

TEST(Hosts, ShortNamesDropTheDomainButKeepAddresses) {
  EXPECT_EQ(split_ca_description("node001.cluster.example mlx5_0").first, "node001");
  EXPECT_EQ(split_ca_description("node001.cluster.example mlx5_0").second, "mlx5_0");
  EXPECT_EQ(split_ca_description("10.1.2.3 mlx5_0").first, "10.1.2.3");
  EXPECT_EQ(split_ca_description("  gpu7   mlx5_1 ").second, "mlx5_1");
  EXPECT_EQ(split_ca_description("loner").first, "loner");
}

TEST(Classify, HostlessLeavesAreFoundByTheirUplinkPorts) {
  // A hostless leaf that also lost an uplink.
  const Fabric a =
      test::gen("fat2:leaves=4,down=2,up=2,spines=2,cut=leaf04:1,cut=leaf04:2,cut=leaf04:4");
  EXPECT_EQ(a.topology().level[idx(*a.find_switch("leaf04"))], 1);
  EXPECT_EQ(a.topology().max_level, 2);
  // A whole pod without hosts: its leaves are leaves and its spines spines, not levels 5 and 4.
  const Fabric b = test::gen(
      "fat3:pods=3,leaves=2,down=2,up=2,cut=p02-leaf01:1,cut=p02-leaf01:2,cut=p02-leaf02:1,cut=p02-"
      "leaf02:2");
  const auto& t = b.topology();
  EXPECT_EQ(t.level[idx(*b.find_switch("p02-leaf01"))], 1);
  EXPECT_EQ(t.level[idx(*b.find_switch("p02-spine01"))], 2);
  EXPECT_EQ(t.level[idx(*b.find_switch("core001"))], 3);
  EXPECT_EQ(t.max_level, 3);
  EXPECT_EQ(t.pods.size(), 3u);
}

TEST(Classify, CoresAboveASingleSpineStayCores) {
  // Topologically a core above one spine looks like a hostless leaf; its ports do not.
  const Fabric a = test::gen("fat3:pods=1,leaves=2,down=4,up=4,spines=1");
  EXPECT_EQ(a.topology().level[idx(*a.find_switch("core001"))], 3);
  const Fabric b =
      test::gen("fat3:pods=2,leaves=2,down=2,up=2,cut=core001:3,cut=core001:4,cut=p01-leaf01:4");
  EXPECT_EQ(b.topology().level[idx(*b.find_switch("core001"))], 3);
  FabricBuilder csv("csv");
  ASSERT_TRUE(read_tiers_csv("host,leaf,spine,core\nh1,l1,s1,c1\nh2,l2,s1,c1\n", "x.csv",
                             SourceOptions{}, csv));
  auto c = csv.build();
  ASSERT_TRUE(c);
  EXPECT_EQ(c->topology().level[idx(*c->find_switch("c1"))], 3);
  const Fabric d = from_topology_conf(
      "SwitchName=s1 Nodes=n[1-2]\nSwitchName=s2 Nodes=n[3-4]\n"
      "SwitchName=spine1 Switches=s[1-2]\nSwitchName=top Switches=spine1\n");
  EXPECT_EQ(d.topology().level[idx(*d.find_switch("top"))], 3);
  EXPECT_EQ(slurm_tree(d).switches.back().name, "top");
}

TEST(Classify, AnSuThatLostARailOnHalfItsHostsStaysOneRailGroup) {
  const Fabric f = test::gen("rail:sus=2,hosts=4,rails=4,cut=su01-r3-leaf:1,cut=su01-r3-leaf:2");
  const auto& t = f.topology();
  ASSERT_TRUE(t.rail_optimised);
  ASSERT_EQ(t.pods.size(), 2u);
  EXPECT_EQ(t.pods[0].leaves.size(), 4u);
  EXPECT_EQ(t.pods[0].hosts.size(), 4u);
  EXPECT_TRUE(has_warning(
      f, "2 host(s) reach only some of their rail group's leaves (a rail down?): node[001-002]"));
  EXPECT_FALSE(has_warning(f, "miscabled"));
  const auto tree = slurm_tree(f);
  EXPECT_TRUE(tree.warnings.empty()) << tree.warnings.front();
}

TEST(Classify, ADeadRailLeafKeepsTheFabricRailOptimised) {
  // 2 SUs x 2 rails, su01's rail-1 leaf is dead: half the hosts have one HCA left.
  const Fabric f = test::gen(
      "rail:sus=2,hosts=4,rails=2,cut=su01-r1-leaf:1,cut=su01-r1-leaf:2,"
      "cut=su01-r1-leaf:3,cut=su01-r1-leaf:4");
  const auto& t = f.topology();
  EXPECT_TRUE(t.rail_optimised);
  EXPECT_EQ(t.rails.size(), 2u);
  EXPECT_FALSE(has_warning(f, "dual-homed"));
  EXPECT_EQ(t.level[idx(*f.find_switch("su01-r1-leaf"))], 1);
  EXPECT_EQ(t.host_pod[idx(*f.find_host("node001"))],
            t.node_pod[idx(*f.find_switch("su01-r0-leaf"))]);
  EXPECT_EQ(t.host_pod[idx(*f.find_host("node005"))],
            t.node_pod[idx(*f.find_switch("su02-r1-leaf"))]);
  // Rail planes, two SUs with a dead rail-1 leaf: the other SUs keep their hosts in topology.conf.
  const Fabric p = test::gen(
      "rail:sus=4,hosts=4,rails=2,planes=1,cut=su01-r1-leaf:1,cut=su01-r1-leaf:2,"
      "cut=su01-r1-leaf:3,cut=su01-r1-leaf:4,cut=su02-r1-leaf:1,cut=su02-r1-leaf:2,"
      "cut=su02-r1-leaf:3,cut=su02-r1-leaf:4");
  EXPECT_TRUE(p.topology().rail_optimised);
  EXPECT_FALSE(has_warning(p, "several pods"));
  const auto tree = slurm_tree(p);
  std::size_t placed = 0;
  for (const auto& s : tree.switches) placed += s.hosts.size();
  EXPECT_EQ(placed, 16u);
}

TEST(Classify, RouterLinksFormTheirOwnTier) {
  FabricBuilder b("router");
  ASSERT_TRUE(b.merge(test::gen("fat2:leaves=1,down=2,up=2")));
  ASSERT_TRUE(b.add_node(NodeRecord{0x3000, NodeType::kRouter, "gw1", 1}));
  ASSERT_TRUE(b.add_link(0x3000, 1, 0xfc6a1c0300100001, 10, {LinkWidth::k4x, LinkSpeed::kEDR}));
  auto f = b.build();
  ASSERT_TRUE(f);
  test::expect_valid(*f);
  EXPECT_TRUE(f->topology().degraded_links.empty());
  ASSERT_EQ(f->topology().tiers.size(), 3u);
  EXPECT_EQ(f->topology().tiers.back().upper, Topology::kRouterTier);
  EXPECT_EQ(f->topology().tiers.back().nominal.to_string(), "4xEDR");
}

TEST(Merge, DifferentReadingsOfOneLinkTakeTheLowerWithAWarning) {
  FabricBuilder b("merge");
  ASSERT_TRUE(b.merge(test::gen("fat2:leaves=1,down=2,up=2")));
  ASSERT_TRUE(b.merge(test::gen("fat2:leaves=1,down=2,up=2,degrade=leaf01:1:w=1")));
  auto f = b.build();
  ASSERT_TRUE(f);
  ASSERT_EQ(f->topology().degraded_links.size(), 1u);
  EXPECT_EQ(f->link(f->topology().degraded_links[0].link).rate.to_string(), "1xHDR");
  EXPECT_TRUE(has_warning(*f, "is read as 4xHDR and as 1xHDR; taking 1xHDR"));
}
