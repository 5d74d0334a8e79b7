// SPDX-License-Identifier: GPL-2.0-or-later
// Link truth (issue #13): link counts and rates a tiers CSV or topology.conf states, what is
// assumed where they do not, per-tier oversubscription, and `fabric diff` across sources.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "fabricplace/common/file_io.hpp"
#include "fabricplace/fabric/diff.hpp"
#include "fabricplace/fabric/export.hpp"
#include "fabricplace/fabric/json_io.hpp"
#include "fabricplace/fabric/report.hpp"
#include "fabricplace/fabric/slurm_tree.hpp"
#include "fabricplace/fabric/sources.hpp"
#include "test_support.hpp"

using namespace fabricplace;
using namespace fabricplace::fabric;
using nlohmann::json;

namespace {

// A 3-tier Clos: 2 pods of 2 ToRs x 4 hosts and 2 aggregation switches, 2 cores. Each
// ToR's rows name both its aggregation switches and each aggregation switch's rows both
// cores, so the host rows link every ToR to both aggs and every agg to both cores.
const std::string kClosRows =
    "host,leaf,spine,core\n"
    "gpu01,tor1,agg1,core1\ngpu02,tor1,agg2,core1\ngpu03,tor1,agg1,core2\ngpu04,tor1,agg2,core2\n"
    "gpu05,tor2,agg1,core1\ngpu06,tor2,agg2,core2\ngpu07,tor2,agg1,core2\ngpu08,tor2,agg2,core1\n"
    "gpu09,tor3,agg3,core1\ngpu10,tor3,agg4,core1\ngpu11,tor3,agg3,core2\ngpu12,tor3,agg4,core2\n"
    "gpu13,tor4,agg3,core1\ngpu14,tor4,agg4,core2\ngpu15,tor4,agg3,core2\ngpu16,tor4,agg4,core1\n";
// 4 uplinks per ToR (2 to each agg), 1 link per agg-core pair, all at 400 Gb/s Ethernet.
const std::string kClosLinks =
    "links,lower,upper,count,rate\n"
    "host,leaf,1,400G\n"
    "leaf,spine,2,400Gb/s\n"
    "spine,core,1,400GbE\n";

Result<Fabric> read(const std::string& text, bool csv, std::optional<LinkRate> rate = {}) {
  return fabricplace::test::read_tree_source(text, csv, rate);
}

Fabric must_read(const std::string& text, bool csv, std::optional<LinkRate> rate = {}) {
  auto f = read(text, csv, rate);
  if (!f) {
    ADD_FAILURE() << f.error().to_string();
    throw test::TestSetupFailure(f.error().to_string());
  }
  test::expect_valid(*f);
  return std::move(*f);
}

// The lines of show_text from `first` up to (not including) the line starting `last`.
std::string section(const std::string& text, const std::string& first, const std::string& last) {
  const auto a = text.find(first);
  if (a == std::string::npos) return "(no " + first + ")";
  const auto b = text.find(last, a);
  return text.substr(a, b == std::string::npos ? std::string::npos : b - a);
}

}  // namespace

TEST(LinkRateEthernet, ParsesPrintsAndRates) {
  for (const char* s : {"400G", "400g", "400Gb/s", "400gbps", "400GbE", "400GBE"})
    EXPECT_EQ(parse_rate(s), LinkRate::ethernet(400)) << s;
  EXPECT_EQ(LinkRate::ethernet(400).to_string(), "400GbE");
  EXPECT_DOUBLE_EQ(LinkRate::ethernet(100).gbps(), 100.0);
  EXPECT_TRUE(LinkRate::ethernet(25).known());
  EXPECT_TRUE(LinkRate::ethernet(25).is_ethernet());
  EXPECT_FALSE((LinkRate{LinkWidth::k4x, LinkSpeed::kHDR}).is_ethernet());
  EXPECT_EQ(parse_rate(LinkRate::ethernet(1600).to_string()), LinkRate::ethernet(1600));
  for (const char* bad : {"0G", "100001G", "400", "400Mb/s", "G", "4.5G", "400 G", "1234567G"})
    EXPECT_FALSE(parse_rate(bad)) << bad;
  EXPECT_EQ(lower_rate(LinkRate::ethernet(400), LinkRate::ethernet(100)), LinkRate::ethernet(100));
}

