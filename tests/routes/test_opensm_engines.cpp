// SPDX-License-Identifier: GPL-2.0-or-later
// The minhop and updn models against opensm's own LFT dumps (tests/data/routes/README.md):
// every (switch, end port) entry and every end-port pair's path agree; updn's roots are
// opensm's. Then the rules on small fabrics built here.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "dumps.hpp"
#include "fabricplace/common/file_io.hpp"
#include "fabricplace/common/strings.hpp"
#include "fabricplace/fabric/builder.hpp"
#include "fabricplace/fabric/sources.hpp"
#include "fabricplace/fabric/spec.hpp"
#include "fabricplace/routes/table.hpp"

namespace fp = fabricplace;
using namespace fabricplace::fabric;
using namespace fabricplace::routes;

namespace {

using fabricplace::test::compare;
using fabricplace::test::load_dump;
using fabricplace::test::load_lfts;
const std::string& kDir = fabricplace::test::kRouteDumps;

struct Case {
  const char* name;
  const char* engine;
};
std::ostream& operator<<(std::ostream& o, const Case& c) {
  return o << c.name << "-" << c.engine;
}

class EngineAgainstOpensm : public ::testing::TestWithParam<Case> {};

TEST_P(EngineAgainstOpensm, EveryEntryAndEveryEndPair) {
  const std::string engine = GetParam().engine;
  const std::string stem = std::string(GetParam().name) + "-" + engine;
  const Fabric f = load_dump(stem);
  auto model = engine == "minhop" ? minhop_routes(f) : updn_routes(f);
  ASSERT_TRUE(model) << model.error().to_string();
  const Table dump = load_lfts(f, stem);
  const auto a = compare(f, *model, dump);
  const std::size_t ends = model->ends().size();
  EXPECT_GT(ends, 0u);
  EXPECT_EQ(a.entries, f.switches().size() * ends);
  EXPECT_EQ(a.pairs, ends * (ends - 1));
  EXPECT_EQ(a.entry_mismatches, 0u) << stem << ": first " << a.first;
  EXPECT_EQ(a.path_mismatches, 0u) << stem;
}

// The roots updn finds are those opensm wrote (opensm-updn-roots.dump).
class UpdnRootsAgainstOpensm : public ::testing::TestWithParam<const char*> {};

TEST_P(UpdnRootsAgainstOpensm, SameRoots) {
  const std::string stem = std::string(GetParam()) + "-updn";
  const Fabric f = load_dump(stem);
  auto text = fp::read_file(kDir + stem + ".roots.txt");
  ASSERT_TRUE(text) << text.error().to_string();
  std::vector<Guid> want;
  for (auto line : fp::str::lines(*text)) {
    if (fp::str::trim(line).empty()) continue;
    auto g = fp::str::parse_hex(fp::str::trim(line));
    ASSERT_TRUE(g) << line;
    want.push_back(*g);
  }
  std::sort(want.begin(), want.end());
  auto roots = updn_roots(f);
  ASSERT_TRUE(roots) << roots.error().to_string();
  std::vector<Guid> got;
  for (NodeId s : *roots) got.push_back(f.node(s).guid);
  EXPECT_EQ(got, want) << stem;
}

constexpr const char* kFabrics[] = {
    "fat2_L8",           "fat3_small",     "over_L20s", "v2_fat2_guid",   "v5_fat2_droplink",
    "v6_fat2_emptyleaf", "v7_fat2_uneven", "rail_2su",  "clos_irregular", "v8_fat2_cutspine",
    "v9_fat3_cutleaf",   "quirk68",        "quirk212"};

std::vector<Case> all_cases() {
  std::vector<Case> v;
  for (const char* n : kFabrics) {
    v.push_back({n, "minhop"});
    v.push_back({n, "updn"});
  }
  return v;
}

INSTANTIATE_TEST_SUITE_P(Dumps, EngineAgainstOpensm, ::testing::ValuesIn(all_cases()),
                         [](const auto& param_info) {
                           return std::string(param_info.param.name) + "_" +
                                  param_info.param.engine;
                         });
INSTANTIATE_TEST_SUITE_P(Dumps, UpdnRootsAgainstOpensm, ::testing::ValuesIn(kFabrics));

// ---- the rules, on fabrics built from specs (no LIDs: the models need none) ----

std::string node_name(int i) {
  std::string s = std::to_string(i);
  return "node" + std::string(3 - std::min<std::size_t>(3, s.size()), '0') + s;
}

TEST(Minhop, TwoLevelTreeRoundRobinsRemoteHostsOverUplinks) {
  // fat2: 4 leaves x 4 hosts, 4 uplinks to 2 spines (2 links each). All leaves have 4 CAs,
  // so destinations go leaf by leaf in key order (byte-swapped GUID: leaf01..04 here), hosts
  // in port order. leaf01 sends the k-th remote host (its own not counted) up uplink k mod 4
  // (ports 5..8); a spine sends leaf L's hosts alternately over its 2 links to L.
  auto f = generate("fat2:leaves=4,down=4,up=4,spines=2");
  ASSERT_TRUE(f);
  auto r = minhop_routes(*f);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->source(), "opensm's minhop engine, modelled");
  const NodeId leaf01 = *f->find_switch("leaf01");
  for (int h = 1; h <= 4; ++h) EXPECT_EQ(r->out_port(leaf01, *f->find_host(node_name(h))), h);
  for (int k = 0; k < 12; ++k) {
    EXPECT_EQ(r->out_port(leaf01, *f->find_host(node_name(5 + k))), 5 + k % 4) << k;
  }
  const NodeId spine01 = *f->find_switch("spine01");
  // spine01's links to leaf02 (the 2nd leaf): which ports they are, in order.
  std::vector<PortNum> to_leaf02;
  for (const auto& p : f->ports_of(spine01)) {
    const PortId pid{static_cast<std::uint32_t>(&p - f->ports().data())};
    if (p.link != kNoLink && f->peer_node(pid) == *f->find_switch("leaf02"))
      to_leaf02.push_back(p.rec.number);
  }
  ASSERT_EQ(to_leaf02.size(), 2u);
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(r->out_port(spine01, *f->find_host(node_name(5 + k))), to_leaf02[k % 2]) << k;
  }
}

