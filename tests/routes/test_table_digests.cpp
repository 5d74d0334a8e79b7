// SPDX-License-Identifier: GPL-2.0-or-later
// The table models' whole tables on generated fabrics, against fingerprints (digest() in
// dumps.hpp) recorded from the implementations before they were made fast: the ftree model
// as it was up to commit 5ee4c61 (a full switches x destinations hop and port matrix,
// walked destination by destination), minhop and updn as they were there. Every entry of
// every table must stay the same; the opensm dumps (test_ftree.cpp,
// test_opensm_engines.cpp) check that the tables are opensm's, these that a faster build
// gives the same ones on shapes the dumps do not have (uneven leaves and so dummy
// destinations, parallel links at every level, 2,048 hosts).
//
// How the constants were made: this test, built at the commit that added it (a6a9851, whose
// routes/ is 5ee4c61's), printed the digests of its failures with every constant a
// placeholder; they were pasted in and the test passed there before any route code changed.
// bench/bench_routes.cpp checks the same digests at 16,384 hosts, recorded the same way.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "dumps.hpp"
#include "fabricplace/fabric/builder.hpp"
#include "fabricplace/fabric/spec.hpp"
#include "fabricplace/routes/table.hpp"

using namespace fabricplace::fabric;
using namespace fabricplace::routes;

