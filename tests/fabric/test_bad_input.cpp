// SPDX-License-Identifier: GPL-2.0-or-later
// Bad ibnetdiscover input: every error names the file, the first bad line (1-based; for
// cross-reference errors, the referring line) and what was expected.
#include <gtest/gtest.h>

#include "fabricplace/common/limits.hpp"
#include "fabricplace/common/strings.hpp"
#include "fabricplace/fabric/json_io.hpp"
#include "fabricplace/fabric/sources.hpp"
#include "test_support.hpp"

using namespace fabricplace;
using namespace fabricplace::fabric;

namespace {

// A valid two-host dump: line numbers below refer to this layout.
const std::string kSwitch =
    "vendid=0x2c9\n"                                     // 1
    "devid=0xcf08\n"                                     // 2
    "sysimgguid=0xfc6a1c0300100000\n"                    // 3
    "switchguid=0xfc6a1c0300100000(fc6a1c0300100000)\n"  // 4
    "Switch\t40 \"S-fc6a1c0300100000\"\t\t# \"MF0;leaf01:MQM8700/U1\" enhanced port 0 lid "
    "0 lmc 0\n"  // 5
    "[1]\t\"H-1070fd0300200000\"[1](1070fd0300200001) \t\t# \"node001 mlx5_0\" lid 0 "
    "4xHDR\n"  // 6
    "[2]\t\"H-1070fd0300200002\"[1](1070fd0300200003) \t\t# \"node002 mlx5_0\" lid 0 "
    "4xHDR\n"  // 7
    "\n";      // 8
const std::string kCa1 =
    "vendid=0x2c9\n"                                          // 9
    "devid=0x101b\n"                                          // 10
    "caguid=0x1070fd0300200000\n"                             // 11
    "Ca\t1 \"H-1070fd0300200000\"\t\t# \"node001 mlx5_0\"\n"  // 12
    "[1](1070fd0300200001) \t\"S-fc6a1c0300100000\"[1]\t\t# lid 0 lmc 0 \"MF0;leaf01:MQM8700/U1\" "
    "lid 0 4xHDR\n"  // 13
    "\n";            // 14
const std::string kCa2 =
    "caguid=0x1070fd0300200002\n"                             // 15
    "Ca\t1 \"H-1070fd0300200002\"\t\t# \"node002 mlx5_0\"\n"  // 16
    "[1](1070fd0300200003) \t\"S-fc6a1c0300100000\"[2]\t\t# lid 0 lmc 0 \"MF0;leaf01:MQM8700/U1\" "
    "lid 0 4xHDR\n";  // 17
const std::string kGood = kSwitch + kCa1 + kCa2;

std::string replace(std::string s, const std::string& from, const std::string& to) {
  const auto p = s.find(from);
  if (p == std::string::npos) {
    ADD_FAILURE() << "fixture lacks " << from;
    return s;
  }
  return s.replace(p, from.size(), to);
}

struct Bad {
  const char* name;
  std::string text;
  std::string error;
  friend void PrintTo(const Bad& b, std::ostream* os) { *os << b.name; }
};

class DumpErrors : public ::testing::TestWithParam<Bad> {};

}  // namespace

TEST(DumpFixture, IsValid) {
  FabricBuilder b;
  ASSERT_TRUE(read_ibnetdiscover(kGood, "dump.txt", b));
  auto f = b.build();
  ASSERT_TRUE(f);
  test::expect_valid(*f);
  EXPECT_EQ(f->num_hosts(), 2u);
}