TEST(Minhop, RoutesAnyFabric) {
  // Rail-optimised (several end ports per host), cut links, an uneven tree: every end pair
  // has a loop-free path wherever the fabric connects it.
  for (const char* spec :
       {"rail:sus=2,hosts=4,rails=2", "fat2:leaves=4,down=4,up=4,cut=leaf01:5,cut=leaf02:6",
        "fat3:pods=2,leaves=2,down=4,up=4,cut=p01-spine01:1"}) {
    auto f = generate(spec);
    ASSERT_TRUE(f) << spec;
    auto r = minhop_routes(*f);
    ASSERT_TRUE(r) << spec << ": " << r.error().to_string();
    std::vector<DirLink> p;
    for (std::uint32_t s = 0; s < r->ends().size(); ++s) {
      for (std::uint32_t d = 0; d < r->ends().size(); ++d) {
        p.clear();
        ASSERT_TRUE(r->path(s, d, p)) << spec << " " << s << "->" << d;
      }
    }
  }
}

TEST(Minhop, UnreachableEndsHaveNoEntry) {
  // rail planes: separate subnets; a switch has no route to another plane's end ports.
  auto f = generate("rail:sus=1,hosts=2,rails=2,planes=1");
  ASSERT_TRUE(f);
  ASSERT_EQ(f->topology().num_components, 2u);
  auto r = minhop_routes(*f);
  ASSERT_TRUE(r) << r.error().to_string();
  const auto& comp = f->topology().node_component;
  for (NodeId s : f->switches()) {
    for (std::uint32_t e = 0; e < r->ends().size(); ++e) {
      const bool same = comp[idx(s)] == comp[idx(f->port(r->ends().port(e)).node)];
      EXPECT_EQ(r->out_port(s, e) != 0, same);
    }
  }
}