namespace {

struct Case {
  const char* spec;
  const char* engine;    // ftree, minhop, updn
  std::uint64_t digest;  // 0: the engine refuses the fabric (kUnsupported)
};

std::ostream& operator<<(std::ostream& o, const Case& c) {
  return o << c.engine << " on " << c.spec;
}

fabricplace::Result<Table> build(const Fabric& f, const std::string& engine) {
  if (engine == "ftree") return ftree_routes(f);
  if (engine == "minhop") return minhop_routes(f);
  return updn_routes(f);
}

class TableDigest : public ::testing::TestWithParam<Case> {};

TEST_P(TableDigest, SameTableAsBefore) {
  const Case& c = GetParam();
  auto f = generate(c.spec);
  ASSERT_TRUE(f) << f.error().to_string();
  auto t = build(*f, c.engine);
  if (c.digest == 0) {
    ASSERT_FALSE(t);
    EXPECT_EQ(t.error().code, fabricplace::ErrorCode::kUnsupported);
    return;
  }
  ASSERT_TRUE(t) << t.error().to_string();
  char got[32];
  std::snprintf(got, sizeof got, "0x%016llx",
                static_cast<unsigned long long>(fabricplace::test::digest(*t)));
  char want[32];
  std::snprintf(want, sizeof want, "0x%016llx", static_cast<unsigned long long>(c.digest));
  EXPECT_STREQ(got, want) << c;
}

// Leaf host ports are 1..down, uplinks down+1..: cut=leafNN:K with K <= down removes a host,
// so leaves differ in hosts and ftree routes dummy destinations.
const Case kCases[] = {
    {"fat2:leaves=8,down=20,up=20", "ftree", 0x48177f93bc3a4e65},
    {"fat2:leaves=8,down=20,up=20", "minhop", 0xc0a51cffd8f14825},
    {"fat2:leaves=8,down=20,up=20", "updn", 0xc0a51cffd8f14825},
    {"fat2:leaves=20,down=32,up=8", "ftree", 0xaf59670fff1e6625},
    {"fat2:leaves=20,down=32,up=8", "minhop", 0x3c59a2394ecea025},
    {"fat2:leaves=20,down=32,up=8", "updn", 0x3c59a2394ecea025},
    {"fat2:leaves=6,down=5,up=4,spines=2", "ftree", 0x2f7d24b3a72fc34d},
    {"fat2:leaves=6,down=5,up=4,spines=2", "minhop", 0xa8069859f4abf37d},
    {"fat2:leaves=6,down=5,up=4,spines=2", "updn", 0xa8069859f4abf37d},
    {"fat2:leaves=6,down=5,up=4,spines=2,cut=leaf01:1,cut=leaf03:2,cut=leaf03:5", "ftree",
     0x670651c468b8d349},
    {"fat2:leaves=6,down=5,up=4,spines=2,cut=leaf01:1,cut=leaf03:2,cut=leaf03:5", "minhop",
     0xd30f89bdfee6deca},
    {"fat2:leaves=6,down=5,up=4,spines=2,cut=leaf01:1,cut=leaf03:2,cut=leaf03:5", "updn",
     0xd30f89bdfee6deca},
    {"fat2:leaves=5,down=6,up=6,spines=3,cut=leaf02:8", "ftree", 0},
    {"fat2:leaves=5,down=6,up=6,spines=3,cut=leaf02:8", "minhop", 0x06bb3e20b26e42f1},
    {"fat2:leaves=5,down=6,up=6,spines=3,cut=leaf02:8", "updn", 0x06bb3e20b26e42f1},
    {"fat3:pods=3,leaves=5,down=7,up=4,spines=4", "ftree", 0x9f9ce5956d50dfd5},
    {"fat3:pods=3,leaves=5,down=7,up=4,spines=4", "minhop", 0xa6a85aa624d883ac},
    {"fat3:pods=3,leaves=5,down=7,up=4,spines=4", "updn", 0xa6a85aa624d883ac},
    {"fat3:pods=3,leaves=4,down=6,up=6,spines=3,cores=3", "ftree", 0x52463d948e462035},
    {"fat3:pods=3,leaves=4,down=6,up=6,spines=3,cores=3", "minhop", 0xbc741e3bb60cb525},
    {"fat3:pods=3,leaves=4,down=6,up=6,spines=3,cores=3", "updn", 0xbc741e3bb60cb525},
    {"fat3:pods=3,leaves=4,down=6,up=6,spines=3,cores=6", "ftree", 0x2e6c1343783b8c7d},
    {"fat3:pods=3,leaves=4,down=6,up=6,spines=3,cores=6", "minhop", 0x6a12138f0b11696d},
    {"fat3:pods=3,leaves=4,down=6,up=6,spines=3,cores=6", "updn", 0x6a12138f0b11696d},
    {"fat3:pods=4,leaves=3,down=5,up=4,spines=2,cut=p01-leaf01:1,cut=p03-leaf02:3,cut=p03-leaf02:4",
     "ftree", 0xcd63554ffb2ac1fd},
    {"fat3:pods=4,leaves=3,down=5,up=4,spines=2,cut=p01-leaf01:1,cut=p03-leaf02:3,cut=p03-leaf02:4",
     "minhop", 0x3ba6037629be4924},
    {"fat3:pods=4,leaves=3,down=5,up=4,spines=2,cut=p01-leaf01:1,cut=p03-leaf02:3,cut=p03-leaf02:4",
     "updn", 0x3ba6037629be4924},
    {"fat3:pods=2,leaves=3,down=4,up=4,cut=p02-spine01:1", "ftree", 0},
    {"fat3:pods=2,leaves=3,down=4,up=4,cut=p02-spine01:1", "minhop", 0xbf9a10a17aa52088},
    {"fat3:pods=2,leaves=3,down=4,up=4,cut=p02-spine01:1", "updn", 0xa8d99ca55c92b865},
    {"rail:sus=2,hosts=8,rails=4", "ftree", 0},
    {"rail:sus=2,hosts=8,rails=4", "minhop", 0x7c104ea8acb529a5},
    {"rail:sus=2,hosts=8,rails=4", "updn", 0x7c104ea8acb529a5},
    {"fat2:leaves=4,down=4,up=4,spines=2,cut=leaf01:5,cut=leaf01:7", "ftree", 0},
    {"fat2:leaves=4,down=4,up=4,spines=2,cut=leaf01:5,cut=leaf01:7", "minhop", 0x5722d965d8a53f1d},
    {"fat2:leaves=4,down=4,up=4,spines=2,cut=leaf01:5,cut=leaf01:7", "updn", 0xc13d59fa0d7c61d1},
    {"fat3:pods=3,leaves=4,down=8,up=4,spines=2,degrade=p01-leaf01:9:w=1", "ftree",
     0x5bb3d1f616de3b05},
    {"fat3:pods=3,leaves=4,down=8,up=4,spines=2,degrade=p01-leaf01:9:w=1", "minhop",
     0x0002dd7d284dfa65},
    {"fat3:pods=3,leaves=4,down=8,up=4,spines=2,degrade=p01-leaf01:9:w=1", "updn",
     0x0002dd7d284dfa65},
    {"fat3:pods=4,leaves=16,down=32,up=32,spines=32,radix=64", "ftree", 0xbb963a20847cb325},
    {"fat3:pods=4,leaves=16,down=32,up=32,spines=32,radix=64", "minhop", 0x22678e81e094b325},
    {"fat3:pods=4,leaves=16,down=32,up=32,spines=32,radix=64", "updn", 0x22678e81e094b325}};
INSTANTIATE_TEST_SUITE_P(Generated, TableDigest, ::testing::ValuesIn(kCases));

// Sibling links (switches of one rank cabled together), which no generated fabric has: there
// the ftree model takes every step as opensm does, without skipping any. Built by hand: the
// switches and hosts in order, switch ports numbered in the order links are given. Digests
// from the ftree model of 5ee4c61 (its ftree.cpp built beside this code, on these fabrics).
fabricplace::Result<Fabric> build_by_hand(
    const std::vector<std::string>& switches,
    const std::vector<std::pair<std::string, std::string>>& links,
    const std::vector<std::pair<std::string, std::string>>& hosts) {
  FabricBuilder b("sibs");
  std::map<std::string, Guid> guid;
  std::map<std::string, PortNum> next;
  Guid g = 0x1000;
  for (const auto& s : switches) {
    NodeRecord n;
    n.guid = guid[s] = ++g;
    n.type = NodeType::kSwitch;
    n.description = s;
    n.num_ports = 36;
    if (auto r = b.add_node(n); !r) return std::unexpected(r.error());
  }
  for (const auto& [h, sw] : hosts) {
    NodeRecord n;
    n.guid = guid[h] = ++g;
    n.type = NodeType::kCa;
    n.description = h + " mlx5_0";
    n.num_ports = 1;
    if (auto r = b.add_node(n); !r) return std::unexpected(r.error());
  }
  auto port = [&](const std::string& n) -> PortNum { return ++next[n]; };
  for (const auto& [a, c] : links) {
    const PortNum pa = port(a), pc = port(c);
    if (auto r = b.add_link(guid[a], pa, guid[c], pc, {}); !r) return std::unexpected(r.error());
  }
  for (const auto& [h, sw] : hosts) {
    const PortNum ps = port(sw), ph = port(h);
    if (auto r = b.add_link(guid[sw], ps, guid[h], ph, {}); !r) return std::unexpected(r.error());
  }
  return b.build();
}

TEST(TableDigest, FtreeWithSiblingLinks) {
  const std::vector<std::string> switches{"leaf01", "leaf02",  "leaf03",
                                          "leaf04", "spine01", "spine02"};
  // Leaf pairs cabled to each other; leaf04 has a host fewer (dummy destinations).
  std::vector<std::pair<std::string, std::string>> links, hosts;
  for (const char* l : {"leaf01", "leaf02", "leaf03", "leaf04"})
    for (const char* s : {"spine01", "spine02"}) links.emplace_back(l, s);
  links.emplace_back("leaf01", "leaf02");
  links.emplace_back("leaf03", "leaf04");
  int h = 0;
  for (const char* l : {"leaf01", "leaf02", "leaf03", "leaf04"})
    for (int k = 0; k < (std::string(l) == "leaf04" ? 2 : 3); ++k)
      hosts.emplace_back("node" + std::to_string(++h), l);
  auto a = build_by_hand(switches, links, hosts);
  ASSERT_TRUE(a) << a.error().to_string();
  auto ta = ftree_routes(*a);
  ASSERT_TRUE(ta) << ta.error().to_string();
  EXPECT_EQ(fabricplace::test::digest(*ta), 0x6b93d5c863c98220u);

  // The spines cabled together too, two links per leaf-spine pair, leaf03 a host fewer.
  links.clear();
  hosts.clear();
  for (const char* l : {"leaf01", "leaf02", "leaf03", "leaf04"})
    for (int k = 0; k < 2; ++k)
      for (const char* s : {"spine01", "spine02"}) links.emplace_back(l, s);
  links.emplace_back("spine01", "spine02");
  links.emplace_back("leaf02", "leaf03");
  h = 0;
  for (const char* l : {"leaf01", "leaf02", "leaf03", "leaf04"})
    for (int k = 0; k < (std::string(l) == "leaf03" ? 3 : 4); ++k)
      hosts.emplace_back("node" + std::to_string(++h), l);
  auto b = build_by_hand(switches, links, hosts);
  ASSERT_TRUE(b) << b.error().to_string();
  auto tb = ftree_routes(*b);
  ASSERT_TRUE(tb) << tb.error().to_string();
  EXPECT_EQ(fabricplace::test::digest(*tb), 0xccfe2f025a722c0au);
}

}  // namespace
