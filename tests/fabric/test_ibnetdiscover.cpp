// SPDX-License-Identifier: GPL-2.0-or-later
// Parsing details of ibnetdiscover output beyond the truth files: LIDs, rates, down ports,
// -p vs plain agreement, and the dump writer read back.
#include <gtest/gtest.h>

#include "fabricplace/fabric/export.hpp"
#include "fabricplace/fabric/json_io.hpp"
#include "fabricplace/fabric/sources.hpp"
#include "fabricplace/fabric/spec.hpp"
#include "test_support.hpp"

using namespace fabricplace;
using namespace fabricplace::fabric;

namespace {
Result<Fabric> parse_text(const std::string& text, const std::string& name = "mem.txt") {
  FabricBuilder b("test");
  if (auto r = read_ibnetdiscover(text, name, b); !r) return std::unexpected(r.error());
  return b.build();
}
}  // namespace

TEST(Ibnetdiscover, ReadsLidsAfterTheSubnetManagerRan) {
  const Fabric f = test::load(test::fabric_file("fat2_L8-ftree.ibnetdiscover.txt"));
  const auto leaf = f.find_switch("leaf01");
  ASSERT_TRUE(leaf);
  EXPECT_NE(f.node(*leaf).lid, 0);
  const auto host = f.find_host("node001");
  ASSERT_TRUE(host);
  const NodeId ca = f.host(*host).hcas.front();
  ASSERT_EQ(f.ports_of(ca).size(), 1u);
  EXPECT_NE(f.ports_of(ca)[0].rec.lid, 0);
  EXPECT_EQ(f.ports_of(ca)[0].rec.guid, f.node(ca).guid + 1);  // ibsim: port GUID = node + port
  // All LIDs distinct across switches and CA ports.
  std::set<int> lids;
  for (NodeId s : f.switches()) EXPECT_TRUE(lids.insert(f.node(s).lid).second);
  for (NodeId c : f.cas()) EXPECT_TRUE(lids.insert(f.ports_of(c)[0].rec.lid).second);
}

TEST(Ibnetdiscover, PlainAndPortsReportsDescribeTheSameFabric) {
  for (const char* n : {"fat2_L8", "fat3_small", "over_L20", "rail_4su"}) {
    const Fabric a = test::load(test::fabric_file(std::string(n) + ".ibnetdiscover.txt"));
    const Fabric b = test::load(test::fabric_file(std::string(n) + ".ibnetdiscover-p.txt"));
    EXPECT_EQ(a.num_links(), b.num_links()) << n;
    EXPECT_EQ(a.switches().size(), b.switches().size()) << n;
    EXPECT_EQ(a.cas().size(), b.cas().size()) << n;
    EXPECT_EQ(a.num_hosts(), b.num_hosts()) << n;
    // Same switch GUIDs, same switch-to-switch wiring (CA node GUIDs are not in -p output).
    for (NodeId s : a.switches()) {
      const auto other = b.find_guid(a.node(s).guid);
      ASSERT_TRUE(other) << n;
      EXPECT_EQ(a.node(s).description, b.node(*other).description);
      EXPECT_EQ(a.topology().switch_name[idx(s)], b.topology().switch_name[idx(*other)]);
    }
    EXPECT_EQ(a.topology().leaf_stats.size(), b.topology().leaf_stats.size());
  }
}

TEST(Ibnetdiscover, PortsReportKeepsDownPorts) {
  // One switch port without a peer, as ibnetdiscover -p prints it.
  const std::string text =
      "CA     0  1 0x1070fd0300200001 4x HDR - SW     0  1 0xfc6a1c0300100004 ( 'node001 mlx5_0' - "
      "'MF0;leaf01:MQM8700/U1' )\n"
      "SW     0  1 0xfc6a1c0300100004 4x HDR - CA     0  1 0x1070fd0300200001 ( "
      "'MF0;leaf01:MQM8700/U1' - 'node001 mlx5_0' )\n"
      "SW     0  2 0xfc6a1c0300100004 4x SDR                                    "
      "'MF0;leaf01:MQM8700/U1'\n";
  auto f = parse_text(text);
  ASSERT_TRUE(f) << f.error().to_string();
  test::expect_valid(*f);
  const auto leaf = f->find_switch("leaf01");
  ASSERT_TRUE(leaf);
  const auto ports = f->ports_of(*leaf);
  ASSERT_EQ(ports.size(), 2u);
  EXPECT_NE(ports[0].link, kNoLink);
  EXPECT_EQ(ports[1].rec.number, 2);
  EXPECT_EQ(ports[1].link, kNoLink);
  // Survives the JSON round trip as a down port.
  FabricBuilder b;
  ASSERT_TRUE(read_json(to_json(*f), "x.json", b));
  auto g = b.build();
  ASSERT_TRUE(g);
  EXPECT_EQ(to_json(*g), to_json(*f));
}