TEST(TiersCsvLinks, StatedCountsGiveTrueOversubscriptionPerTierNothingAssumed) {
  const Fabric f = must_read(kClosRows + kClosLinks, true);
  EXPECT_EQ(f.link_layer(), LinkLayer::kEthernet);
  EXPECT_EQ(f.num_links(), 16u + 4 * 2 * 2 + 4 * 2);
  for (const Link& l : f.links()) {
    EXPECT_FALSE(l.assumed.any());
    EXPECT_EQ(l.rate, LinkRate::ethernet(400));
  }
  const std::string text = show_text(f);
  EXPECT_EQ(section(text, "  link layer:", "  single-rail"), "  link layer: Ethernet\n");
  EXPECT_EQ(section(text, "  oversubscription per leaf", "  link tiers"),
            "  oversubscription per leaf (host-facing : uplink bandwidth):\n"
            "    tor[1-4]: 1.00:1 (4 hosts, 4 down / 4 up links)\n"
            "  oversubscription per spine (bandwidth from below : uplink bandwidth):\n"
            "    agg[1-4]: 2.00:1 (4 down / 2 up links)\n"
            "  oversubscription per pod (its hosts' bandwidth : its uplink bandwidth):\n"
            "    pod[1-2]: 2.00:1 (8 hosts, 8 host / 4 up links)\n");
  EXPECT_EQ(section(text, "  link tiers", "  link health"),
            "  link tiers (nominal = most common rate):\n"
            "    host-leaf: 16 links, nominal 400GbE, 0 degraded\n"
            "    leaf-spine: 16 links, nominal 400GbE, 0 degraded\n"
            "    spine-core: 8 links, nominal 400GbE, 0 degraded\n");
  EXPECT_EQ(text.find("assumed"), std::string::npos) << text;
  const json j = json::parse(show_json(f));
  EXPECT_EQ(j["link_layer"], "ethernet");
  EXPECT_EQ(j["assumed"], (json{{"rate_links", 0}, {"count_switch_pairs", 0}}));
  EXPECT_EQ(j["leaves"][0]["oversubscription"], 1.0);
  EXPECT_EQ(j["leaves"][0]["assumed"], false);
  EXPECT_EQ(j["upper_switches"][0]["name"], "agg1");
  EXPECT_EQ(j["upper_switches"][0]["oversubscription"], 2.0);
  EXPECT_EQ(j["upper_switches"][0]["up_gbps"], 800.0);
  EXPECT_EQ(j["upper_switches"][0]["assumed"], false);
  EXPECT_EQ(j["pod_uplinks"][1], (json{{"pod", 2},
                                       {"host_count", 8},
                                       {"host_links", 8},
                                       {"up_links", 4},
                                       {"host_gbps", 3200.0},
                                       {"up_gbps", 1600.0},
                                       {"oversubscription", 2.0},
                                       {"assumed", false}}));
  for (const auto& tier : j["tiers"]) EXPECT_EQ(tier["assumed"], false);
}

TEST(TiersCsvLinks, WithoutALinksSectionEveryFigureIsMarkedAssumed) {
  const Fabric f = must_read(kClosRows, true);
  EXPECT_EQ(f.link_layer(), LinkLayer::kEthernet);  // 400GbE is assumed for a tiers CSV
  for (const Link& l : f.links()) {
    EXPECT_TRUE(l.assumed.rate);
    const bool host_link =
        f.node(l.node_a).type == NodeType::kCa || f.node(l.node_b).type == NodeType::kCa;
    EXPECT_EQ(l.assumed.count, !host_link);  // a host row is one link, never assumed
  }
  const std::string text = show_text(f);
  EXPECT_EQ(section(text, "  assumed", "  single-rail"),
            "  assumed (not in the source): the rates of 32 links, the link counts of 16 switch "
            "pairs (one link each); figures from them say \"assumed\"\n");
  EXPECT_EQ(section(text, "  oversubscription per leaf", "  link tiers"),
            "  oversubscription per leaf (host-facing : uplink bandwidth):\n"
            "    tor[1-4]: 2.00:1 assumed (4 hosts, 4 down / 2 up links)\n"
            "  oversubscription per spine (bandwidth from below : uplink bandwidth):\n"
            "    agg[1-4]: 1.00:1 assumed (2 down / 2 up links)\n"
            "  oversubscription per pod (its hosts' bandwidth : its uplink bandwidth):\n"
            "    pod[1-2]: 2.00:1 assumed (8 hosts, 8 host / 4 up links)\n");
  EXPECT_NE(text.find("    spine-core: 8 links, nominal 400GbE, 0 degraded, 8 with assumed "
                      "values\n"),
            std::string::npos);
  const json j = json::parse(show_json(f));
  EXPECT_EQ(j["assumed"], (json{{"rate_links", 32}, {"count_switch_pairs", 16}}));
  EXPECT_EQ(j["leaves"][0]["oversubscription"], 2.0);
  EXPECT_EQ(j["leaves"][0]["assumed"], true);
  EXPECT_EQ(j["upper_switches"][0]["assumed"], true);
  EXPECT_EQ(j["pod_uplinks"][0]["assumed"], true);
  EXPECT_EQ(j["tiers"][2]["assumed"], true);
}

