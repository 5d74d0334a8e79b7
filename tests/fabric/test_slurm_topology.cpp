// SPDX-License-Identifier: GPL-2.0-or-later
// topology.conf export: every truth host under its real leaf (rail fabrics: under its rail
// group's virtual leaf), one parent per switch, Slurm's tie-break order kept, and the file
// reads back into the same tree.
#include "fabricplace/fabric/slurm_tree.hpp"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "fabricplace/common/hostlist.hpp"
#include "fabricplace/common/strings.hpp"
#include "fabricplace/fabric/spec.hpp"
#include "test_support.hpp"

using namespace fabricplace;
using namespace fabricplace::fabric;

namespace {

struct Conf {
  std::vector<std::string> order;                        // SwitchName order
  std::map<std::string, std::set<std::string>> nodes;    // switch -> hosts
  std::map<std::string, std::vector<std::string>> kids;  // switch -> child switches
  std::map<std::string, std::string> speed;              // switch -> LinkSpeed
};

Conf parse_conf(const std::string& text) {
  Conf c;
  for (auto line : str::lines(text)) {
    if (line.empty() || line.front() == '#') continue;
    std::string name;
    for (auto tok : str::split(line, ' ')) {
      const auto eq = tok.find('=');
      const std::string key(tok.substr(0, eq)), value(tok.substr(eq + 1));
      if (key == "SwitchName") {
        name = value;
        c.order.push_back(name);
      } else if (key == "Nodes") {
        const auto hosts = hostlist::expand(value);
        EXPECT_TRUE(hosts) << value;
        if (hosts) c.nodes[name].insert(hosts->begin(), hosts->end());
      } else if (key == "Switches") {
        const auto kids = hostlist::expand(value);
        EXPECT_TRUE(kids) << value;
        if (kids) c.kids[name] = *kids;
      } else if (key == "LinkSpeed") {
        c.speed[name] = value;
      } else {
        ADD_FAILURE() << "unexpected key " << key;
      }
    }
  }
  return c;
}

struct Case {
  std::string name;
  std::vector<std::string> files;
  std::string truth;
  friend void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }
};

class TopologyConf : public ::testing::TestWithParam<Case> {};

}  // namespace

TEST_P(TopologyConf, PutsExactlyTheTruthHostsUnderEachLeaf) {
  std::vector<std::string> paths;
  for (const auto& f : GetParam().files) paths.push_back(test::fabric_file(f));
  auto f = load_fabrics(paths);
  ASSERT_TRUE(f) << f.error().to_string();
  test::expect_valid(*f);
  const auto truth = nlohmann::json::parse(test::slurp(test::fabric_file(GetParam().truth)));
  const SlurmTree tree = slurm_tree(*f);
  EXPECT_TRUE(tree.warnings.empty()) << tree.warnings.front();
  const Conf conf = parse_conf(to_slurm_topology(*f, tree));

  // Expected grouping of hosts: by leaf, or by rail group (pod) on rail fabrics.
  std::map<std::string, std::set<std::string>> expected;  // group key -> hosts
  for (const auto& [desc, info] : truth["hcas"].items()) {
    const std::string leaf = info["leaf"];
    const auto& sw = truth["switches"][leaf];
    const std::string key = f->topology().rail_optimised
                                ? "pod" + std::to_string(sw["pod"].get<int>())
                                : sw["id"].get<std::string>();
    expected[key].insert(info["host"].get<std::string>());
  }
  std::set<std::set<std::string>> want, got;
  for (auto& [k, hosts] : expected) want.insert(hosts);
  std::set<std::string> seen;
  for (const auto& [sw, hosts] : conf.nodes) {
    got.insert(hosts);
    for (const auto& h : hosts) EXPECT_TRUE(seen.insert(h).second) << h << " under two leaves";
  }
  EXPECT_EQ(got, want);
  if (!f->topology().rail_optimised)  // real leaves keep their names
    for (const auto& [leaf, hosts] : expected) {
      EXPECT_EQ(conf.nodes.at(leaf), hosts) << leaf;
    }

  // One parent per switch, exactly one root, every switch reachable from it.
  std::map<std::string, int> parents;
  for (const auto& [sw, kids] : conf.kids)
    for (const auto& k : kids) {
      ++parents[k];
      EXPECT_TRUE(std::find(conf.order.begin(), conf.order.end(), k) != conf.order.end()) << k;
    }
  int roots = 0;
  for (const auto& sw : conf.order) {
    EXPECT_LE(parents[sw], 1) << sw;
    roots += parents[sw] == 0;
  }
  EXPECT_EQ(roots, 1);
}

