// SPDX-License-Identifier: GPL-2.0-or-later
// Static routes: the ftree model against opensm's own LFT dumps (every switch entry for a
// host, every host pair), and the LFT loader's errors.
#include <gtest/gtest.h>

#include "dumps.hpp"
#include "fabricplace/common/file_io.hpp"
#include "fabricplace/fabric/builder.hpp"
#include "fabricplace/fabric/sources.hpp"
#include "fabricplace/fabric/spec.hpp"
#include "fabricplace/routes/table.hpp"

namespace fp = fabricplace;
using namespace fabricplace::fabric;
using namespace fabricplace::routes;

namespace {

using fabricplace::test::compare;
const std::string& kDir = fabricplace::test::kRouteDumps;
fabricplace::fabric::Fabric load_dump(const std::string& name) {
  return fabricplace::test::load_dump(name + "-ftree");
}
Table load_lfts(const Fabric& f, const std::string& name) {
  return fabricplace::test::load_lfts(f, name + "-ftree");
}

class FtreeAgainstOpensm : public ::testing::TestWithParam<const char*> {};

TEST_P(FtreeAgainstOpensm, EveryEntryAndEveryHostPair) {
  const std::string name = GetParam();
  const Fabric f = load_dump(name);
  auto model = ftree_routes(f);
  ASSERT_TRUE(model) << model.error().to_string();
  const Table dump = load_lfts(f, name);
  const auto a = compare(f, *model, dump);
  EXPECT_EQ(a.entries, f.switches().size() * f.num_hosts());
  EXPECT_EQ(a.pairs, f.num_hosts() * (f.num_hosts() - 1));
  EXPECT_EQ(a.entry_mismatches, 0u) << name;
  EXPECT_EQ(a.path_mismatches, 0u) << name;
  EXPECT_EQ(a.unrouted, 0u) << name;  // ftree routes every host pair
}

// fat2_L8 is the shared ftree fabric (data/fabrics/fat2_L8-ftree.*); the others were
// routed by the same opensm on ibsim (tests/data/routes/README.md).
INSTANTIATE_TEST_SUITE_P(Dumps, FtreeAgainstOpensm,
                         ::testing::Values("fat2_L8", "fat3_small", "over_L20", "v1_fat2_miss",
                                           "v2_fat2_guid", "v3_fat3_miss_guid", "v4_over_guid",
                                           "v6_fat2_emptyleaf", "v7_fat2_uneven"));

TEST(Ftree, Fat2L8LeafSendsHostIUpUplinkIMod20) {
  // The fact the simulator's route model rests on: leaf01 forwards traffic for the host
  // of ftree index i (node order here) up its uplink i mod 20 (ports 21..40).
  const Fabric f = load_dump("fat2_L8");
  auto r = ftree_routes(f);
  ASSERT_TRUE(r);
  const NodeId leaf01 = *f.find_switch("leaf01");
  for (std::uint32_t i = 20; i < 160; ++i) {
    const HostId h = *f.find_host("node" +
                                  std::string(i + 1 < 10    ? "00"
                                              : i + 1 < 100 ? "0"
                                                            : "") +
                                  std::to_string(i + 1));
    EXPECT_EQ(r->out_port(leaf01, h), 21 + i % 20) << i;
  }
  // spine01's ports towards leaf01's 20 hosts (the "main path" hosts 0,4,8,.. use links
  // 1..5 in turn; the others follow the least-loaded port rule).
  const NodeId spine01 = *f.find_switch("spine01");
  const std::vector<int> want{1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 1, 1, 1};
  for (std::uint32_t j = 0; j < 20; ++j) {
    const HostId h =
        *f.find_host("node0" + std::string(j + 1 < 10 ? "0" : "") + std::to_string(j + 1));
    EXPECT_EQ(r->out_port(spine01, h), want[j]) << j;
  }
}

TEST(Ftree, MissingInterSwitchLinkIsRefusedAsOpensmDoes) {
  // One leaf-spine link removed: opensm's ftree validation fails and it routes with minhop.
  const Fabric f = load_dump("v5_fat2_droplink");
  auto r = ftree_routes(f);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, fp::ErrorCode::kUnsupported);
  EXPECT_NE(r.error().message.find("falls back to minhop"), std::string::npos) << r.error().message;
}