TEST(TiersCsvLinks, PairRowsOverrideTierRowsFieldByField) {
  // tor4 has 1 link to agg4 (3 uplinks in all); agg1's core links run at 100G.
  const Fabric f = must_read(kClosRows + kClosLinks + "tor4,agg4,1,\nagg1,core,,100G\n", true);
  const std::string text = show_text(f);
  EXPECT_EQ(section(text, "  oversubscription per leaf", "  oversubscription per spine"),
            "  oversubscription per leaf (host-facing : uplink bandwidth):\n"
            "    tor[1-3]: 1.00:1 (4 hosts, 4 down / 4 up links)\n"
            "    tor4: 1.33:1 (4 hosts, 4 down / 3 up links)\n");
  EXPECT_EQ(section(text, "  oversubscription per spine", "  oversubscription per pod"),
            "  oversubscription per spine (bandwidth from below : uplink bandwidth):\n"
            "    agg4: 1.50:1 (3 down / 2 up links)\n"
            "    agg[2-3]: 2.00:1 (4 down / 2 up links)\n"
            "    agg1: 8.00:1 (4 down / 2 up links)\n");
}

TEST(TiersCsvLinks, RatesOnlyLeaveCountsAssumed) {
  const Fabric f = must_read(kClosRows +
                                 "links,lower,upper,count,rate\nleaf,spine,,4xNDR\n"
                                 "host,leaf,,4xNDR\nspine,core,,4xNDR\n",
                             true);
  EXPECT_EQ(f.link_layer(), LinkLayer::kInfiniBand);
  for (const Link& l : f.links()) EXPECT_FALSE(l.assumed.rate);
  EXPECT_NE(show_text(f).find("    tor[1-4]: 2.00:1 assumed (4 hosts, 4 down / 2 up links)\n"),
            std::string::npos);
}