TEST_P(DumpErrors, NameFileLineAndExpectation) {
  FabricBuilder b;
  auto r = read_ibnetdiscover(GetParam().text, "dump.txt", b);
  ASSERT_FALSE(r) << "accepted bad input";
  EXPECT_EQ(r.error().to_string(), GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    Table, DumpErrors,
    ::testing::Values(
        Bad{"truncated_line", kSwitch.substr(0, kSwitch.find("[2]") + 30),
            "dump.txt:7: expected ')' after the peer port GUID; got "
            "\"[2]\t\"H-1070fd0300200002\"[1](10\" "
            "(the file ends in the middle of this line: truncated dump?)"},
        Bad{"truncated_file", kSwitch + kCa1,
            "dump.txt:7: port 2 of \"MF0;leaf01:MQM8700/U1\" (0xfc6a1c0300100000) links to node "
            "0x1070fd0300200002, "
            "which the file never defines (truncated dump?)"},
        Bad{"unknown_record",
            replace(kGood, "Ca\t1 \"H-1070fd0300200002\"", "Bridge\t1 \"H-1070fd0300200002\""),
            "dump.txt:16: unknown record \"Bridge\", expected Switch, Ca, Rt, a port line \"[N] "
            "...\", or one of "
            "vendid=, devid=, sysimgguid=, switchguid=, caguid=, rtguid=; got \"Bridge\t1 "
            "\"H-1070fd0300200002\"\t\t# \"node002 mlx5_0\"\""},
        Bad{"port_before_node", kCa1.substr(kCa1.find("[1]")) + kGood,
            "dump.txt:1: port line before any Switch, Ca or Rt record; got \"[1](1070fd0300200001) "
            "\t\"S-fc6a1c0300100000\"[1]\t\t# lid 0 lmc ...\""},
        Bad{"no_link_back",
            replace(kGood, "\"S-fc6a1c0300100000\"[2]", "\"S-fc6a1c0300100000\"[1]"),
            "dump.txt:7: port 2 of \"MF0;leaf01:MQM8700/U1\" (0xfc6a1c0300100000) links to port 1 "
            "of \"node002 mlx5_0\" "
            "(0x1070fd0300200002), but line 17 links that port to port 1 of 0xfc6a1c0300100000"},
        Bad{"link_back_elsewhere",
            replace(kGood, "[2]\t\"H-1070fd0300200002\"[1](1070fd0300200003)",
                    "[2]\t\"H-1070fd0300200000\"[1](1070fd0300200001)"),
            "dump.txt:7: port 2 of \"MF0;leaf01:MQM8700/U1\" (0xfc6a1c0300100000) links to port 1 "
            "of \"node001 mlx5_0\" "
            "(0x1070fd0300200000), but line 13 links that port to port 1 of 0xfc6a1c0300100000"},
        Bad{"duplicate_guid",
            kGood + "\ncaguid=0x1070fd0300200002\nCa\t1 \"H-1070fd0300200002\"\t\t# \"node003 "
                    "mlx5_0\"\n",
            "dump.txt:20: duplicate GUID 0x1070fd0300200002: already defined at line 16"},
        Bad{"duplicate_port",
            replace(kGood, "[2]\t\"H-1070fd0300200002\"", "[1]\t\"H-1070fd0300200002\""),
            "dump.txt:7: port 1 of \"MF0;leaf01:MQM8700/U1\" is listed twice"},
        Bad{"nonsense_width",
            replace(kGood, "\"node002 mlx5_0\" lid 0 4xHDR", "\"node002 mlx5_0\" lid 0 7xHDR"),
            "dump.txt:7: bad link rate \"7xHDR\", expected a link rate <width><speed> such as "
            "4xHDR "
            "(width 1x/2x/4x/8x/12x, speed SDR/DDR/QDR/FDR10/FDR/EDR/HDR/NDR/XDR); got \"...# "
            "\"node002 mlx5_0\" lid 0 7xHDR\""},
        Bad{"wrong_peer_type",
            replace(kGood, "[2]\t\"H-1070fd0300200002\"", "[2]\t\"S-1070fd0300200002\""),
            "dump.txt:7: port 2 of \"MF0;leaf01:MQM8700/U1\" (0xfc6a1c0300100000) names its peer "
            "\"node002 mlx5_0\" "
            "(0x1070fd0300200002) as a switch, but it is a ca"},
        Bad{"bad_guid",
            replace(kGood, "\"S-fc6a1c0300100000\"\t\t#", "\"S-fc6a1c03zz100000\"\t\t#"),
            "dump.txt:5: expected '\"' closing the node id; got \"Switch\t40 "
            "\"S-fc6a1c03zz100000\"\t\t# \"MF0;leaf01:MQM8700/U1\" en...\""},
        Bad{"guid_line_mismatch",
            replace(kGood, "caguid=0x1070fd0300200002", "caguid=0x1070fd0300200004"),
            "dump.txt:16: node id GUID 0x1070fd0300200002 differs from 0x1070fd0300200004 given on "
            "line 15"},
        Bad{"no_nodes", "# only comments\n\n",
            "dump.txt:2: no Switch, Ca or Rt record found up to the end: not an ibnetdiscover "
            "topology file"},
        Bad{"ports_bad_type",
            "CA 0 1 0x1070fd0300200001 4x HDR - XX 0 1 0xfc6a1c0300100004 ( 'a b' - 'c' )\n",
            "dump.txt:1: expected the peer's node type SW, CA or RT; got \"CA 0 1 "
            "0x1070fd0300200001 "
            "4x HDR - XX 0 1 0xfc6a1c0300100004...\""},
        Bad{"ports_truncated",
            "CA     0  1 0x1070fd0300200001 4x HDR - SW     0  1 0xfc6a1c0300100004 ( 'node001 "
            "mlx5_0' - 'MF0;le\n",
            "dump.txt:1: expected \"( '<description>' - '<peer description>' )\"; got \"...   0  1 "
            "0xfc6a1c0300100004 ( 'node001 mlx5_0' - 'MF0;le\""},
        Bad{"ports_no_peer_line",
            "CA     0  1 0x1070fd0300200001 4x HDR - SW     0  1 0xfc6a1c0300100004 ( 'node001 "
            "mlx5_0' - 'MF0;leaf01:MQM8700/U1' )\n",
            "dump.txt:1: port 1 of \"node001 mlx5_0\" (0x1070fd0300200001) links to port 1 of "
            "\"MF0;leaf01:MQM8700/U1\" "
            "(0xfc6a1c0300100004), which does not link back (that port is not listed; truncated "
            "dump?)"},
        Bad{"ports_bad_rate",
            "SW     0  1 0xfc6a1c0300100004 4x HXR - CA     0  1 0x1070fd0300200001 ( "
            "'MF0;leaf01:MQM8700/U1' - 'node001 mlx5_0' )\n",
            "dump.txt:1: bad link rate \"4x HXR\", expected a link rate <width><speed> such as "
            "4xHDR "
            "(width 1x/2x/4x/8x/12x, speed SDR/DDR/QDR/FDR10/FDR/EDR/HDR/NDR/XDR) written as two "
            "words, e.g. \"4x HDR\"; got \"SW     0  1 0xfc6a1c0300100004 4x HXR - CA     0  1 "
            "0x1070fd...\""}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(DumpQuirks, EndsReportingDifferentRatesGiveTheLowerAndAWarning) {
  // Each end prints its own PortInfo; a switch that does not report extended speeds shows
  // QDR where the HCA shows EDR.
  FabricBuilder b;
  const std::string text = replace(kGood, "\"MF0;leaf01:MQM8700/U1\" lid 0 4xHDR\n",
                                   "\"MF0;leaf01:MQM8700/U1\" lid 0 4xEDR\n");
  ASSERT_TRUE(read_ibnetdiscover(text, "dump.txt", b));
  auto f = b.build();
  ASSERT_TRUE(f);
  test::expect_valid(*f);
  const auto ca = f->host(*f->find_host("node001")).hcas[0];
  EXPECT_EQ(f->link(f->ports_of(ca)[0].link).rate.to_string(), "4xEDR");
  ASSERT_FALSE(f->topology().warnings.empty());
  EXPECT_EQ(f->topology().warnings[0],
            "dump.txt:6: port 1 of \"MF0;leaf01:MQM8700/U1\" (0xfc6a1c0300100000) reports the link "
            "as 4xHDR but line "
            "13 reports it as 4xEDR; taking the lower");
}

TEST(DumpQuirks, PortBeyondTheDeclaredCountIsAnErrorOnItsLine) {
  FabricBuilder b;
  auto r = read_ibnetdiscover(replace(kGood, "Switch\t40 ", "Switch\t1 "), "dump.txt", b);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().line, 7);
  EXPECT_NE(
      r.error().message.find("port 2 is beyond the 1 ports the node record on line 5 declares"),
      std::string::npos)
      << r.error().message;
}

TEST(SourceErrors, UnreadableAndMissingFiles) {
  auto missing = load_fabric("/nonexistent/fabric.txt");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().to_string(),
            "/nonexistent/fabric.txt: cannot open: No such file or directory");
  auto dir = load_fabric(test::data("fabrics"));
  ASSERT_FALSE(dir);
  EXPECT_EQ(dir.error().message, "is a directory, expected a file");
}

TEST(SourceErrors, MergeConflictsNameTheFile) {
  // The same GUIDs with other descriptions cannot be merged.
  const std::string a = test::fabric_file("fat2_L8.ibnetdiscover.txt");
  auto f = load_fabrics({a, test::fabric_file("over_L20.ibnetdiscover.txt")});
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error().file, test::fabric_file("over_L20.ibnetdiscover.txt"));
  // over_L20 reuses fat2_L8's GUIDs, but node021 is cabled to another leaf there.
  EXPECT_EQ(f.error().message,
            "while merging it by GUID: port \"node021 mlx5_0\"[1] is linked to "
            "\"MF0;leaf02:MQM8700/U1\"[1] and to "
            "\"MF0;leaf01:MQM8700/U1\"[21]");
}

