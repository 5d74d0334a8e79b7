// SPDX-License-Identifier: GPL-2.0-or-later
// Link health: counters judged against thresholds, lost links, JSON round trip, diff.
#include "fabricplace/fabric/health.hpp"

#include <gtest/gtest.h>

#include "fabricplace/fabric/diff.hpp"
#include "fabricplace/fabric/json_io.hpp"
#include "fabricplace/fabric/report.hpp"
#include "test_support.hpp"

using namespace fabricplace;
using namespace fabricplace::fabric;

namespace {
Fabric rebuild(FabricBuilder& b) {
  return test::build(b);
}
}  // namespace

TEST(HealthConfig, TheShippedFileIsTheDefault) {
  auto parsed = parse_health_config(
      test::slurp(std::string(FABRICPLACE_SOURCE_DIR) + "/etc/fabricplace/health.conf"),
      "health.conf");
  ASSERT_TRUE(parsed) << parsed.error().to_string();
  EXPECT_EQ(parsed->max, HealthThresholds::defaults().max);
}

TEST(HealthConfig, ErrorsNameFileLineAndExpectation) {
  EXPECT_EQ(parse_health_config("LinkDownedCounter = x\n", "h.conf").error().to_string(),
            "h.conf:1: LinkDownedCounter: expected a non-negative integer threshold, got \"x\"");
  EXPECT_EQ(parse_health_config("# c\nLinkDownedCount = 1\n", "h.conf").error().line, 2);
  EXPECT_NE(parse_health_config("LinkDownedCount = 1\n", "h.conf")
                .error()
                .message.find("unknown counter \"LinkDownedCount\""),
            std::string::npos);
  EXPECT_EQ(parse_health_config("LinkDownedCounter\n", "h.conf").error().to_string(),
            "h.conf:1: expected \"CounterName = N\", got \"LinkDownedCounter\"");
  EXPECT_EQ(parse_health_config("VL15Dropped = 1\nVL15Dropped = 2\n", "h.conf").error().to_string(),
            "h.conf:2: VL15Dropped already set at line 1");
}

TEST(HealthConfig, JudgesOnlyCountersWithThresholds) {
  std::array<std::uint64_t, kNumCounters> c{};
  c[static_cast<std::size_t>(Counter::kLinkDownedCounter)] = 3;
  c[static_cast<std::size_t>(Counter::kSymbolErrorCounter)] = 100;  // at the threshold: fine
  c[static_cast<std::size_t>(Counter::kPortXmitDiscards)] = 99999;  // not judged by default
  EXPECT_EQ(judge(c, HealthThresholds::defaults()),
            std::vector<std::string>{"LinkDownedCounter 3 > 0"});
}

TEST(Health, CountersAndVerdictsSurviveJsonAndShowNamesTheLink) {
  FabricBuilder b("health");
  ASSERT_TRUE(b.merge(test::gen("fat2:leaves=2,down=2,up=2")));
  PortHealth h;
  h.has_counters = true;
  h.counters[static_cast<std::size_t>(Counter::kLinkDownedCounter)] = 3;
  h.problems = judge(h.counters, HealthThresholds::defaults());
  const Guid leaf01 = 0xfc6a1c0300100001;
  ASSERT_TRUE(b.set_port_health(leaf01, 3, h));  // leaf01's first uplink
  const Fabric f = rebuild(b);
  ASSERT_EQ(f.topology().unhealthy_links.size(), 1u);
  EXPECT_EQ(f.topology().unhealthy_links[0].problems,
            std::vector<std::string>{"leaf01[3]: LinkDownedCounter 3 > 0"});
  const std::string json = to_json(f);
  EXPECT_NE(json.find("\"counters\": {\"SymbolErrorCounter\": 0, \"LinkErrorRecoveryCounter\": 0, "
                      "\"LinkDownedCounter\": 3"),
            std::string::npos);
  FabricBuilder again;
  ASSERT_TRUE(read_json(json, "h.json", again));
  const Fabric g = rebuild(again);
  EXPECT_EQ(to_json(g), json);
  EXPECT_NE(
      show_text(g).find(
          "    errors leaf01[3] <-> spine01[1]: leaf01[3]: LinkDownedCounter 3 > 0; hosts behind: "
          "node[001-002]\n"),
      std::string::npos)
      << show_text(g);
}