struct BadLinks {
  const char* name;
  std::string links;
  std::string error;
  friend void PrintTo(const BadLinks& b, std::ostream* os) { *os << b.name; }
};
class TiersCsvLinkErrors : public ::testing::TestWithParam<BadLinks> {};
TEST_P(TiersCsvLinkErrors, NameFileLineAndExpectation) {
  auto r = read(kClosRows + "links,lower,upper,count,rate\n" + GetParam().links, true);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().to_string(), GetParam().error);
}
// The links header is line 18.
INSTANTIATE_TEST_SUITE_P(
    Table, TiersCsvLinkErrors,
    ::testing::Values(
        BadLinks{"pair_not_linked", "leaf,spine,2,\ntor1,agg3,1,\n",
                 "t.csv:20: \"tor1\" and \"agg3\" are not linked by the host rows (\"tor1\"'s "
                 "spine: agg[1-2])"},
        BadLinks{"count_zero", "leaf,spine,0,400G\n",
                 "t.csv:19: column count: expected a number of links from 1 to 1024 (or "
                 "nothing), got \"0\""},
        BadLinks{"count_too_many", "leaf,spine,1025,\n",
                 "t.csv:19: column count: expected a number of links from 1 to 1024 (or "
                 "nothing), got \"1025\""},
        BadLinks{"count_not_a_number", "leaf,spine,-1,\n",
                 "t.csv:19: column count: expected a number of links from 1 to 1024 (or "
                 "nothing), got \"-1\""},
        BadLinks{"host_count", "host,leaf,2,\n",
                 "t.csv:19: column count: a host row is one link between the host and its leaf; "
                 "expected 1 (or nothing), got 2"},
        BadLinks{"unknown_switch", "tor9,spine,1,\n",
                 "t.csv:19: column lower: \"tor9\" is neither a host or switch of the host rows "
                 "nor a tier (host, leaf, spine, core)"},
        BadLinks{"pair_twice", "leaf,spine,2,\ntor1,agg1,1,\ntor1,agg1,3,\n",
                 "t.csv:21: the count of the links between \"tor1\" and \"agg1\" is already "
                 "given at line 20"},
        BadLinks{"tier_twice", "leaf,spine,,400G\nLEAF,SPINE,,100G\n",
                 "t.csv:20: the rate of the links between \"tor1\" and \"agg1\" is already "
                 "given at line 19"},
        BadLinks{"same_specificity", "tor1,spine,2,\nleaf,agg1,3,\n",
                 "t.csv:20: the count of the links between \"tor1\" and \"agg1\" is already "
                 "given at line 19"},
        BadLinks{"bad_rate", "leaf,spine,2,5xHDR\n",
                 "t.csv:19: column rate: expected an InfiniBand rate like 4xHDR or an Ethernet "
                 "rate in Gb/s like 400G, 400Gb/s or 400GbE, got \"5xHDR\""},
        BadLinks{"unknown_rate", "leaf,spine,2,?????\n",
                 "t.csv:19: column rate: expected an InfiniBand rate like 4xHDR or an Ethernet "
                 "rate in Gb/s like 400G, 400Gb/s or 400GbE, got \"?????\""},
        BadLinks{"not_adjacent", "leaf,core,1,\n",
                 "t.csv:19: expected two adjacent tiers, the lower first (host,leaf / "
                 "leaf,spine / spine,core); tier leaf and tier core"},
        BadLinks{"upside_down", "agg1,tor1,1,\n",
                 "t.csv:19: expected two adjacent tiers, the lower first (host,leaf / "
                 "leaf,spine / spine,core); \"agg1\" is a spine and \"tor1\" is a leaf"},
        BadLinks{"nothing_stated", "leaf,spine,,\n", "t.csv:19: expected a count, a rate or both"},
        BadLinks{"columns", "leaf,spine,2\n",
                 "t.csv:19: expected 4 comma-separated columns (lower,upper,count,rate) in the "
                 "links section, got 3"},
        BadLinks{"mixed_layers", "leaf,spine,2,4xNDR\n",
                 "t.csv:19: rate 4xNDR is an InfiniBand rate, but links without a stated rate "
                 "are assumed 400GbE: state every rate, or give --link-speed a rate of the same "
                 "kind (the links between \"agg1\" and \"core1\" have none)"}));

TEST(TiersCsvLinks, LinksHeaderNeedsHostRowsFirstAndExactColumns) {
  auto r = read("host,leaf,spine\nlinks,lower,upper,count,rate\nh1,l1,s1\n", true);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().to_string(), "t.csv:2: the links section comes after the host rows");
  r = read("host,leaf,spine\nh1,l1,s1\nlinks,low,upper,count,rate\n", true);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().to_string(),
            "t.csv:3: expected the links header \"links,lower,upper,count,rate\", got "
            "\"links,low,upper,count,rate\"");
}