// ---- issue #12: bounds and text ------------------------------------------------------

TEST(Bounds, SpecsAreSizedBeforeAnythingIsAllocated) {
  for (const char* spec : {"rail:sus=1048576,hosts=1,rails=64,up=64,radix=254",
                           "rail:sus=1048576,hosts=1,rails=64,up=64,radix=254,spines=1",
                           "fat3:pods=254,leaves=127,down=127,up=127,spines=127,radix=254",
                           "fat2:leaves=1048576,down=127,up=127,radix=254"}) {
    auto f = load_fabric(spec);
    ASSERT_FALSE(f) << spec;
    EXPECT_EQ(f.error().code, ErrorCode::kUsage);
    EXPECT_NE(f.error().message.find("asks for more than 131072 switches and HCAs "
                                     "(FABRICPLACE_MAX_NODES raises the limit)"),
              std::string::npos)
        << f.error().message;
  }
}

TEST(Bounds, TopologyChainsAreCheckedWithoutRecursion) {
  // 100,000 switches in one chain: a valid (if odd) tree, then the same chain closed.
  std::string chain = "SwitchName=s0 Nodes=n0\n";
  for (int i = 1; i <= 100'000; ++i)
    chain += "SwitchName=s" + std::to_string(i) + " Switches=s" + std::to_string(i - 1) + "\n";
  FabricBuilder b;
  auto deep = read_slurm_topology(chain, "chain.conf", {}, b);
  ASSERT_FALSE(deep);  // no cycle, but deeper than 8-bit levels hold (fuzz find): refused
  EXPECT_EQ(deep.error().to_string(),
            "chain.conf:255: switch \"s254\" is more than 254 switch levels above the nearest "
            "HCA: deeper than any fabric (fat-trees have 2 to 5 levels)");
  std::string cycle =
      "SwitchName=s0 Nodes=n0 Switches=s100000\n" + chain.substr(chain.find('\n') + 1);
  FabricBuilder c;
  auto r = read_slurm_topology(cycle, "cycle.conf", {}, c);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().to_string(),
            "cycle.conf:1: switch s0 lists s100000 as a child, but s100000 is already above it: "
            "a cycle, not a tree");
}