TEST(Health, LinksLostSinceThePreviousDiscoveryAreMarked) {
  const Fabric before = test::gen("fat2:leaves=2,down=2,up=2");
  FabricBuilder b("after");
  ASSERT_TRUE(b.merge(test::gen("fat2:leaves=2,down=2,up=2,cut=leaf02:3")));
  EXPECT_EQ(note_lost_links(b, before), 1u);
  const Fabric f = rebuild(b);
  ASSERT_EQ(f.topology().lost_links.size(), 1u);  // reported once, from the leaf end
  const std::string text = show_text(f);
  EXPECT_NE(text.find("    down leaf02[3]: linked to spine01[3] in the previous discovery; hosts "
                      "behind: node[003-004]\n"),
            std::string::npos)
      << text;
  FabricBuilder again;
  ASSERT_TRUE(read_json(to_json(f), "h.json", again));
  EXPECT_EQ(to_json(rebuild(again)), to_json(f));
}

TEST(Diff, ReportsEveryKindOfChange) {
  const Fabric a = test::gen("fat2:leaves=2,down=2,up=2");
  const Fabric b = test::gen("fat2:leaves=2,down=2,up=2,cut=leaf01:3,degrade=leaf02:4:w=1");
  const FabricDiff d = diff(a, b);
  ASSERT_EQ(d.removed.size(), 1u);
  EXPECT_EQ(d.removed[0].link, "leaf01[3] - spine01[1]");
  ASSERT_EQ(d.degraded.size(), 1u);
  EXPECT_EQ(d.degraded[0].link, "leaf02[4] - spine01[4]");
  EXPECT_EQ(d.degraded[0].after, "1xHDR");
  ASSERT_EQ(d.oversubscription.size(), 2u);
  EXPECT_EQ(d.oversubscription[0].leaf, "leaf01");
  EXPECT_DOUBLE_EQ(d.oversubscription[0].after, 2.0);
  EXPECT_EQ(diff_text(d),
            "removed leaf01[3] - spine01[1]: 4xHDR\n"
            "degraded leaf02[4] - spine01[4]: 4xHDR -> 1xHDR\n"
            "oversubscription leaf01: 1.00:1 -> 2.00:1\n"
            "oversubscription leaf02: 1.00:1 -> 1.60:1\n");
  const FabricDiff back = diff(b, a);
  EXPECT_EQ(back.added.size(), 1u);
  EXPECT_EQ(back.recovered.size(), 1u);
  EXPECT_TRUE(diff(a, a).empty());
  EXPECT_EQ(diff_text(diff(a, a)), "no changes\n");
}

TEST(Diff, HostsThatMoveBetweenLeaves) {
  const Fabric a = test::gen("fat2:leaves=2,down=2,up=2");
  // The same hosts on swapped leaves: a cabling change.
  FabricBuilder b("swapped");
  const std::string conf =
      "SwitchName=leaf01 Nodes=node[003-004]\nSwitchName=leaf02 Nodes=node[001-002]\n"
      "SwitchName=spine01 Switches=leaf[01-02]\n";
  ASSERT_TRUE(read_slurm_topology(conf, "t.conf", SourceOptions{}, b));
  const Fabric c = rebuild(b);
  const FabricDiff d = diff(a, c);
  ASSERT_EQ(d.moved.size(), 4u);
  EXPECT_EQ(d.moved[0].host, "node001");
  EXPECT_EQ(d.moved[0].before, "leaf01");
  EXPECT_EQ(d.moved[0].after, "leaf02");
}

TEST(Health, ALinkToAHostThatIsGoneIsLostOnTheLeaf) {
  const Fabric before = test::gen("fat2:leaves=2,down=2,up=2");
  // node002 is gone entirely (a powered-off host is not discovered at all).
  FabricBuilder b("after");
  const Fabric full = test::gen("fat2:leaves=2,down=2,up=2,cut=leaf01:2");
  for (const auto& n : full.nodes()) {
    if (n.description != "node002 mlx5_0") {
      ASSERT_TRUE(b.add_node(n));
    }
  }
  for (const auto& p : full.ports()) {
    if (full.node(p.node).description != "node002 mlx5_0") {
      ASSERT_TRUE(b.add_port(full.node(p.node).guid, p.rec));
    }
  }
  for (const auto& l : full.links())
    ASSERT_TRUE(b.add_link(full.node(l.node_a).guid, full.port(l.a).rec.number,
                           full.node(l.node_b).guid, full.port(l.b).rec.number, l.rate));
  EXPECT_EQ(note_lost_links(b, before), 1u);
  const Fabric f = rebuild(b);
  ASSERT_EQ(f.topology().lost_links.size(), 1u);
  EXPECT_NE(show_text(f).find("    down leaf01[2]: linked to node002 mlx5_0[1] in the previous "
                              "discovery; hosts behind: node002\n"),
            std::string::npos)
      << show_text(f);
}