TEST(SlurmTopologyLinkSpeed, NumbersAreGbpsRatesAreRates) {
  const std::string conf =
      "SwitchName=s1 Nodes=n[1-2] LinkSpeed=200\n"
      "SwitchName=s2 Nodes=n[3-4] LinkSpeed=4xNDR\n"
      "SwitchName=top Switches=s[1-2] LinkSpeed=100\n";
  const Fabric f = must_read(conf, false);
  EXPECT_EQ(f.link_layer(), LinkLayer::kInfiniBand);
  for (const Link& l : f.links()) {
    EXPECT_FALSE(l.assumed.rate);
    const bool host_link =
        f.node(l.node_a).type == NodeType::kCa || f.node(l.node_b).type == NodeType::kCa;
    EXPECT_EQ(l.assumed.count, !host_link);
  }
  const auto rate_below = [&](const char* sw) {
    const NodeId s = *f.find_switch(sw);
    std::set<std::string> rates;
    for (const Link& l : f.links()) {
      const NodeId other = l.node_a == s ? l.node_b : l.node_b == s ? l.node_a : kNoNode;
      if (other == kNoNode) continue;
      const int lv = f.node(other).type == NodeType::kSwitch ? f.topology().level[idx(other)] : 0;
      if (lv < f.topology().level[idx(s)]) rates.insert(l.rate.to_string());
    }
    return rates;
  };
  EXPECT_EQ(rate_below("s1"), std::set<std::string>{"4xHDR"});
  EXPECT_EQ(rate_below("s2"), std::set<std::string>{"4xNDR"});
  EXPECT_EQ(rate_below("top"), std::set<std::string>{"4xEDR"});
  // s1: 2 x 200 down, 1 x 100 up; s2: 2 x 400 down, 1 x 100 up; counts assumed.
  EXPECT_NE(show_text(f).find("    s1: 4.00:1 assumed (2 hosts, 2 down / 1 up links)\n"
                              "    s2: 8.00:1 assumed (2 hosts, 2 down / 1 up links)\n"),
            std::string::npos)
      << show_text(f);
  // Ethernet when the assumed rate is Ethernet.
  const Fabric e =
      must_read("SwitchName=s1 Nodes=n[1-2] LinkSpeed=25\n", false, LinkRate::ethernet(100));
  EXPECT_EQ(e.link(LinkId{0}).rate, LinkRate::ethernet(25));
  EXPECT_EQ(e.link_layer(), LinkLayer::kEthernet);
}

TEST(SlurmTopologyLinkSpeed, ArbitraryUnitsAreIgnoredWithAWarningBadValuesAreErrors) {
  const Fabric f = must_read("SwitchName=s1 Nodes=n[1-2] LinkSpeed=7\n", false);
  EXPECT_TRUE(f.link(LinkId{0}).assumed.rate);
  EXPECT_EQ(f.link(LinkId{0}).rate.to_string(), "4xHDR");
  auto r = read("SwitchName=s1 Nodes=n[1-2] LinkSpeed=fast\n", false);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().to_string(),
            "topology.conf:1: LinkSpeed=\"fast\": expected an InfiniBand rate like 4xHDR or an "
            "Ethernet rate in Gb/s like 400G, 400Gb/s or 400GbE, or a number of Gb/s");
  r = read("SwitchName=s1 Nodes=n[1-2] LinkSpeed=400GbE\nSwitchName=s2 Nodes=n3\n", false);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().to_string(),
            "topology.conf:1: LinkSpeed=400GbE: rate 400GbE is an Ethernet rate, but links "
            "without a stated rate are assumed 4xHDR: state every rate, or give --link-speed a "
            "rate of the same kind (switch s2, line 2, has no LinkSpeed=)");
}

TEST(CanonicalJson, KeepsAssumedValuesAndRefusesBadOnes) {
  const Fabric f = must_read(kClosRows + "links,lower,upper,count,rate\nleaf,spine,2,\n", true);
  const std::string text = to_json(f);
  EXPECT_NE(text.find(", \"400GbE\", {\"assumed\": [\"rate\"]}]"), std::string::npos);
  EXPECT_NE(text.find(", \"400GbE\", {\"assumed\": [\"rate\", \"count\"]}]"), std::string::npos);
  FabricBuilder b;
  ASSERT_TRUE(read_json(text, "f.json", b));
  const Fabric g = test::build(b);
  EXPECT_EQ(to_json(g), text);
  for (const char* bad : {"{\"assumed\": [\"speed\"]}", "{\"assumed\": [\"rate\", \"rate\"]}",
                          "{\"assumes\": []}", "{\"assumed\": \"rate\"}"}) {
    std::string edited = text;
    const auto at = edited.find("{\"assumed\": [\"rate\"]}");
    edited.replace(at, std::string("{\"assumed\": [\"rate\"]}").size(), bad);
    FabricBuilder c;
    auto r = read_json(edited, "f.json", c);
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().message.find("links["), std::string::npos) << r.error().message;
  }
}

