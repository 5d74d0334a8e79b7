// SPDX-License-Identifier: GPL-2.0-or-later
// The minhop and updn models against opensm itself, live: each fabric (from a spec, or an
// irregular one built here from a seed) is loaded into its own ibsim, routed by a one-shot
// opensm (`-o -R minhop` and `-R updn`, default options), discovered with ibnetdiscover once
// the SM has assigned LIDs, and every (switch, end port) entry of opensm's LFT dump is
// compared with the model's: on the discovered fabric, and on the fabric as built (no LIDs).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <random>
#include <set>

#include "fabricplace/fabric/builder.hpp"
#include "fabricplace/fabric/export.hpp"
#include "fabricplace/fabric/link_rate.hpp"
#include "fabricplace/fabric/sources.hpp"
#include "fabricplace/routes/table.hpp"
#include "ibsim.hpp"
#include "test_support.hpp"

using namespace fabricplace;
using namespace fabricplace::fabric;
using namespace fabricplace::routes;

namespace {

// An irregular fabric from a seed, with random GUIDs. `spines` upper switches and `leaves`
// lower ones; each leaf links to a random non-empty subset of the spines (1 or 2 cables
// each) and holds 0-4 hosts; `cross` extra links join random pairs of leaves or of spines
// (equal ranks, where updn decides up and down by GUID). spines = 0: a random connected
// graph of `leaves` switches instead (often no updn root).
Fabric irregular(std::uint32_t seed, int spines, int leaves, int cross) {
  std::mt19937_64 rng(seed);
  const auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<std::uint64_t>(n)); };
  const int n = spines + leaves;
  std::set<Guid> used;
  const auto fresh_guid = [&] {
    for (;;) {
      const Guid g = (rng() | 0x0002000000000000ull) & ~0xFull;
      if (used.insert(g).second) return g;
    }
  };
  std::vector<Guid> guid(static_cast<std::size_t>(n));
  for (auto& g : guid) g = fresh_guid();
  std::vector<PortNum> next(static_cast<std::size_t>(n), 0);
  std::vector<std::pair<int, int>> links;
  if (spines > 0) {
    for (int l = spines; l < n; ++l) {
      bool any = false;
      while (!any) {
        for (int s = 0; s < spines; ++s) {
          if (pick(3) == 0) continue;
          any = true;
          for (int k = pick(2); k >= 0; --k) links.emplace_back(l, s);
        }
      }
    }
    for (int c = 0; c < cross; ++c) {
      const bool top = pick(2) == 0;
      const int base = top ? 0 : spines, count = top ? spines : leaves;
      const int a = base + pick(count), b = base + pick(count);
      if (a != b) links.emplace_back(a, b);
    }
  } else {
    for (int v = 1; v < n; ++v) links.emplace_back(v, pick(v));  // a random tree
    for (int c = 0; c < cross; ++c) {
      const int a = pick(n), b = pick(n);
      if (a != b) links.emplace_back(a, b);
    }
  }
  struct Cable {
    int sw;
    PortNum sp;
  };
  std::vector<std::pair<Cable, Cable>> cables;
  for (const auto& [a, b] : links) {
    const PortNum pa = ++next[static_cast<std::size_t>(a)];
    const PortNum pb = ++next[static_cast<std::size_t>(b)];
    cables.push_back({{a, pa}, {b, pb}});
  }
  std::vector<std::pair<Cable, Guid>> hosts;  // (leaf port, CA GUID)
  for (int l = spines; l < n; ++l) {
    for (int h = pick(5); h > 0; --h) {
      const PortNum p = ++next[static_cast<std::size_t>(l)];
      Guid g = fresh_guid();
      used.insert(g + 1);  // ibsim's CA port GUID
      hosts.push_back({{l, p}, g});
    }
  }
  FabricBuilder b("irregular seed " + std::to_string(seed));
  for (int s = 0; s < n; ++s) {
    NodeRecord r;
    r.guid = guid[static_cast<std::size_t>(s)];
    r.type = NodeType::kSwitch;
    r.description = "MF0;sw" + std::to_string(s + 1) + ":MQM8700/U1";
    r.num_ports = std::max<PortNum>(next[static_cast<std::size_t>(s)], 1);
    EXPECT_TRUE(b.add_node(r));
  }
  for (std::size_t h = 0; h < hosts.size(); ++h) {
    NodeRecord r;
    r.guid = hosts[h].second;
    r.type = NodeType::kCa;
    const std::string num = std::to_string(h + 1);
    r.description =
        "node" + std::string(3 - std::min<std::size_t>(3, num.size()), '0') + num + " mlx5_0";
    r.num_ports = 1;
    EXPECT_TRUE(b.add_node(r));
  }
  const LinkRate rate = *parse_rate("4xHDR");
  for (const auto& [x, y] : cables) {
    EXPECT_TRUE(b.add_link(guid[static_cast<std::size_t>(x.sw)], x.sp,
                           guid[static_cast<std::size_t>(y.sw)], y.sp, rate));
  }
  for (const auto& [c, g] : hosts)
    EXPECT_TRUE(b.add_link(guid[static_cast<std::size_t>(c.sw)], c.sp, g, 1, rate));
  return test::build(b);
}

