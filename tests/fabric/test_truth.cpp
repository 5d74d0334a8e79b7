// SPDX-License-Identifier: GPL-2.0-or-later
// Every dump in the shared fabrics (plain and -p; the 8 rail-plane dumps merged) classifies
// exactly as its truth file says: every switch's level, every HCA's leaf, pods and rails.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "fabricplace/fabric/sources.hpp"
#include "test_support.hpp"

using namespace fabricplace;
using namespace fabricplace::fabric;
using nlohmann::json;

namespace {

struct Case {
  std::string name;
  std::vector<std::string> files;
  std::string truth;
  friend void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }
};

std::vector<Case> cases() {
  std::vector<Case> c;
  for (const char* n : {"fat2_L8", "fat3_small", "over_L20", "rail_4su"}) {
    c.push_back({std::string(n) + "_plain",
                 {std::string(n) + ".ibnetdiscover.txt"},
                 std::string(n) + ".truth.json"});
    c.push_back({std::string(n) + "_ports",
                 {std::string(n) + ".ibnetdiscover-p.txt"},
                 std::string(n) + ".truth.json"});
  }
  Case planes{"rail_4su_planes_merged", {}, "rail_4su_planes.truth.json"};
  for (int k = 0; k < 8; ++k)
    planes.files.push_back("rail_4su_planes/plane" + std::to_string(k) + ".ibnetdiscover.txt");
  c.push_back(planes);
  return c;
}

class Truth : public ::testing::TestWithParam<Case> {
 protected:
  Fabric load_case() {
    std::vector<std::string> paths;
    for (const auto& f : GetParam().files) paths.push_back(test::fabric_file(f));
    auto f = load_fabrics(paths);
    if (!f) {
      ADD_FAILURE() << f.error().to_string();
      throw test::TestSetupFailure("setup failed");
    }
    test::expect_valid(*f);
    return std::move(*f);
  }
  json truth() { return json::parse(test::slurp(test::fabric_file(GetParam().truth))); }
};

std::map<std::string, NodeId> by_description(const Fabric& f, NodeType type) {
  std::map<std::string, NodeId> m;
  for (std::uint32_t i = 0; i < f.num_nodes(); ++i)
    if (f.node(NodeId{i}).type == type) m.emplace(f.node(NodeId{i}).description, NodeId{i});
  return m;
}

// Partition of `keys` by a label, as a set of sets (labels themselves may be numbered
// differently).
template <class Label>
std::set<std::set<std::string>> partition(const std::map<std::string, Label>& labels) {
  std::map<Label, std::set<std::string>> groups;
  for (const auto& [k, l] : labels) groups[l].insert(k);
  std::set<std::set<std::string>> out;
  for (auto& [l, g] : groups) out.insert(g);
  return out;
}

}  // namespace

TEST_P(Truth, EverySwitchLevelMatches) {
  const Fabric f = load_case();
  const json t = truth();
  const auto sw = by_description(f, NodeType::kSwitch);
  ASSERT_EQ(sw.size(), t["switches"].size());
  for (const auto& [desc, info] : t["switches"].items()) {
    ASSERT_TRUE(sw.contains(desc)) << desc;
    EXPECT_EQ(f.topology().level[idx(sw.at(desc))], info["level"].get<int>()) << desc;
    EXPECT_EQ(f.topology().switch_name[idx(sw.at(desc))], info["id"].get<std::string>()) << desc;
  }
}

TEST_P(Truth, EveryHcaLeafAndHostMatches) {
  const Fabric f = load_case();
  const json t = truth();
  const auto cas = by_description(f, NodeType::kCa);
  ASSERT_EQ(cas.size(), t["hcas"].size());
  for (const auto& [desc, info] : t["hcas"].items()) {
    ASSERT_TRUE(cas.contains(desc)) << desc;
    const NodeId ca = cas.at(desc);
    const NodeId leaf = f.topology().ca_leaf[idx(ca)];
    ASSERT_NE(leaf, kNoNode) << desc;
    EXPECT_EQ(f.node(leaf).description, info["leaf"].get<std::string>()) << desc;
    EXPECT_EQ(f.host(f.host_of(ca)).name, info["host"].get<std::string>()) << desc;
  }
  EXPECT_EQ(f.num_hosts(), t["sizes"].value("hosts", f.num_hosts()));
}

TEST_P(Truth, PodsAndRailsMatch) {
  const Fabric f = load_case();
  const json t = truth();
  const auto sw = by_description(f, NodeType::kSwitch);
  // Pods: the partition of leaves (and of pod switches) must equal the truth's; a truth
  // without pods (2-level trees) means one pod.
  std::map<std::string, std::uint32_t> ours;
  std::map<std::string, int> theirs;
  bool truth_has_pods = false;
  for (const auto& [desc, info] : t["switches"].items()) truth_has_pods |= !info["pod"].is_null();
  for (const auto& [desc, info] : t["switches"].items()) {
    const auto node = sw.at(desc);
    if (truth_has_pods && info["pod"].is_null() && info["level"].get<int>() > 1) {
      EXPECT_EQ(f.topology().node_pod[idx(node)], kNone) << desc << " belongs to no single pod";
      continue;
    }
    ours[desc] = f.topology().node_pod[idx(node)];
    theirs[desc] = info["pod"].is_null() ? 0 : info["pod"].get<int>();
  }
  EXPECT_EQ(partition(ours), partition(theirs));
  // Rails: the truth gives a rail on rail fabrics' leaves (and per-plane spines).
  const bool rail = f.topology().rail_optimised;
  std::map<std::string, std::uint32_t> our_rail;
  std::map<std::string, int> their_rail;
  for (const auto& [desc, info] : t["switches"].items()) {
    const auto r = f.topology().node_rail[idx(sw.at(desc))];
    if (info["rail"].is_null()) {
      EXPECT_EQ(r, kNone) << desc;
      continue;
    }
    ASSERT_TRUE(rail) << "truth has rails but the fabric was not seen as rail-optimised";
    ASSERT_NE(r, kNone) << desc;
    EXPECT_EQ(f.topology().rails[r].device, "mlx5_" + std::to_string(info["rail"].get<int>()))
        << desc;
  }
}

TEST_P(Truth, CleanFabricsHaveNoWarningsOrDegradedLinks) {
  const Fabric f = load_case();
  EXPECT_TRUE(f.topology().degraded_links.empty());
  EXPECT_TRUE(f.topology().split_hosts.empty());
  EXPECT_TRUE(f.topology().warnings.empty()) << f.topology().warnings.front();
}

INSTANTIATE_TEST_SUITE_P(SharedFabrics, Truth, ::testing::ValuesIn(cases()),
                         [](const auto& param_info) { return param_info.param.name; });
