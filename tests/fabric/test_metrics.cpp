// SPDX-License-Identifier: GPL-2.0-or-later
// Prometheus metrics of a fabric (fabric/metrics.hpp): the exact series for each kind of
// problem, labels the InfiniBand exporters join on, escaping, stable bytes. promtool and the
// textfile collector's rules: tests/cli/metrics_promtool.sh.
#include "fabricplace/fabric/metrics.hpp"

#include <gtest/gtest.h>

#include "fabricplace/fabric/json_io.hpp"
#include "fabricplace/fabric/spec.hpp"
#include "test_support.hpp"

using namespace fabricplace;
using namespace fabricplace::fabric;

namespace {

bool has_line(const std::string& text, const std::string& line) {
  return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

Fabric from_json(const std::string& text) {
  FabricBuilder b;
  auto r = read_json(text, "in.json", b);
  EXPECT_TRUE(r) << r.error().to_string();
  auto f = b.build();
  EXPECT_TRUE(f) << f.error().to_string();
  return std::move(*f);
}

}  // namespace

TEST(Metrics, GuidAsTheExportersLabelIt) {
  EXPECT_EQ(guid_label(0xfc6a1c0300100003ULL), "0xfc6a1c0300100003");
  EXPECT_EQ(guid_label(0x2c9ULL), "0x00000000000002c9");
}

// tests/data/fabrics/health_fat2.json: leaf01 port 3 trained at 1x, the leaf02-spine01 link
// on port 3 lost since the previous discovery, leaf02 port 4 with 250 symbol errors, node001's
// counters unreadable.
TEST(Metrics, EveryKindOfProblemAsItsSeries) {
  const Fabric f = test::load(test::fabric_file("health_fat2.json"));
  const auto m = to_prometheus(f);
  for (const char* line : {
           "fabricplace_degraded_links 1",
           "fabricplace_port_degraded{guid=\"0xfc6a1c0300100001\",port=\"3\",node=\"leaf01\","
           "peer_guid=\"0xfc6a1c0300100000\",peer_port=\"1\",peer_node=\"spine01\",reason="
           "\"width\",detail=\"width 1x < 4x\"} 1",
           "fabricplace_port_degraded{guid=\"0xfc6a1c0300100000\",port=\"1\",node=\"spine01\","
           "peer_guid=\"0xfc6a1c0300100001\",peer_port=\"3\",peer_node=\"leaf01\",reason="
           "\"width\",detail=\"width 1x < 4x\"} 1",
           "fabricplace_port_rate_bytes_per_second{guid=\"0xfc6a1c0300100001\",port=\"3\","
           "node=\"leaf01\"} 6250000000",
           "fabricplace_port_expected_rate_bytes_per_second{guid=\"0xfc6a1c0300100001\",port="
           "\"3\",node=\"leaf01\"} 25000000000",
           "fabricplace_unhealthy_links 2",
           "fabricplace_port_errors_over_threshold{guid=\"0xfc6a1c0300100002\",port=\"4\",node="
           "\"leaf02\",counter=\"SymbolErrorCounter\"} 250",
           "fabricplace_port_health_unknown{guid=\"0x1070fd0300200001\",port=\"1\",node="
           "\"node001\",device=\"mlx5_0\"} 1",
           "fabricplace_lost_links 1",
           "fabricplace_port_lost{guid=\"0xfc6a1c0300100002\",port=\"3\",node=\"leaf02\","
           "was_peer_guid=\"0xfc6a1c0300100000\",was_peer_port=\"3\",was_peer_node=\"spine01\"} 1",
           "fabricplace_tier_degraded_links{tier=\"leaf-spine\"} 1",
           "fabricplace_tier_links{tier=\"host-leaf\"} 4",
           "fabricplace_leaf_oversubscription_ratio{leaf=\"leaf01\",guid="
           "\"0xfc6a1c0300100001\"} 1.6",
           "fabricplace_leaf_oversubscription_ratio{leaf=\"leaf02\",guid="
           "\"0xfc6a1c0300100002\"} 2",
           "fabricplace_leaf_hosts{leaf=\"leaf02\",guid=\"0xfc6a1c0300100002\"} 2",
       })
    EXPECT_TRUE(has_line(m, line)) << line << "\n---\n" << m;
  // Nothing from fabric watch without a run.
  EXPECT_EQ(m.find("fabricplace_discovery"), std::string::npos);
  EXPECT_EQ(to_prometheus(f), m);  // the same bytes every time
}

TEST(Metrics, AHealthyFabricHasNoProblemSeries) {
  const auto m = to_prometheus(*generate("fat3:pods=2,leaves=2,down=4,up=2"));
  EXPECT_TRUE(has_line(m, "fabricplace_degraded_links 0"));
  EXPECT_TRUE(has_line(m, "fabricplace_lost_links 0"));
  EXPECT_EQ(m.find("fabricplace_port_degraded{"), std::string::npos);
  EXPECT_EQ(m.find("fabricplace_port_lost{"), std::string::npos);
  // 3 levels: the spines' and the pods' oversubscription (4 hosts of 200 Gb/s : 2 uplinks).
  EXPECT_TRUE(has_line(m, "fabricplace_pod_oversubscription_ratio{pod=\"1\"} 2")) << m;
  EXPECT_NE(m.find("fabricplace_switch_oversubscription_ratio{switch=\"p01-spine01\""),
            std::string::npos)
      << m;
}

TEST(Metrics, RunValuesWhenGivenAndLabelsEscaped) {
  // An origin with quotes, a backslash and a line feed (which the JSON reader keeps as the
  // text \x0a): label values are escaped, never cut.
  std::string json = to_json(*generate("fat2:leaves=1,down=1,up=1"));
  const auto at = json.find("\"origin\": \"");
  json.replace(at, json.find('\n', at) - at, "\"origin\": \"a \\\"b\\\" c:\\\\d\\ne\",");
  const Fabric f = from_json(json);
  MetricsRun run;
  run.discovery_time = 1764936000.5;
  run.discovery_duration = 2.25;
  run.changes = 3;
  run.accepted = true;
  run.runs = 7;
  const auto m = to_prometheus(f, run);
  EXPECT_TRUE(has_line(
      m, R"(fabricplace_fabric_info{origin="a \"b\" c:\\d\\x0ae",link_layer="infiniband"} 1)"))
      << m;
  EXPECT_TRUE(has_line(m, "fabricplace_discovery_timestamp_seconds 1.76494e+09")) << m;
  EXPECT_TRUE(has_line(m, "fabricplace_discovery_duration_seconds 2.25"));
  EXPECT_TRUE(has_line(m, "fabricplace_discovery_changes 3"));
  EXPECT_TRUE(has_line(m, "fabricplace_discovery_accepted 1"));
  EXPECT_TRUE(has_line(m, "# TYPE fabricplace_discoveries_total counter"));
  EXPECT_TRUE(has_line(m, "fabricplace_discoveries_total 7"));
}