struct Outcome {
  bool routed_as_asked = false;  // opensm did not fall back to minhop
  std::size_t entries = 0, mismatches = 0, lid_free_mismatches = 0, differ_from_minhop = 0;
  std::string first;
};

// One opensm sweep with `engine` on the running ibsim; the model compared with its dump.
Outcome route_and_compare(test::Ibsim& sim, const Fabric& built, const std::string& engine) {
  Outcome run;
  const std::string dir = sim.dir() + "/" + engine;
  std::filesystem::create_directories(dir);
  const auto osm = sim.run({"opensm", "-o", "-e", "-f", dir + "/osm.log", "-D", "0x43",
                            "--dump_files_dir", dir, "-R", engine, "-s", "0"},
                           "", 120, {{"OSM_TMP_DIR", dir}, {"OSM_CACHE_DIR", dir}});
  EXPECT_NE(osm.status, 124) << "opensm timed out";
  const std::string log = test::slurp(dir + "/osm.log");
  run.routed_as_asked =
      log.find(engine + " tables configured on all switches") != std::string::npos;
  EXPECT_TRUE(run.routed_as_asked || log.find("minhop tables configured") != std::string::npos)
      << log.substr(log.size() > 2000 ? log.size() - 2000 : 0);
  const auto ibnd = sim.run({"ibnetdiscover"});
  EXPECT_EQ(ibnd.status, 0) << ibnd.err;
  FabricBuilder b("ibnetdiscover");
  auto read = read_ibnetdiscover(ibnd.out, "ibnetdiscover", b);
  EXPECT_TRUE(read) << read.error().to_string();
  const Fabric found = test::build(b);
  const auto dump = lft_routes(found, test::slurp(dir + "/opensm-lfts.dump"), "opensm-lfts.dump");
  EXPECT_TRUE(dump) << dump.error().to_string();
  if (!dump) return run;
  // What opensm routed with: updn, or minhop when updn found no root.
  const bool updn = engine == "updn" && run.routed_as_asked;
  auto model = updn ? updn_routes(found) : minhop_routes(found);
  EXPECT_TRUE(model) << model.error().to_string();
  if (engine == "updn" && !run.routed_as_asked) {
    const auto refused = updn_routes(found);
    EXPECT_FALSE(refused) << "opensm's updn found no root; the model did";
    if (!refused) {
      EXPECT_EQ(refused.error().code, ErrorCode::kUnsupported);
    }
  }
  auto on_built = updn ? updn_routes(built) : minhop_routes(built);
  EXPECT_TRUE(on_built) << on_built.error().to_string();
  auto minhop = minhop_routes(found);
  if (!model || !on_built || !minhop) return run;
  const Ends& ends = model->ends();
  for (NodeId s : found.switches()) {
    const NodeId bs = *built.find_guid(found.node(s).guid);
    for (std::uint32_t e = 0; e < ends.size(); ++e) {
      ++run.entries;
      const PortNum want = dump->out_port(s, e);
      if (model->out_port(s, e) != want && run.mismatches++ == 0) {
        run.first = found.topology().switch_name[idx(s)] + " -> " + port_name(found, ends.port(e)) +
                    ": model " + std::to_string(model->out_port(s, e)) + ", opensm " +
                    std::to_string(want);
      }
      run.differ_from_minhop += minhop->out_port(s, e) != want;
      // The same end port on the built fabric: by node GUID and port number.
      const auto& p = found.port(ends.port(e));
      const NodeId bn = *built.find_guid(found.node(p.node).guid);
      std::uint32_t be = kNone;
      for (const auto& q : built.ports_of(bn)) {
        if (q.rec.number == p.rec.number)
          be = on_built->ends().of_port(
              PortId{static_cast<std::uint32_t>(&q - built.ports().data())});
      }
      run.lid_free_mismatches += be == kNone || on_built->out_port(bs, be) != want;
    }
  }
  return run;
}

