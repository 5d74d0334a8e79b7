// SPDX-License-Identifier: GPL-2.0-or-later
// Canonical JSON: lossless, byte-stable round trips; clear errors.
#include "fabricplace/fabric/json_io.hpp"

#include <gtest/gtest.h>

#include "fabricplace/fabric/spec.hpp"
#include "test_support.hpp"

using namespace fabricplace;
using namespace fabricplace::fabric;

namespace {
Result<Fabric> from_json(const std::string& text) {
  FabricBuilder b;
  if (auto r = read_json(text, "in.json", b); !r) return std::unexpected(r.error());
  return b.build();
}
}  // namespace

class JsonRoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(JsonRoundTrip, FabricToJsonToFabricToJsonIsByteIdentical) {
  const std::string& source = GetParam();
  const Fabric f =
      looks_like_spec(source) ? *generate(source) : test::load(test::fabric_file(source));
  const std::string once = to_json(f);
  auto back = from_json(once);
  ASSERT_TRUE(back) << back.error().to_string();
  test::expect_valid(*back);
  EXPECT_EQ(to_json(*back), once);
  EXPECT_EQ(back->origin(), f.origin());
  EXPECT_EQ(back->num_links(), f.num_links());
  EXPECT_EQ(back->topology().degraded_links.size(), f.topology().degraded_links.size());
}

INSTANTIATE_TEST_SUITE_P(
    Sources, JsonRoundTrip,
    ::testing::Values(
        "fat2:leaves=8,down=20,up=20", "fat3:pods=4,leaves=8,down=16,up=16,spines=16",
        "fat2:leaves=20,down=32,up=8", "rail:sus=4,hosts=20,rails=8",
        "rail:sus=2,hosts=8,rails=4,up=8,planes=1",
        "fat2:leaves=4,down=8,up=8,degrade=leaf01:9:w=1,degrade=spine01:2:s=EDR,cut=leaf02:10",
        "fat2_L8-ftree.ibnetdiscover.txt", "rail_4su.ibnetdiscover-p.txt"));

TEST(Json, WriterIsOneRecordPerLine) {
  const Fabric f = *generate("fat2:leaves=2,down=2,up=2");
  const std::string j = to_json(f);
  EXPECT_EQ(j.substr(0, 59),
            "{\n  \"format\": \"fabricplace-fabric\",\n  \"version\": 1,\n  \"orig");
  // 1 spine + 2 leaves + 4 HCAs; 4 host links + 4 uplinks; 9 framing lines.
  EXPECT_EQ(std::count(j.begin(), j.end(), '\n'), 7 + 8 + 9);
  // node001 sits on leaf01, the second switch GUID (after spine01).
  EXPECT_NE(j.find("    [\"0x1070fd0300200000\", 1, \"0xfc6a1c0300100001\", 1, \"4xHDR\"],\n"),
            std::string::npos)
      << j;
}