TEST(Ftree, SpecFabricsRoute) {
  // Synthetic specs carry no LIDs: the model needs none.
  for (const char* spec : {"fat2:leaves=4,down=4,up=4", "fat3:pods=2,leaves=2,down=4,up=4"}) {
    auto f = generate(spec);
    ASSERT_TRUE(f) << spec;
    auto r = ftree_routes(*f);
    ASSERT_TRUE(r) << spec << ": " << r.error().to_string();
    std::vector<DirLink> p;
    for (std::uint32_t s = 0; s < f->num_hosts(); ++s) {
      for (std::uint32_t d = 0; d < f->num_hosts(); ++d) {
        p.clear();
        ASSERT_TRUE(r->path(HostId{s}, HostId{d}, p)) << spec << " " << s << "->" << d;
      }
    }
  }
}

TEST(Ftree, RailOptimisedFabricsAreRefused) {
  auto f = generate("rail:sus=2,hosts=4,rails=2");
  ASSERT_TRUE(f);
  auto r = ftree_routes(*f);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, fp::ErrorCode::kUnsupported);
  EXPECT_NE(r.error().message.find("single-rail"), std::string::npos);
}

TEST(LftDump, ErrorsNameFileAndLine) {
  const Fabric f = load_dump("fat2_L8");
  auto r = lft_routes(f, "Unicast lids [0-3] of switch Lid 2 guid 0xdeadbeef ('x'):\n", "t.dump");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().to_string(),
            "t.dump:1: switch 0x00000000deadbeef is not a switch of this fabric: the dump does "
            "not match the fabric");
  r = lft_routes(f, "0x0001 001 # x\n", "t.dump");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().to_string(),
            "t.dump:1: a LID entry before any 'Unicast lids ... of switch' header");
  r = lft_routes(f,
                 "Unicast lids [0-172] of switch Lid 9 guid 0xfc6a1c0300100004 ('leaf01'):\n"
                 "0x0001 zz # x\n",
                 "t.dump");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().to_string(), "t.dump:2: expected '0xLID PORT # ...', got \"0x0001 zz # x\"");
  // 0x100000001 would be LID 1 (a host's) if narrowed to 32 or 16 bits.
  r = lft_routes(f,
                 "Unicast lids [0-172] of switch Lid 9 guid 0xfc6a1c0300100004 ('leaf01'):\n"
                 "0x100000001 001 # x\n",
                 "t.dump");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().to_string(), "t.dump:2: LID \"0x100000001\" is beyond 16 bits (0xffff)");
  r = lft_routes(f, "nothing here\n", "t.dump");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().to_string(),
            "t.dump:1: no 'Unicast lids ... of switch' section up to the end: not an LFT dump");
  // A fabric without LIDs (a spec) cannot take a dump.
  auto spec = generate("fat2:leaves=2,down=2,up=2");
  ASSERT_TRUE(spec);
  r = lft_routes(*spec, "", "t.dump");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("no LIDs"), std::string::npos);
}