struct LiveCase {
  const char* name;
  std::string spec;  // a spec, or "irregular:SEED:SPINES:LEAVES:CROSS"
};

Fabric make(const LiveCase& c) {
  if (!c.spec.starts_with("irregular:")) return test::gen(c.spec);
  int seed = 0, spines = 0, leaves = 0, cross = 0;
  std::sscanf(c.spec.c_str(), "irregular:%d:%d:%d:%d", &seed, &spines, &leaves, &cross);
  return irregular(static_cast<std::uint32_t>(seed), spines, leaves, cross);
}

class OpensmLive : public ::testing::TestWithParam<LiveCase> {};

TEST_P(OpensmLive, MinhopAndUpdnMatchOpensmEntryForEntry) {
  const Fabric f = make(GetParam());
  ASSERT_GT(f.num_hosts(), 1u);
  // FABRICPLACE_WRITE_FABRICS=DIR: also write each fabric as an ibnetdiscover dump (the
  // sources of tests/data/routes/quirk*, see its README).
  if (const char* out = std::getenv("FABRICPLACE_WRITE_FABRICS")) {
    ASSERT_TRUE(write_file_atomic(std::string(out) + "/" + GetParam().name + ".ibnetdiscover.txt",
                                  to_ibnetdiscover(f)));
  }
  const std::string net = std::filesystem::temp_directory_path() /
                          ("fp-osm-" + std::to_string(::getpid()) + "-" + GetParam().name + ".net");
  ASSERT_TRUE(write_file_atomic(net, to_ibsim_net(f)));
  const auto sz = ibsim_sizes(f);
  test::Ibsim sim(net, sz.nodes, sz.switches, sz.ports);
  std::filesystem::remove(net);
  ASSERT_TRUE(sim.ok()) << sim.error();
  for (const std::string engine : {"minhop", "updn"}) {
    const Outcome r = route_and_compare(sim, f, engine);
    EXPECT_GT(r.entries, 0u) << engine;
    EXPECT_EQ(r.mismatches, 0u) << GetParam().name << " " << engine << ": first " << r.first;
    EXPECT_EQ(r.lid_free_mismatches, 0u) << GetParam().name << " " << engine;
    std::printf(
        "[ live     ] %s %s: %zu entries, %zu mismatched; opensm %s; %zu entries differ "
        "from minhop's\n",
        GetParam().name, engine.c_str(), r.entries, r.mismatches,
        r.routed_as_asked ? ("routed with " + engine).c_str() : "fell back to minhop",
        r.differ_from_minhop);
    if (engine == "minhop") {
      EXPECT_TRUE(r.routed_as_asked);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Ibsim, OpensmLive,
    ::testing::Values(
        // leaf01 keeps no link to spine01: ftree refuses; updn's spine01 cannot reach
        // leaf01's hosts (down-up-down), minhop's goes round.
        LiveCase{"fat2_cut", "fat2:leaves=4,down=4,up=4,spines=2,cut=leaf01:5,cut=leaf01:7"},
        LiveCase{"fat3", "fat3:pods=2,leaves=3,down=3,up=2"},
        LiveCase{"rail", "rail:sus=2,hosts=3,rails=2"}, LiveCase{"irregular1", "irregular:1:3:6:3"},
        LiveCase{"irregular2", "irregular:2:4:8:4"}, LiveCase{"irregular3", "irregular:3:2:9:5"},
        // Where updn's search gives other rows than an idealised shortest up/down path would.
        LiveCase{"quirk6", "irregular:6:4:12:2"}, LiveCase{"quirk59", "irregular:59:4:9:7"},
        LiveCase{"quirk68", "irregular:68:4:11:4"}, LiveCase{"quirk212", "irregular:212:4:8:4"},
        LiveCase{"graph4", "irregular:4:0:10:6"}, LiveCase{"graph5", "irregular:5:0:12:4"}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

}  // namespace