struct BadJson {
  const char* name;
  std::string text;
  std::string error;
  friend void PrintTo(const BadJson& b, std::ostream* os) { *os << b.name; }
};
class JsonErrors : public ::testing::TestWithParam<BadJson> {};
TEST_P(JsonErrors, NameThePathAndTheExpectation) {
  auto r = from_json(GetParam().text);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().to_string(), GetParam().error);
}
const std::string kHead = R"({"format": "fabricplace-fabric", "version": 1, )";
INSTANTIATE_TEST_SUITE_P(
    Table, JsonErrors,
    ::testing::Values(
        BadJson{"syntax", "{\n\"format\": \"fabricplace-fabric\",\n\"version\": 1,,\n}",
                "in.json:3: invalid JSON: parse error at line 3, column 14: syntax error while "
                "parsing object key - unexpected ','; expected string literal"},
        BadJson{"format", R"({"format": "other", "version": 1})",
                "in.json:1: format: expected \"fabricplace-fabric\""},
        BadJson{"version", R"({"format": "fabricplace-fabric", "version": 7})",
                "in.json:1: version: this build reads versions 1 to 2, got 7"},
        BadJson{"guid", kHead + R"("nodes": [{"guid": "xyz"}], "links": []})",
                "in.json:1: nodes[0].guid: expected a 0x-prefixed hexadecimal string"},
        BadJson{"type", kHead + R"("nodes": [{"guid": "0x1", "type": "hub"}], "links": []})",
                "in.json:1: nodes[0].type: expected \"switch\", \"ca\" or \"router\""},
        BadJson{"unknown key", kHead + R"("nodes": [{"guid": "0x1", "colour": 1}], "links": []})",
                "in.json:1: nodes[0]: unknown key \"colour\""},
        BadJson{
            "duplicate",
            kHead +
                R"("nodes": [{"guid": "0x1", "type": "ca", "desc": "a x", "nports": 1, "vendid": "0x0", "devid": "0x0", "sysimgguid": "0x0", "ports": []},
                                     {"guid": "0x1", "type": "ca", "desc": "a x", "nports": 1, "vendid": "0x0", "devid": "0x0", "sysimgguid": "0x0", "ports": []}], "links": []})",
            "in.json:2: nodes[1]: duplicate GUID 0x0000000000000001"},
        BadJson{
            "dangling link",
            kHead +
                R"("nodes": [{"guid": "0x1", "type": "ca", "desc": "a x", "nports": 1, "vendid": "0x0", "devid": "0x0", "sysimgguid": "0x0", "ports": []}],
                           "links": [["0x1", 1, "0x2", 1, "4xHDR"]]})",
            "in.json:2: links[0]: port 1 of 0x0000000000000001 is not listed in that node's "
            "\"ports\""},
        BadJson{
            "unknown node",
            kHead +
                R"("nodes": [{"guid": "0x1", "type": "ca", "desc": "a x", "nports": 1, "vendid": "0x0", "devid": "0x0", "sysimgguid": "0x0", "ports": [{"port": 1, "guid": "0x2", "lid": 0, "lmc": 0}]}],
                           "links": [["0x1", 1, "0x9", 1, "4xHDR"]]})",
            "in.json:2: links[0]: port 1 of 0x0000000000000009 is on a node that is not in "
            "\"nodes\""},
        BadJson{
            "link twice",
            kHead +
                R"("nodes": [{"guid": "0x1", "type": "ca", "desc": "a x", "nports": 1, "vendid": "0x0", "devid": "0x0", "sysimgguid": "0x0", "ports": [{"port": 1, "guid": "0x2", "lid": 0, "lmc": 0}]},
                                     {"guid": "0x9", "type": "ca", "desc": "b x", "nports": 1, "vendid": "0x0", "devid": "0x0", "sysimgguid": "0x0", "ports": [{"port": 1, "guid": "0xa", "lid": 0, "lmc": 0}]}],
                           "links": [["0x1", 1, "0x9", 1, "4xHDR"], ["0x1", 1, "0x9", 1, "4xHDR"]]})",
            "in.json:3: links[1]: port 1 of 0x0000000000000001 is already linked by an earlier "
            "entry"},
        BadJson{
            "port twice",
            kHead +
                R"("nodes": [{"guid": "0x1", "type": "ca", "desc": "a x", "nports": 1, "vendid": "0x0", "devid": "0x0", "sysimgguid": "0x0",
                                      "ports": [{"port": 1, "guid": "0x2", "lid": 0, "lmc": 0}, {"port": 1, "guid": "0x2", "lid": 0, "lmc": 0}]}], "links": []})",
            "in.json:2: nodes[0].ports[1]: port 1 is listed twice"},
        BadJson{"missing key", kHead + R"("nodes": [{"guid": "0x1", "type": "ca"}], "links": []})",
                "in.json:1: nodes[0]: missing \"desc\""},
        BadJson{"object for a string", kHead + R"("nodes": [{"guid": {"x": 1}}], "links": []})",
                "in.json:1: nodes[0].guid: expected a value here, not an object"},
        BadJson{"not an object", "[1, 2]", "in.json:1: (top level): expected an object"},
        BadJson{"bad rate", kHead + R"("nodes": [], "links": [["0x1", 1, "0x2", 1, "5xHDR"]]})",
                "in.json:1: links[0][4]: expected a link rate like \"4xHDR\""}));

TEST(Json, KeysMayComeInAnyOrderAndLinksBeforeNodes) {
  const std::string text = R"({"links": [["0x9", 1, "0x1", 1, "2xNDR"]], "version": 1,
    "nodes": [{"ports": [{"lmc": 0, "lid": 0, "guid": "0xa", "port": 1}], "desc": "b x", "type": "ca", "guid": "0x9", "nports": 1, "vendid": "0x0", "devid": "0x0", "sysimgguid": "0x0"},
              {"guid": "0x1", "type": "ca", "desc": "a x", "nports": 1, "vendid": "0x0", "devid": "0x0", "sysimgguid": "0x0", "ports": [{"port": 1, "guid": "0x2", "lid": 0, "lmc": 0}]}],
    "format": "fabricplace-fabric"})";
  auto f = from_json(text);
  ASSERT_TRUE(f) << f.error().to_string();
  test::expect_valid(*f);
  EXPECT_EQ(f->num_links(), 1u);
  EXPECT_EQ(f->link(LinkId{0}).rate.to_string(), "2xNDR");
}
