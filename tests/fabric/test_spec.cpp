// SPDX-License-Identifier: GPL-2.0-or-later
// Synthetic specs: shapes, naming, and equality with the ibsim-made shared dumps.
#include "fabricplace/fabric/spec.hpp"

#include <gtest/gtest.h>

#include "fabricplace/fabric/json_io.hpp"
#include "test_support.hpp"

using namespace fabricplace;
using namespace fabricplace::fabric;

namespace {
std::string without_origin(std::string json) {
  const auto b = json.find("  \"origin\"");
  const auto e = json.find('\n', b);
  return json.erase(b, e - b + 1);
}
Fabric gen(const std::string& spec) {
  return test::gen(spec);
}
}  // namespace

// The shared dumps were made by ibsim from the lab generator's net files; our specs build
// the same fabric, GUID for GUID and port for port.
TEST(Spec, ReproducesTheIbsimDumpsExactly) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"fat2:leaves=8,down=20,up=20", {"fat2_L8.ibnetdiscover.txt"}},
      {"fat3:pods=4,leaves=4,down=20,up=20,spines=4", {"fat3_small.ibnetdiscover.txt"}},
      {"fat2:leaves=20,down=32,up=8", {"over_L20.ibnetdiscover.txt"}},
      {"rail:sus=4,hosts=20,rails=8", {"rail_4su.ibnetdiscover.txt"}},
  };
  for (const auto& [spec, files] : cases)
    EXPECT_EQ(without_origin(to_json(gen(spec))),
              without_origin(to_json(test::load(test::fabric_file(files[0])))))
        << spec;
  std::vector<std::string> planes;
  for (int k = 0; k < 8; ++k)
    planes.push_back(
        test::fabric_file("rail_4su_planes/plane" + std::to_string(k) + ".ibnetdiscover.txt"));
  auto merged = load_fabrics(planes);
  ASSERT_TRUE(merged);
  test::expect_valid(*merged);
  EXPECT_EQ(without_origin(to_json(gen("rail:sus=4,hosts=20,rails=8,planes=1"))),
            without_origin(to_json(*merged)));
}

TEST(Spec, HostsAreNumberedLeafByLeafWithAtLeastThreeDigits) {
  const Fabric f = gen("fat2:leaves=2,down=4,up=4");
  const auto leaf1 = *f.find_switch("leaf01");
  std::vector<std::string> on_leaf1;
  for (std::uint32_t h = 0; h < f.num_hosts(); ++h)
    if (f.topology().host_leaves[h] == std::vector<NodeId>{leaf1})
      on_leaf1.push_back(f.host(HostId{h}).name);
  EXPECT_EQ(on_leaf1, (std::vector<std::string>{"node001", "node002", "node003", "node004"}));
  EXPECT_EQ(f.node(leaf1).description, "MF0;leaf01:MQM8700/U1");
  EXPECT_EQ(f.node(f.host(HostId{0}).hcas[0]).description, "node001 mlx5_0");
  // Wider numbers when the host count needs them.
  const Fabric big = gen("fat2:leaves=40,down=32,up=8,radix=64");
  EXPECT_EQ(big.num_hosts(), 1280u);
  EXPECT_EQ(big.host(HostId{0}).name, "node0001");
  EXPECT_EQ(big.host(HostId{1279}).name, "node1280");
}

TEST(Spec, Fat3CountsLeavesAndSpinesPerPod) {
  const Fabric f = gen("fat3:pods=4,leaves=8,down=16,up=16,spines=16");
  EXPECT_EQ(f.num_hosts(), 512u);
  EXPECT_EQ(f.topology().leaves.size(), 32u);
  EXPECT_EQ(f.topology().pods.size(), 4u);
  for (const auto& pod : f.topology().pods) {
    EXPECT_EQ(pod.leaves.size(), 8u);
    EXPECT_EQ(pod.spines.size(), 16u);
    EXPECT_EQ(pod.hosts.size(), 128u);
  }
  EXPECT_EQ(f.topology().max_level, 3);
  for (const auto& st : f.topology().leaf_stats) EXPECT_DOUBLE_EQ(st.oversubscription, 1.0);
}

TEST(Spec, RailFabricsHaveRailsAndRailGroups) {
  const Fabric f = gen("rail:sus=4,hosts=20,rails=8");
  EXPECT_TRUE(f.topology().rail_optimised);
  EXPECT_EQ(f.num_hosts(), 80u);
  EXPECT_EQ(f.cas().size(), 640u);
  ASSERT_EQ(f.topology().rails.size(), 8u);
  EXPECT_EQ(f.topology().rails[3].device, "mlx5_3");
  ASSERT_EQ(f.topology().pods.size(), 4u);
  EXPECT_EQ(f.topology().pods[1].hosts.size(), 20u);
  EXPECT_EQ(f.host(f.topology().pods[1].hosts.front()).name, "node021");
}