TEST(Exports, EthernetFabricsAreRefusedByInfiniBandFormats) {
  const Fabric f = must_read(kClosRows + kClosLinks, true);
  auto r = fits_infiniband(f);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "the fabric's links are Ethernet (400GbE); InfiniBand formats hold InfiniBand rates "
            "(a tiers CSV, topology.conf or JSON holds Ethernet fabrics)");
}

TEST(Exports, TiersCsvStatesTierRowsAndOverrides) {
  const Fabric f = must_read(kClosRows + kClosLinks + "tor4,agg4,1,\n", true);
  auto csv = to_tiers_csv(f);
  ASSERT_TRUE(csv) << csv.error().to_string();
  EXPECT_NE(csv->find("\nlinks,lower,upper,count,rate\n"
                      "host,leaf,,400GbE\n"
                      "leaf,spine,2,400GbE\n"
                      "tor4,agg4,1,\n"
                      "spine,core,1,400GbE\n"),
            std::string::npos)
      << *csv;
  const Fabric g = must_read(*csv, true);
  EXPECT_TRUE(diff(f, g).empty()) << diff_text(diff(f, g));
  EXPECT_EQ(to_json(g).substr(to_json(g).find("\"nodes\"")),
            to_json(f).substr(to_json(f).find("\"nodes\"")));
  // A host on two leaves has no single row.
  auto rail = to_tiers_csv(test::gen("rail:sus=2,hosts=2,rails=2,up=2"));
  ASSERT_FALSE(rail);
  EXPECT_EQ(rail.error().message,
            "cannot be written as a tiers CSV: host node001 has 2 links to leaves; a tiers CSV "
            "row holds one");
}