TEST(Bounds, NamesThatCouldAddLinesToAnOutputAreRefused) {
  // A control byte in a dump, found before parsing, with its line and column.
  std::string dump = kGood;
  dump.replace(dump.find("node002 mlx5_0"), 7, "node\x1b[2");
  FabricBuilder b;
  auto t = str::check_text(dump, "dump.txt");
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().to_string(),
            "dump.txt:7: column 56: byte 0x1b is a control character; expected text (is this a "
            "binary file?)");
  // An escaped newline in canonical JSON reaches the builder, which refuses it.
  auto f = load_fabric("fat2:leaves=1,down=2,up=2");
  ASSERT_TRUE(f);
  std::string json = to_json(*f);
  const auto at = json.find("\"node001 mlx5_0\"");
  ASSERT_NE(at, std::string::npos);
  json.replace(at, 16, "\"node001\\nSwitchName=evil mlx5_0\"");
  FabricBuilder j;
  auto r = read_json(json, "in.json", j);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().file, "in.json");
  EXPECT_EQ(r.error().line, str::line_at(json, at));
  EXPECT_NE(r.error().message.find("description \"node001\\nSwitchName=evil mlx5_0\" holds a "
                                   "control character"),
            std::string::npos)
      << r.error().message;
}

TEST(Bounds, DescriptionsLongerThanTheLimitAreRefused) {
  FabricBuilder b;
  NodeRecord n;
  n.guid = 0x10;
  n.type = NodeType::kSwitch;
  n.num_ports = 36;
  n.description = std::string(kMaxDescriptionBytes, 's');
  ASSERT_TRUE(b.add_node(n));  // 512 bytes: the longest allowed
  n.guid = 0x11;
  n.description += "s";
  auto r = b.add_node(n);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "node 0x0000000000000011: description \"" + std::string(60, 's') +
                                   "...\" of 513 bytes, expected at most 512");
}

TEST(Bounds, PortNumbersCostOneEntryEach) {
  // A node naming port 65535 used to allocate 65536 port slots; now it is one entry, and
  // the port beyond the node's count is an error at build().
  FabricBuilder b;
  NodeRecord n;
  n.guid = 0x10;
  n.type = NodeType::kSwitch;
  n.description = "s1";
  n.num_ports = 36;
  ASSERT_TRUE(b.add_node(n));
  ASSERT_TRUE(b.add_port(0x10, PortRecord{65535, 0x10, 0, 0}));
  ASSERT_TRUE(b.add_port(0x10, PortRecord{3, 0x10, 0, 0}));
  EXPECT_TRUE(b.has_port(0x10, 65535));
  EXPECT_TRUE(b.has_port(0x10, 3));
  EXPECT_FALSE(b.has_port(0x10, 4));
  auto f = b.build();
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error().message, "node 0x0000000000000010 (\"s1\") has 36 ports but uses port 65535");
}