TEST(Updn, OversubscribedTreeOfTwentyLeavesMakesEveryLeafARoot) {
  // 20 leaves x 16 hosts: a leaf holds 16 of 320 CAs = exactly 5 %, not above it (the
  // comparison is strict), so every leaf is a root as well as the spines; 19 leaves (16 of
  // 304 > 5 %) are not.
  auto f = generate("fat2:leaves=20,down=16,up=4,spines=2");
  ASSERT_TRUE(f);
  auto roots = updn_roots(*f);
  ASSERT_TRUE(roots) << roots.error().to_string();
  EXPECT_EQ(roots->size(), 22u);
  auto g = generate("fat2:leaves=19,down=16,up=4,spines=2");
  ASSERT_TRUE(g);
  roots = updn_roots(*g);
  ASSERT_TRUE(roots) << roots.error().to_string();
  ASSERT_EQ(roots->size(), 2u);
  for (NodeId s : *roots) EXPECT_TRUE(g->topology().switch_name[idx(s)].starts_with("spine"));
  auto r = updn_routes(*g);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->source(), "opensm's updn engine, modelled; 2 root switches");
}

TEST(Updn, ThreeLevelTreeRootsAreTheCores) {
  auto f = generate("fat3:pods=2,leaves=2,down=4,up=4");
  ASSERT_TRUE(f);
  auto roots = updn_roots(*f);
  ASSERT_TRUE(roots) << roots.error().to_string();
  ASSERT_FALSE(roots->empty());
  for (NodeId s : *roots) EXPECT_TRUE(f->topology().switch_name[idx(s)].starts_with("core"));
  EXPECT_EQ(roots->size(), f->switches().size() - 2 * 2 - 2 * 4);
}

TEST(Updn, FatTreeHostEntriesAreMinhops) {
  // Every shortest switch-to-CA path of a fat tree is up/down legal: the same candidates, the
  // same counters, the same tables for the end ports.
  for (const char* spec :
       {"fat2:leaves=6,down=5,up=4,spines=2", "fat3:pods=3,leaves=2,down=3,up=2"}) {
    auto f = generate(spec);
    ASSERT_TRUE(f);
    auto m = minhop_routes(*f);
    auto u = updn_routes(*f);
    ASSERT_TRUE(m && u) << spec;
    for (NodeId s : f->switches())
      for (std::uint32_t e = 0; e < m->ends().size(); ++e)
        EXPECT_EQ(m->out_port(s, e), u->out_port(s, e)) << spec;
  }
}

// A fabric built by hand: switches (and hosts) linked as `links` says, port numbers in order.
Fabric build(const std::vector<std::string>& switches,
             const std::vector<std::pair<std::string, std::string>>& links,
             const std::vector<std::pair<std::string, std::string>>& hosts) {
  FabricBuilder b("test");
  std::map<std::string, Guid> guid;
  std::map<std::string, PortNum> next;
  Guid g = 0x1000;
  for (const auto& s : switches) {
    NodeRecord n;
    n.guid = guid[s] = ++g;
    n.type = NodeType::kSwitch;
    n.description = s;
    n.num_ports = 36;
    EXPECT_TRUE(b.add_node(n));
  }
  for (const auto& [h, sw] : hosts) {
    NodeRecord n;
    n.guid = guid[h] = ++g;
    n.type = NodeType::kCa;
    n.description = h + " mlx5_0";
    n.num_ports = 1;
    EXPECT_TRUE(b.add_node(n));
  }
  // Switch ports are numbered in the order their links are given; a host has port 1.
  auto port = [&](const std::string& n) -> PortNum { return ++next[n]; };
  for (const auto& [a, c] : links) {
    const PortNum pa = port(a), pc = port(c);
    EXPECT_TRUE(b.add_link(guid[a], pa, guid[c], pc, {}));
  }
  for (const auto& [h, sw] : hosts) {
    const PortNum ps = port(sw), ph = port(h);
    EXPECT_TRUE(b.add_link(guid[sw], ps, guid[h], ph, {}));
  }
  auto f = b.build();
  EXPECT_TRUE(f) << f.error().to_string();
  return std::move(*f);
}