TEST(Diff, HealthIsComparedOnlyWhereCountersWereRead) {
  FabricBuilder with("with counters");
  ASSERT_TRUE(with.merge(test::gen("fat2:leaves=2,down=2,up=2")));
  PortHealth h;
  h.has_counters = true;
  h.counters[static_cast<std::size_t>(Counter::kLinkDownedCounter)] = 2;
  h.problems = judge(h.counters, HealthThresholds::defaults());
  ASSERT_TRUE(with.set_port_health(0xfc6a1c0300100001, 3, h));
  const Fabric a = rebuild(with);
  const Fabric b = test::gen("fat2:leaves=2,down=2,up=2");  // the same, counters not read
  EXPECT_TRUE(diff(a, b).healthy_again.empty());
  EXPECT_EQ(diff(b, a).unhealthy,
            std::vector<std::string>{"leaf01[3] - spine01[1]: leaf01[3]: LinkDownedCounter 2 > 0"});
}

TEST(Diff, IncompleteSidesAreSaidFirst) {
  FabricBuilder partial("partial");
  ASSERT_TRUE(partial.merge(test::gen("fat2:leaves=2,down=2,up=2")));
  partial.add_incomplete("1 port(s) whose PortInfo never arrived: node001 mlx5_0[1]");
  const Fabric p = rebuild(partial);
  const std::string text = diff_text(diff(test::gen("fat2:leaves=2,down=2,up=2"), p));
  EXPECT_EQ(text,
            "WARNING: the NEW fabric is INCOMPLETE (a partial discovery published with "
            "--allow-partial); what it "
            "lacks shows as removed:\n  1 port(s) whose PortInfo never arrived: node001 "
            "mlx5_0[1]\nno changes\n");
}

TEST(Health, ALostLinkStaysLostFromDiscoveryToDiscovery) {
  const Fabric first = test::gen("fat2:leaves=2,down=2,up=2");
  FabricBuilder b2("second");
  ASSERT_TRUE(b2.merge(test::gen("fat2:leaves=2,down=2,up=2,cut=leaf02:3")));
  note_lost_links(b2, first);
  const Fabric second = rebuild(b2);
  ASSERT_EQ(second.topology().lost_links.size(), 1u);
  // Third discovery against the second: the link is still down, still lost.
  FabricBuilder b3("third");
  ASSERT_TRUE(b3.merge(test::gen("fat2:leaves=2,down=2,up=2,cut=leaf02:3")));
  note_lost_links(b3, second);
  const Fabric third = rebuild(b3);
  ASSERT_EQ(third.topology().lost_links.size(), 1u);
  const std::string j2 = to_json(second), j3 = to_json(third);
  EXPECT_EQ(j3.substr(j3.find("\"nodes\"")), j2.substr(j2.find("\"nodes\"")));
  // Back again: no longer lost.
  FabricBuilder b4("fourth");
  ASSERT_TRUE(b4.merge(test::gen("fat2:leaves=2,down=2,up=2")));
  note_lost_links(b4, third);
  EXPECT_TRUE(rebuild(b4).topology().lost_links.empty());
}

TEST(Health, JsonHealthKeysOfTheWrongShapeAreNamed) {
  const std::string node =
      R"({"format": "fabricplace-fabric", "version": 1, "nodes": [{"guid": "0x1", "type": "ca", "desc": "a x", "nports": 1, "vendid": "0x0", "devid": "0x0", "sysimgguid": "0x0", "ports": [{"port": 1, "guid": "0x2", "lid": 0, "lmc": 0, )";
  FabricBuilder b;
  auto r = read_json(node + R"("problems": "x"}]}], "links": []})", "h.json", b);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().to_string(),
            "h.json:1: nodes[0].ports[0].problems: expected an array of strings");
  FabricBuilder c;
  r = read_json(node + R"("was_linked_to": ["0x9", 1]}]}], "links": []})", "h.json", c);
  ASSERT_FALSE(r);
  EXPECT_EQ(
      r.error().to_string(),
      "h.json:1: nodes[0].ports[0].was_linked_to: expected [\"0x<guid>\", port, \"<description>\", "
      "\"switch|ca|router\"]");
}