TEST(LftDump, DumpOfAnotherFabricIsRefused) {
  const Fabric f = load_dump("fat2_L8");
  auto text = fp::read_file(kDir + std::string("fat2_L8-ftree.lfts.dump.gz"));
  ASSERT_TRUE(text);
  // The whole dump loads.
  ASSERT_TRUE(lft_routes(f, *text, "t.dump"));
  // Without leaf02's table: named, with the last line.
  const auto h = text->find("of switch Lid 10 guid 0xfc6a1c0300100005 ('MF0;leaf02");
  ASSERT_NE(h, std::string::npos);
  const auto start = text->rfind("Unicast lids", h);
  const auto end = text->find("Unicast lids", h);
  std::string cut = text->substr(0, start) + text->substr(end);
  auto r = lft_routes(f, cut, "t.dump");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "switch leaf02 (0xfc6a1c0300100005) has no table in the dump: the dump does not "
            "match the fabric (cut short, or of another fabric: take the LFT dump and the "
            "ibnetdiscover dump after the same subnet manager sweep)");
  // A host's LID forwarded to port 0 (the switch itself) or to a port with no link.
  r = lft_routes(f,
                 "Unicast lids [0-172] of switch Lid 9 guid 0xfc6a1c0300100004 ('leaf01'):\n"
                 "0x0001 000 # node001\n",
                 "t.dump");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().to_string(),
            "t.dump:2: switch leaf01 forwards LID \"0x0001\" (node001 mlx5_0[1]) to port 0, which "
            "has no link in this fabric: the dump does not match the fabric");
  // The entry missing at the switch the host is cabled to (leaf01's table).
  const auto leaf01 = text->find("('MF0;leaf01");
  ASSERT_NE(leaf01, std::string::npos);
  const auto e = text->find("0x0001 ", leaf01);
  ASSERT_NE(e, std::string::npos);
  std::string holed = text->substr(0, e) + text->substr(text->find('\n', e) + 1);
  r = lft_routes(f, holed, "t.dump");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("leaf01 has no entry for LID 1 (node001 mlx5_0[1], cabled to "
                                   "its port 1)"),
            std::string::npos)
      << r.error().message;
  EXPECT_GT(r.error().line, 0);
  // Elsewhere (spine01's table, first in the dump) it is a hole, as updn leaves where no
  // up/down path reaches: the dump loads and path() reports the hole.
  const auto first = text->find("0x0001 ");
  std::string hole = text->substr(0, first) + text->substr(text->find('\n', first) + 1);
  r = lft_routes(f, hole, "t.dump");
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->out_port(*f.find_switch("spine01"), *f.find_host("node001")), 0);
  std::vector<DirLink> p;
  EXPECT_TRUE(r->path(*f.find_host("node002"), *f.find_host("node001"), p));
  bool via_spine01 = false;
  for (std::uint32_t s = 0; s < f.num_hosts() && !via_spine01; ++s) {
    p.clear();
    if (!r->path(HostId{s}, *f.find_host("node001"), p)) via_spine01 = true;
  }
  EXPECT_TRUE(via_spine01);
}

TEST(LftDump, DuplicateEntryIsRefused) {
  // Two entries for one LID in one switch's table: refused with both lines, whichever comes
  // second (before this check the last one silently won).
  const Fabric f = load_dump("fat2_L8");
  auto r = lft_routes(f,
                      "Unicast lids [0-172] of switch Lid 9 guid 0xfc6a1c0300100004 ('leaf01'):\n"
                      "0x0001 001 # node001\n"
                      "0x0007 002 # node002\n"
                      "0x0001 021 # node001 again\n",
                      "t.dump");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, fp::ErrorCode::kDuplicate);
  EXPECT_EQ(r.error().to_string(),
            "t.dump:4: switch leaf01 has a second entry for LID \"0x0001\" (the first at line "
            "2): expected one entry per LID in a switch's table (a dump edited or concatenated "
            "by hand? take it again with opensm -D 0x43 or ibroute)");
  // An UNREACHABLE entry and a port for the same LID contradict each other too.
  r = lft_routes(f,
                 "Unicast lids [0-172] of switch Lid 9 guid 0xfc6a1c0300100004 ('leaf01'):\n"
                 "0x0005 UNREACHABLE\n"
                 "0x0005 021 # a switch LID\n",
                 "t.dump");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().line, 3);
  EXPECT_EQ(r.error().code, fp::ErrorCode::kDuplicate);
  // In the whole dump: the duplicate in spine01's table (the first) of a host's LID that
  // spine02's table also has is refused; the same LID in two switches' tables is not.
  auto text = fp::read_file(kDir + std::string("fat2_L8-ftree.lfts.dump.gz"));
  ASSERT_TRUE(text);
  const auto e = text->find("0x0004 033 ");
  ASSERT_NE(e, std::string::npos);
  const auto eol = text->find('\n', e) + 1;
  std::string twice = text->substr(0, eol) + "0x0004 034 # moved\n" + text->substr(eol);
  r = lft_routes(f, twice, "t.dump");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().to_string(),
            "t.dump:5: switch spine01 has a second entry for LID \"0x0004\" (the first at line "
            "4): expected one entry per LID in a switch's table (a dump edited or concatenated "
            "by hand? take it again with opensm -D 0x43 or ibroute)");
  EXPECT_TRUE(lft_routes(f, *text, "t.dump"));
}

}  // namespace