INSTANTIATE_TEST_SUITE_P(
    SharedFabrics, TopologyConf,
    ::testing::Values(
        Case{"fat2_L8", {"fat2_L8.ibnetdiscover.txt"}, "fat2_L8.truth.json"},
        Case{"fat3_small", {"fat3_small.ibnetdiscover-p.txt"}, "fat3_small.truth.json"},
        Case{"over_L20", {"over_L20.ibnetdiscover.txt"}, "over_L20.truth.json"},
        Case{"rail_4su", {"rail_4su.ibnetdiscover.txt"}, "rail_4su.truth.json"},
        Case{
            "rail_4su_planes",
            {"rail_4su_planes/plane0.ibnetdiscover.txt", "rail_4su_planes/plane1.ibnetdiscover.txt",
             "rail_4su_planes/plane2.ibnetdiscover.txt", "rail_4su_planes/plane3.ibnetdiscover.txt",
             "rail_4su_planes/plane4.ibnetdiscover.txt", "rail_4su_planes/plane5.ibnetdiscover.txt",
             "rail_4su_planes/plane6.ibnetdiscover.txt",
             "rail_4su_planes/plane7.ibnetdiscover.txt"},
            "rail_4su_planes.truth.json"}),
    [](const auto& param_info) { return param_info.param.name; });

TEST(TopologyConfExport, Fat3MergesParallelSpinesPerPodAndAllCores) {
  const Fabric f = test::load(test::fabric_file("fat3_small.ibnetdiscover.txt"));
  const std::string text = to_slurm_topology(f, slurm_tree(f));
  const Conf c = parse_conf(text);
  ASSERT_EQ(c.order.size(), 16u + 4u + 1u);
  EXPECT_EQ(c.order.front(), "p01-leaf01");  // leaves first, ascending GUID
  EXPECT_EQ(c.order[16], "p01-spine01-04");
  EXPECT_EQ(c.kids.at("p01-spine01-04"),
            (std::vector<std::string>{"p01-leaf01", "p01-leaf02", "p01-leaf03", "p01-leaf04"}));
  EXPECT_EQ(c.order.back(), "core001-008");
  EXPECT_EQ(c.kids.at("core001-008").size(), 4u);
  EXPECT_NE(text.find("SwitchName=p02-leaf03 Nodes=node[121-140] LinkSpeed=200\n"),
            std::string::npos);
  // Every link below every switch is 4xHDR: 200 Gb/s each.
  EXPECT_EQ(c.speed.size(), c.order.size());
  EXPECT_EQ(c.speed.at("core001-008"), "200");
}

TEST(TopologyConfExport, LeafOrderFollowsGuidsNotNames) {
  // The tree source assigns GUIDs in file order: leafB before leafA in the file, so first.
  FabricBuilder b;
  SourceOptions o;
  ASSERT_TRUE(
      read_slurm_topology("SwitchName=leafB Nodes=n[3-4]\nSwitchName=leafA Nodes=n[1-2]\n"
                          "SwitchName=top Switches=leafB,leafA\n",
                          "t.conf", o, b));
  auto f = b.build();
  ASSERT_TRUE(f);
  const Conf c = parse_conf(to_slurm_topology(*f, slurm_tree(*f)));
  EXPECT_EQ(c.order, (std::vector<std::string>{"leafB", "leafA", "top"}));
}

TEST(TopologyConfExport, ReadsBackIntoTheSameTree) {
  for (const char* spec :
       {"fat2:leaves=8,down=20,up=20", "fat3:pods=3,leaves=4,down=8,up=8,spines=4",
        "rail:sus=3,hosts=8,rails=4,up=8"}) {
    const Fabric f = *generate(spec);
    const std::string once = to_slurm_topology(f, slurm_tree(f));
    FabricBuilder b("again");
    ASSERT_TRUE(read_slurm_topology(once, "t.conf", SourceOptions{}, b));
    auto g = b.build();
    ASSERT_TRUE(g) << g.error().to_string();
    test::expect_valid(*g);
    const Conf c1 = parse_conf(once), c2 = parse_conf(to_slurm_topology(*g, slurm_tree(*g)));
    EXPECT_EQ(c1.order, c2.order) << spec;
    EXPECT_EQ(c1.nodes, c2.nodes) << spec;
    EXPECT_EQ(c1.kids, c2.kids) << spec;
    EXPECT_EQ(c1.speed, c2.speed) << spec;
  }
}