// The same fabric from every source the project reads diffs empty against every other; a
// change both sides state is still reported.
class SameFabric : public ::testing::Test {
 protected:
  // A tree (one spine per pod, one core), so that topology.conf holds it exactly; 2 links per
  // leaf-spine pair and 4 per spine-core pair, which only some sources can state.
  static constexpr const char* kSpec = "fat3:pods=2,leaves=2,down=4,up=2,spines=1";

  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("fp-link-truth-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    const Fabric f = test::gen(kSpec);
    write("f.ibnetdiscover.txt", to_ibnetdiscover(f));
    write("f.ibnetdiscover-p.txt", to_ibnetdiscover_ports(f));
    write("f.json", to_json(f));
    write("f.topology.conf", to_slurm_topology(f, slurm_tree(f)));
    auto csv = to_tiers_csv(f);
    ASSERT_TRUE(csv) << csv.error().to_string();
    write("f.csv", *csv);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  void write(const std::string& name, const std::string& text) {
    ASSERT_TRUE(write_file_atomic(path(name), text));
  }
  std::vector<std::string> sources() const {
    return {kSpec,          path("f.ibnetdiscover.txt"), path("f.ibnetdiscover-p.txt"),
            path("f.json"), path("f.topology.conf"),     path("f.csv")};
  }

  std::filesystem::path dir_;
};

TEST_F(SameFabric, EveryPairOfSourcesDiffsEmpty) {
  const auto all = sources();
  for (const auto& s : all) {
    const Fabric f = test::load(s);
    EXPECT_EQ(f.num_hosts(), 16u) << s;
  }
  for (const auto& a : all)
    for (const auto& b : all) {
      const Fabric fa = test::load(a), fb = test::load(b);
      const FabricDiff d = diff(fa, fb);
      EXPECT_TRUE(d.empty()) << a << " -> " << b << ":\n" << diff_text(d);
      EXPECT_EQ(d.by_name, a.ends_with(".conf") || a.ends_with(".csv") || b.ends_with(".conf") ||
                               b.ends_with(".csv"))
          << a << " -> " << b;
    }
  // What a topology.conf cannot state is assumed there, and said so.
  const FabricDiff d = diff(test::load(path("f.json")), test::load(path("f.topology.conf")));
  EXPECT_EQ(diff_text(d),
            "note: links are matched by switch and host names: the NEW fabric has no InfiniBand "
            "identity (a topology.conf or tiers CSV makes up GUIDs and ports)\n"
            "note: not compared, because one side only assumes them: 6 link count(s) or "
            "rate(s), 4 leaf oversubscription figure(s)\n"
            "no changes\n");
}

TEST_F(SameFabric, ChangesBothSidesStateAreReported) {
  // A tiers CSV where p01-leaf01 lost one of its 2 spine links and p02-spine01's core links
  // run at 2xHDR.
  std::string csv = test::slurp(path("f.csv"));
  csv += "p01-leaf01,p01-spine01,1,\np02-spine01,core001,,2xHDR\n";
  write("changed.csv", csv);
  const Fabric before = test::load(path("f.json")), after = test::load(path("changed.csv"));
  FabricDiff d = diff(before, after);
  EXPECT_EQ(diff_text(d),
            "note: links are matched by switch and host names: the NEW fabric has no InfiniBand "
            "identity (a topology.conf or tiers CSV makes up GUIDs and ports)\n"
            "removed p01-leaf01 - p01-spine01: 4xHDR\n"
            "degraded p02-spine01 - core001: 4xHDR -> 2xHDR\n"
            "degraded p02-spine01 - core001: 4xHDR -> 2xHDR\n"
            "degraded p02-spine01 - core001: 4xHDR -> 2xHDR\n"
            "degraded p02-spine01 - core001: 4xHDR -> 2xHDR\n"
            "oversubscription p01-leaf01: 2.00:1 -> 4.00:1\n");
  // Against a topology.conf the link count is assumed and not compared; the rate, stated by
  // LinkSpeed=, is.
  std::string conf = test::slurp(path("f.topology.conf"));
  const auto at = conf.find("SwitchName=core001 Switches=p01-spine01,p02-spine01 LinkSpeed=200");
  ASSERT_NE(at, std::string::npos) << conf;
  conf.replace(conf.find("LinkSpeed=200", at), 13, "LinkSpeed=100");
  write("changed.conf", conf);
  d = diff(test::load(path("changed.csv")), test::load(path("changed.conf")));
  EXPECT_EQ(diff_text(d),
            "note: links are matched by switch and host names: neither fabric has any InfiniBand "
            "identity (a topology.conf or tiers CSV makes up GUIDs and ports)\n"
            "note: not compared, because one side only assumes them: 5 link count(s) or "
            "rate(s), 3 leaf oversubscription figure(s)\n"
            "degraded p01-spine01 - core001: 4xHDR -> 4xEDR\n"
            "rerated p02-spine01 - core001: 2xHDR -> 4xEDR\n");
  // Between two dumps, a link removed names its ports.
  std::string dump = to_ibnetdiscover(test::gen(std::string(kSpec) + ",cut=p01-leaf01:5"));
  write("cut.txt", dump);
  d = diff(test::load(path("f.ibnetdiscover-p.txt")), test::load(path("cut.txt")));
  EXPECT_EQ(diff_text(d),
            "removed p01-leaf01[5] - p01-spine01[1]: 4xHDR\n"
            "oversubscription p01-leaf01: 2.00:1 -> 4.00:1\n");
}

TEST(TiersCsvAndItsTopologyConf, TheIssueCaseDiffsEmptyWithRightValues) {
  // A tiers CSV and its own topology.conf export (issue #13): no links removed and added, no
  // oversubscription changes from leaves matched by GUID order.
  const Fabric csv = test::load(test::data("tiers.csv"));
  const std::string conf = to_slurm_topology(csv, slurm_tree(csv));
  FabricBuilder b;
  ASSERT_TRUE(read_slurm_topology(conf, "t.conf", SourceOptions{}, b));
  const Fabric back = test::build(b);
  EXPECT_TRUE(diff(csv, back).empty()) << diff_text(diff(csv, back));
  // With stated counts on the CSV side only, the leaves' figures differ but are not compared.
  const Fabric stated = must_read(test::slurp(test::data("tiers.csv")) +
                                      "links,lower,upper,count,rate\n"
                                      "leaf,spine,4,\n",
                                  true);
  const FabricDiff d = diff(stated, back);
  EXPECT_TRUE(d.empty()) << diff_text(d);
  EXPECT_EQ(d.notes.back(),
            "not compared, because one side only assumes them: 14 link count(s) or rate(s), 3 "
            "leaf oversubscription figure(s)");
}