TEST(Updn, NoCasMeansNoRootAndOpensmFallsBackToMinhop) {
  const Fabric f = build({"s1", "s2"}, {{"s1", "s2"}}, {});
  auto r = updn_routes(f);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, fp::ErrorCode::kUnsupported);
  EXPECT_NE(r.error().message.find("falls back to minhop"), std::string::npos) << r.error().message;
  EXPECT_TRUE(minhop_routes(f));
}

TEST(Updn, ALineOfThreeEqualSwitchesHasNoRoot) {
  // s1 - s2 - s3, 2 hosts each: s2 sees 1/3 at 0 hops and 2/3 at 1; s1 1/3 at 0, 1 and 2.
  const Fabric f =
      build({"s1", "s2", "s3"}, {{"s1", "s2"}, {"s2", "s3"}},
            {{"h1", "s1"}, {"h2", "s1"}, {"h3", "s2"}, {"h4", "s2"}, {"h5", "s3"}, {"h6", "s3"}});
  auto r = updn_roots(f);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("no root switch"), std::string::npos) << r.error().message;
  auto m = minhop_routes(f);
  ASSERT_TRUE(m);
  std::vector<DirLink> p;
  EXPECT_TRUE(m->path(*f.find_host("h1"), *f.find_host("h6"), p));
  EXPECT_EQ(p.size(), 4u);
}

TEST(Updn, ASpineCutOffFromALeafIsNoRootAndLeavesStopUsingIt) {
  // leaf01 keeps no cable to spine01 (its uplinks 5 and 7 went there). spine01 then sees
  // leaf01's 4 hosts (25 %) at 3 hops: not a root; spine02 is the only one, so the leaves
  // rank 1 and spine01 ranks 2, below them. A leaf's step to spine01 is down, and from there
  // nothing goes up again: in updn every leaf sends remote hosts through spine02 only (its
  // uplinks 6 and 8), where minhop spreads them over both spines; spine01 itself reaches
  // leaf01 up through another leaf. Checked live against opensm (tests/integration).
  auto f = generate("fat2:leaves=4,down=4,up=4,spines=2,cut=leaf01:5,cut=leaf01:7");
  ASSERT_TRUE(f);
  auto roots = updn_roots(*f);
  ASSERT_TRUE(roots);
  ASSERT_EQ(roots->size(), 1u);
  EXPECT_EQ(f->topology().switch_name[idx(roots->front())], "spine02");
  auto u = updn_routes(*f);
  auto m = minhop_routes(*f);
  ASSERT_TRUE(u && m);
  std::size_t minhop_via_spine01 = 0;
  for (int leaf = 1; leaf <= 4; ++leaf) {
    const NodeId sw = *f->find_switch("leaf0" + std::to_string(leaf));
    for (int h = 1; h <= 16; ++h) {
      if ((h - 1) / 4 + 1 == leaf) continue;  // its own hosts
      const HostId host = *f->find_host(node_name(h));
      const PortNum up = u->out_port(sw, host);
      EXPECT_TRUE(up == 6 || up == 8) << leaf << " " << h << ": " << up;
      minhop_via_spine01 += m->out_port(sw, host) == 5 || m->out_port(sw, host) == 7;
    }
  }
  EXPECT_GT(minhop_via_spine01, 0u);
  const NodeId spine01 = *f->find_switch("spine01");
  std::vector<DirLink> p;
  ASSERT_TRUE(u->path(*f->find_host("node005"), *f->find_host("node001"), p));
  EXPECT_EQ(p.size(), 4u);  // node005 -> leaf02 -> spine02 -> leaf01 -> node001
  for (int h = 1; h <= 4; ++h) EXPECT_NE(u->out_port(spine01, *f->find_host(node_name(h))), 0);
}

}  // namespace