TEST(Ibnetdiscover, DegradedRatesAreRead) {
  auto gen = generate("fat2:leaves=2,down=4,up=4,degrade=leaf01:5:w=1,degrade=leaf02:6:s=EDR");
  ASSERT_TRUE(gen) << gen.error().to_string();
  auto f = parse_text(to_ibnetdiscover(*gen));
  ASSERT_TRUE(f) << f.error().to_string();
  ASSERT_EQ(f->topology().degraded_links.size(), 2u);
  EXPECT_EQ(f->link(f->topology().degraded_links[0].link).rate.to_string(), "1xHDR");
  EXPECT_EQ(f->link(f->topology().degraded_links[1].link).rate.to_string(), "4xEDR");
}

TEST(Ibnetdiscover, WrittenDumpReadsBackToTheSameFabric) {
  for (const char* spec :
       {"fat2:leaves=4,down=8,up=8", "fat3:pods=2,leaves=2,down=4,up=4,spines=2",
        "rail:sus=2,hosts=4,rails=4,up=4", "rail:sus=2,hosts=4,rails=2,up=4,planes=1",
        "fat2:leaves=3,down=5,up=5,degrade=leaf02:7:w=2,cut=leaf03:6"}) {
    auto gen = generate(spec);
    ASSERT_TRUE(gen) << gen.error().to_string();
    auto back = parse_text(to_ibnetdiscover(*gen));
    ASSERT_TRUE(back) << spec << ": " << back.error().to_string();
    test::expect_valid(*back);
    // Equal except: the plain format does not list down ports.
    std::string a = to_json(*gen), b = to_json(*back);
    a = a.substr(a.find("\"nodes\""));
    b = b.substr(b.find("\"nodes\""));
    if (std::string(spec).find("cut=") == std::string::npos) {
      EXPECT_EQ(a, b) << spec;
    } else {
      EXPECT_EQ(gen->num_links(), back->num_links()) << spec;
    }
  }
}

TEST(Ibnetdiscover, ToleratesChassisGroupingAndFullInfo) {
  // ibnetdiscover -g adds Chassis headers and [ext N]; -f adds s=/w=/v= after the rate.
  const std::string text =
      "#\n# Topology file\n#\n\nChassis 1 (guid 0x1234)\n\n# Spine Nodes\n\nNon-Chassis Nodes\n"
      "vendid=0x2c9\ndevid=0xcf08\nsysimgguid=0xa\nswitchguid=0xa(a)\n"
      "Switch\t2 \"S-000000000000000a\"\t\t# \"MF0;sw1:X/U1\" enhanced port 0 lid 3 lmc 0\n"
      "[1][ext 5]\t\"H-0000000000000010\"[1](11) \t\t# \"h1 mlx5_0\" lid 7 4xEDR s=2 w=2 v=3\n"
      "\nvendid=0x2c9\ndevid=0x101b\nsysimgguid=0x10\ncaguid=0x10\n"
      "Ca\t1 \"H-0000000000000010\"\t\t# \"h1 mlx5_0\"\n"
      "[1](11) \t\"S-000000000000000a\"[1][ext 5]\t\t# lid 7 lmc 0 \"MF0;sw1:X/U1\" lid 3 4xEDR\n";
  auto f = parse_text(text);
  ASSERT_TRUE(f) << f.error().to_string();
  test::expect_valid(*f);
  EXPECT_EQ(f->num_links(), 1u);
  EXPECT_EQ(f->link(LinkId{0}).rate.to_string(), "4xEDR");
  EXPECT_EQ(f->node(*f->find_switch("sw1")).lid, 3);
}