TEST(Spec, DegradeAndCutChangeExactlyThatLink) {
  const Fabric f = gen("fat2:leaves=2,down=4,up=4,degrade=leaf01:5:w=1,cut=leaf02:8");
  ASSERT_EQ(f.topology().degraded_links.size(), 1u);
  const Link& l = f.link(f.topology().degraded_links[0].link);
  EXPECT_EQ(l.rate.to_string(), "1xHDR");
  EXPECT_EQ(f.topology().degraded_links[0].reason, "width 1x < 4x");
  EXPECT_EQ(f.num_links(), 8u + 8u - 1u);
  const auto leaf2 = *f.find_switch("leaf02");
  EXPECT_EQ(f.topology().leaf_stats[1].leaf, leaf2);
  EXPECT_EQ(f.topology().leaf_stats[1].up_links, 3u);
  EXPECT_DOUBLE_EQ(f.topology().leaf_stats[1].oversubscription, 4.0 / 3.0);
}

struct BadSpec {
  const char* spec;
  const char* error;
  friend void PrintTo(const BadSpec& b, std::ostream* os) { *os << b.spec; }
};
class SpecErrors : public ::testing::TestWithParam<BadSpec> {};
TEST_P(SpecErrors, NameTheKey) {
  auto r = generate(GetParam().spec);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().to_string(), GetParam().error);
  EXPECT_EQ(r.error().code, ErrorCode::kUsage);
}
INSTANTIATE_TEST_SUITE_P(
    Table, SpecErrors,
    ::testing::Values(
        BadSpec{"fat2:leafs=8",
                "spec: fat2: unknown key \"leafs\" (expected one of: leaves, down, up, spines, "
                "radix, speed, width, nvl, gpus, degrade, cut)"},
        BadSpec{"fat4:leaves=8", "spec: unknown fabric kind \"fat4\", expected fat2, fat3 or rail"},
        BadSpec{"fat2:leaves=0", "spec: fat2: leaves=0: expected an integer from 1 to 1048576"},
        BadSpec{"fat2:leaves=x", "spec: fat2: leaves=x: expected an integer from 1 to 1048576"},
        BadSpec{"fat2:leaves=2,down=4,up=4,spines=abc",
                "spec: fat2: spines=abc: expected an integer from 1 to 1048576"},
        BadSpec{"fat3:cores=y", "spec: fat3: cores=y: expected an integer from 1 to 1048576"},
        BadSpec{"rail:planes=2", "spec: rail: planes=2: expected an integer from 0 to 1"},
        BadSpec{"fat2:leaves", "spec: fat2: \"leaves\": expected key=value"},
        BadSpec{"fat2:leaves=2,leaves=3", "spec: fat2: key \"leaves\" given twice"},
        BadSpec{"fat2:down=30,up=20", "spec: fat2: down + up = 50 exceeds radix 40"},
        BadSpec{"fat2:speed=FAST",
                "spec: fat2: speed=FAST: expected SDR, DDR, QDR, FDR, EDR, HDR, NDR or XDR"},
        BadSpec{"fat2:width=3x", "spec: fat2: width=3x: expected 1x, 2x, 4x, 8x or 12x"},
        BadSpec{"fat2:spines=3", "spec: fat2: spines=3 must divide up=20"},
        BadSpec{"fat2:leaves=50",
                "spec: fat2: each spine needs 50 ports > radix 40; add spines or raise radix"},
        BadSpec{"fat2:leaves=2,degrade=leaf09:1:w=1",
                "spec: fat2: degrade=leaf09:1:w=1: no switch named \"leaf09\""},
        BadSpec{"fat2:leaves=2,down=4,up=4,degrade=leaf01:39:w=1",
                "spec: fat2: degrade=leaf01:39:w=1: port 39 of leaf01 has no link"},
        BadSpec{"fat2:leaves=2,degrade=leaf01:1:w=3",
                "spec: fat2: degrade=leaf01:1:w=3: expected w=1, w=2, w=4, w=8 or w=12"},
        BadSpec{"fat2:leaves=2,cut=leaf01", "spec: fat2: cut=leaf01: expected SWITCH:PORT"},
        BadSpec{"fat2:leaves=2,down=4,up=4,cut=leaf01:1,cut=leaf01:1",
                "spec: fat2: cut=leaf01:1: that link is already cut"},
        BadSpec{
            "fat2:leaves=2,down=4,up=4,degrade=leaf01:1:w=1,cut=leaf01:1",
            "spec: fat2: cut=leaf01:1: that link is also degraded; cut or degrade it, not both"},
        BadSpec{
            "fat3:cores=6",
            "spec: fat3: cores=6 must be a multiple of spines=20 (one core plane per spine index)"},
        BadSpec{"rail:hosts=30", "spec: rail: hosts + up = 60 exceeds radix 40"}));
