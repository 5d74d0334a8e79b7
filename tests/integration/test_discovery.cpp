// SPDX-License-Identifier: GPL-2.0-or-later
// Live discovery against OFA's ibsim: the real libibnetdisc/libibmad stack, through the
// umad2sim preload, driving the real fabricplace CLI. Each test starts its own ibsim.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "fabricplace/common/file_io.hpp"
#include "fabricplace/fabric/export.hpp"
#include "fabricplace/fabric/json_io.hpp"
#include "fabricplace/fabric/sources.hpp"
#include "fabricplace/fabric/spec.hpp"
#include "ibsim.hpp"
#include "test_support.hpp"

using namespace fabricplace;
using namespace fabricplace::fabric;

namespace {

const std::string kCli = FABRICPLACE_CLI;

std::string without_origin(std::string json) {
  const auto b = json.find("  \"origin\"");
  return json.erase(b, json.find('\n', b) - b + 1);
}

// Starts ibsim on a net file with the exact limits of `f` (the fabric the file describes).
std::unique_ptr<test::Ibsim> start(const std::string& net, const Fabric& f) {
  const auto sz = ibsim_sizes(f);
  auto sim = std::make_unique<test::Ibsim>(net, sz.nodes, sz.switches, sz.ports);
  EXPECT_TRUE(sim->ok()) << sim->error();
  return sim;
}

// Net files live in one scratch directory for the whole test binary, removed at exit.
struct Scratch {
  std::string dir;
  Scratch() {
    char tmpl[] = "/tmp/fp-nets-XXXXXX";
    dir = ::mkdtemp(tmpl) ? tmpl : "/tmp";
  }
  ~Scratch() {
    std::error_code ec;
    if (dir != "/tmp") std::filesystem::remove_all(dir, ec);
  }
};
std::string scratch_file(const std::string& name) {
  static Scratch scratch;
  return scratch.dir + "/" + name;
}

std::string write_net(const std::string& text, const std::string& name) {
  const std::string path = scratch_file(name + ".net");
  EXPECT_TRUE(write_file_atomic(path, text));
  return path;
}

// Writes our ibsim net file for a fabric.
std::string net_for(const Fabric& f, const std::string& name) {
  return write_net(to_ibsim_net(f), name);
}

Fabric discover(test::Ibsim& sim, const std::string& out, std::vector<std::string> extra = {},
                const std::string& sim_host = "") {
  std::vector<std::string> argv = {kCli, "fabric", "discover", "-o", sim.dir() + "/" + out};
  argv.insert(argv.end(), extra.begin(), extra.end());
  const auto r = sim.run(argv, sim_host);
  EXPECT_EQ(r.status, 0) << r.err;
  return test::load(sim.dir() + "/" + out);
}

// The same fabric with only linked ports: what a plain ibnetdiscover dump shows. Live
// discovery also sees the switch ports that are down (their PortInfo), which dumps omit.
Fabric linked_only(const Fabric& f) {
  FabricBuilder b(f.origin());
  for (const auto& n : f.nodes()) EXPECT_TRUE(b.add_node(n));
  for (const auto& p : f.ports()) {
    if (p.link != kNoLink) {
      EXPECT_TRUE(b.add_port(f.node(p.node).guid, p.rec));
    }
  }
  for (const auto& l : f.links())
    EXPECT_TRUE(b.add_link(f.node(l.node_a).guid, f.port(l.a).rec.number, f.node(l.node_b).guid,
                           f.port(l.b).rec.number, l.rate));
  auto built = b.build();
  EXPECT_TRUE(built);
  return std::move(*built);
}

std::size_t down_ports(const Fabric& f) {
  std::size_t n = 0;
  for (const auto& p : f.ports()) n += p.link == kNoLink;
  return n;
}

std::string cli(test::Ibsim& sim, std::vector<std::string> args, int expect_status) {
  args.insert(args.begin(), kCli);
  const auto r = sim.run(args);
  EXPECT_EQ(r.status, expect_status) << r.err;
  return r.out;
}

// Every switch level and every HCA's leaf, as in the truth file.
void expect_truth(const Fabric& f, const std::string& truth_file) {
  const auto truth = nlohmann::json::parse(test::slurp(test::fabric_file(truth_file)));
  std::map<std::string, NodeId> by_desc;
  for (std::uint32_t i = 0; i < f.num_nodes(); ++i)
    by_desc.emplace(f.node(NodeId{i}).description, NodeId{i});
  ASSERT_EQ(f.switches().size(), truth["switches"].size());
  ASSERT_EQ(f.cas().size(), truth["hcas"].size());
  for (const auto& [desc, info] : truth["switches"].items())
    EXPECT_EQ(f.topology().level[idx(by_desc.at(desc))], info["level"].get<int>()) << desc;
  for (const auto& [desc, info] : truth["hcas"].items()) {
    const NodeId leaf = f.topology().ca_leaf[idx(by_desc.at(desc))];
    ASSERT_NE(leaf, kNoNode) << desc;
    EXPECT_EQ(f.node(leaf).description, info["leaf"].get<std::string>()) << desc;
  }
}

}  // namespace

class SharedDump : public ::testing::TestWithParam<std::string> {};

// The shared dumps are ibnetdiscover output of ibsim fabrics, and a dump is itself a net
// file: discovering it must give the fabric that importing the dump gives.
TEST_P(SharedDump, DiscoveryEqualsTheDumpAndTheTruth) {
  const std::string dump = test::fabric_file(GetParam() + ".ibnetdiscover.txt");
  const Fabric imported = test::load(dump);
  auto sim = start(dump, imported);
  ASSERT_TRUE(sim->ok());
  const Fabric found = discover(*sim, "found.json");
  EXPECT_EQ(without_origin(to_json(linked_only(found))), without_origin(to_json(imported)));
  // What discovery adds: every unused switch port, as a down port (rail_4su's 20 spines use
  // 32 of their 40 ports; the other fabrics use every port).
  std::size_t unused = 0;
  for (NodeId s : imported.switches())
    unused += imported.node(s).num_ports - imported.ports_of(s).size();
  EXPECT_EQ(down_ports(found), unused);
  EXPECT_EQ(GetParam() == "rail_4su" ? 20u * 8u : 0u, unused);
  expect_truth(found, GetParam() + ".truth.json");
}
INSTANTIATE_TEST_SUITE_P(Ibsim, SharedDump,
                         ::testing::Values("fat2_L8", "fat3_small", "over_L20", "rail_4su"));

TEST(IbsimDiscovery, RailPlanesOneDiscoveryPerPlaneThenMerge) {
  // Our own net file for the planes fabric: 8 disjoint subnets in one ibsim.
  const Fabric spec = test::gen("rail:sus=4,hosts=20,rails=8,planes=1");
  auto sim = start(net_for(spec, "planes"), spec);
  ASSERT_TRUE(sim->ok());
  std::vector<std::string> merge = {"fabric", "merge"};
  for (int k = 0; k < 8; ++k) {
    const std::string out = "plane" + std::to_string(k) + ".json";
    const Fabric plane = discover(*sim, out, {}, "node001 mlx5_" + std::to_string(k));
    EXPECT_EQ(plane.num_hosts(), 80u);
    EXPECT_EQ(plane.topology().num_components, 1u);  // one subnet each
    merge.push_back(sim->dir() + "/" + out);
  }
  merge.insert(merge.end(), {"-o", sim->dir() + "/merged.json"});
  cli(*sim, merge, 0);
  const Fabric merged = test::load(sim->dir() + "/merged.json");
  std::vector<std::string> dumps;
  for (int k = 0; k < 8; ++k)
    dumps.push_back(
        test::fabric_file("rail_4su_planes/plane" + std::to_string(k) + ".ibnetdiscover.txt"));
  const auto imported = load_fabrics(dumps);
  ASSERT_TRUE(imported);
  EXPECT_EQ(without_origin(to_json(merged)), without_origin(to_json(*imported)));
  expect_truth(merged, "rail_4su_planes.truth.json");
}

TEST(IbsimDiscovery, AW1PortIsADegradedLinkNamedBySwitchAndPort) {
  const Fabric spec = test::gen("fat3:pods=2,leaves=2,down=4,up=4,spines=2");
  // Hand-edit the net file as an admin would: leaf01's port 5 enabled at 1x only.
  std::string net = to_ibsim_net(spec);
  const std::string line =
      "[5]\t\"p01-spine01\"[1]\t\t# \"MF0;p01-spine01:MQM8700/U1\" lid 0 4xHDR\n";
  const auto at = net.find(line);
  ASSERT_NE(at, std::string::npos);
  net.replace(at, line.size(), "[5]\t\"p01-spine01\"[1]\tw=1\n");
  auto sim = start(write_net(net, "w1"), spec);
  ASSERT_TRUE(sim->ok());
  discover(*sim, "f.json");
  const std::string show = cli(*sim, {"fabric", "show", sim->dir() + "/f.json"}, 0);
  EXPECT_NE(
      show.find(
          "    degraded p01-leaf01[5] <-> p01-spine01[1]: 1xHDR, nominal 4xHDR (width 1x < 4x); "
          "hosts behind: node[001-004]\n"),
      std::string::npos)
      << show;
}

TEST(IbsimDiscovery, UnlinkShowsInDiffAndOversubscriptionThenReLinkRestores) {
  const Fabric spec = test::gen("fat2:leaves=4,down=4,up=4");
  auto sim = start(net_for(spec, "unlink"), spec);
  ASSERT_TRUE(sim->ok());
  const Fabric before = discover(*sim, "a.json");
  EXPECT_DOUBLE_EQ(before.topology().leaf_stats[0].oversubscription, 1.0);
  EXPECT_NE(sim->command("Unlink \"leaf01\"[5]").find("sim>"), std::string::npos);
  const Fabric after = discover(*sim, "b.json", {"--previous", sim->dir() + "/a.json"});
  EXPECT_DOUBLE_EQ(after.topology().leaf_stats[0].oversubscription, 4.0 / 3.0);
  EXPECT_EQ(cli(*sim, {"fabric", "diff", sim->dir() + "/a.json", sim->dir() + "/b.json"}, 1),
            "removed leaf01[5] - spine01[1]: 4xHDR\noversubscription leaf01: 1.00:1 -> 1.33:1\n");
  const std::string show = cli(*sim, {"fabric", "show", sim->dir() + "/b.json"}, 0);
  EXPECT_NE(show.find("    down leaf01[5]: linked to spine01[1] in the previous discovery; hosts "
                      "behind: node[001-004]\n"),
            std::string::npos)
      << show;
  sim->command("ReLink \"leaf01\"[5]");
  discover(*sim, "c.json");
  EXPECT_EQ(cli(*sim, {"fabric", "diff", sim->dir() + "/a.json", sim->dir() + "/c.json"}, 0),
            "no changes\n");
}

TEST(IbsimDiscovery, PortCountersBeyondTheThresholdFlagTheLink) {
  const Fabric spec = test::gen("fat2:leaves=4,down=4,up=4");
  auto sim = start(net_for(spec, "counters"), spec);
  ASSERT_TRUE(sim->ok());
  // Counters are read by LID: let opensm (run once) assign them.
  std::filesystem::create_directories(sim->dir() + "/osm");
  const auto sm =
      sim->run({"/usr/sbin/opensm", "-o", "-s", "0", "-f", sim->dir() + "/osm/opensm.log"}, "", 60,
               {{"OSM_TMP_DIR", sim->dir() + "/osm"}, {"OSM_CACHE_DIR", sim->dir() + "/osm"}});
  ASSERT_EQ(sm.status, 0) << sm.out << sm.err;
  EXPECT_NE(sim->command("PerformanceSet \"leaf01\"[5] PortCounters.LinkDownedCounter=3")
                .find("has been set to 3"),
            std::string::npos);
  const Fabric f = discover(*sim, "f.json", {"--counters"});
  ASSERT_EQ(f.topology().unhealthy_links.size(), 1u);
  EXPECT_EQ(f.topology().unhealthy_links[0].problems,
            std::vector<std::string>{"leaf01[5]: LinkDownedCounter 3 > 0"});
  const std::string show = cli(*sim, {"fabric", "show", sim->dir() + "/f.json"}, 0);
  EXPECT_NE(show.find("    errors leaf01[5] <-> spine01[1]: leaf01[5]: LinkDownedCounter 3 > 0; "
                      "hosts behind: node[001-004]\n"),
            std::string::npos)
      << show;
  // Every linked port was read: 16 host links and 16 uplinks, both ends.
  std::size_t with_counters = 0;
  for (const Port& p : f.ports()) with_counters += p.health.has_counters;
  EXPECT_EQ(with_counters, 64u);
  // A laxer threshold file: the same counter is no longer a problem.
  ASSERT_TRUE(write_file_atomic(sim->dir() + "/lax.conf", "LinkDownedCounter = 5\n"));
  const Fabric lax =
      discover(*sim, "lax.json", {"--counters", "--health-config", sim->dir() + "/lax.conf"});
  EXPECT_TRUE(lax.topology().unhealthy_links.empty());
}

// `fabric watch` on a live fabric: a link taken down between two runs is said, the metrics
// show it lost, Slurm's files are synced; back up, said again (and flapping); a link that
// went down and up between two runs (its LinkDownedCounter rose) is said too.
TEST(IbsimWatch, LinkDownAndUpBetweenRunsIsSaidSyncedAndInTheMetrics) {
  const Fabric spec = test::gen("fat2:leaves=4,down=4,up=4");
  auto sim = start(net_for(spec, "watch"), spec);
  ASSERT_TRUE(sim->ok());
  // Counters are read by LID over routes: the SM sweeps once at the start and after each
  // change, as a running SM would on the port's trap.
  std::filesystem::create_directories(sim->dir() + "/osm");
  auto sweep = [&] {
    const auto sm = sim->run(
        {"/usr/sbin/opensm", "-o", "-s", "0", "-f", sim->dir() + "/osm/opensm.log"}, "", 60,
        {{"OSM_TMP_DIR", sim->dir() + "/osm"}, {"OSM_CACHE_DIR", sim->dir() + "/osm"}});
    EXPECT_EQ(sm.status, 0) << sm.out << sm.err;
  };
  sweep();
  const std::string state = sim->dir() + "/state", etc = sim->dir() + "/etc",
                    prom = sim->dir() + "/fabric.prom";
  auto watch = [&] {
    const auto r = sim->run({kCli, "fabric", "watch", "--state", state, "--counters", "--sync-out",
                             etc, "--metrics", prom});
    EXPECT_EQ(r.status, 0) << r.err;
    // promtool (Debian's prometheus, scripts/install-deps.sh) says nothing on a valid file.
    EXPECT_EQ(std::system("command -v promtool >/dev/null"), 0) << "no promtool";
    const auto lint = sim->dir() + "/promtool.txt";
    EXPECT_EQ(std::system(("promtool check metrics <" + prom + " >" + lint + " 2>&1").c_str()), 0);
    EXPECT_EQ(test::slurp(lint), "") << test::slurp(prom);
    return r.out;
  };
  auto has = [](const std::string& text, const std::string& line) {
    return text.find(line) != std::string::npos;
  };
  std::string out = watch();
  EXPECT_TRUE(
      has(out, "fabric watch: run 1: first fabric accepted: 16 hosts, 5 switches, 32 links"))
      << out;
  EXPECT_TRUE(has(out, "(first sync)")) << out;
  EXPECT_TRUE(has(test::slurp(prom), "\nfabricplace_lost_links 0\n"));

  // Down between runs 1 and 2.
  sim->command("Unlink \"leaf01\"[5]");
  sweep();
  out = watch();
  EXPECT_TRUE(has(out, "fabric watch: run 2: removed leaf01[5] - spine01[1]: 4xHDR\n")) << out;
  EXPECT_TRUE(has(out, "fabric watch: run 2: oversubscription leaf01: 1.00:1 -> 1.33:1\n")) << out;
  EXPECT_TRUE(has(out, "fabric watch: run 2:   changed  fabric.json\n")) << out;
  const auto m2 = test::slurp(prom);
  EXPECT_TRUE(has(m2, "\nfabricplace_lost_links 1\n")) << m2;
  EXPECT_TRUE(has(m2, "fabricplace_discovery_changes 2\n")) << out;
  EXPECT_FALSE(has(out, "unhealthy")) << out;
  EXPECT_TRUE(has(m2, "fabricplace_port_lost{")) << m2;
  const Fabric synced = test::load(etc + "/fabric.json");
  EXPECT_EQ(synced.num_links(), 31u);
  EXPECT_EQ(synced.topology().lost_links.size(), 1u);

  // Back up between runs 2 and 3: said again, and the link is flapping.
  sim->command("ReLink \"leaf01\"[5]");
  sweep();
  out = watch();
  EXPECT_TRUE(has(out, "fabric watch: run 3: added leaf01[5] - spine01[1]: 4xHDR\n")) << out;
  EXPECT_TRUE(has(out,
                  "fabric watch: run 3: flapping leaf01[5] - spine01[1]: 2 changes in the "
                  "last 10 runs: removed (run 2), added (run 3)\n"))
      << out;
  EXPECT_TRUE(has(test::slurp(prom), "\nfabricplace_lost_links 0\n"));
  EXPECT_EQ(test::load(etc + "/fabric.json").num_links(), 32u);

  // Down and up again between runs 3 and 4: the same links, but the counter rose.
  sim->command("PerformanceSet \"leaf01\"[6] PortCounters.LinkDownedCounter=2");
  out = watch();
  EXPECT_TRUE(has(out,
                  "fabric watch: run 4: flapped leaf01[6] - spine01[2]: went down and came "
                  "back up since the last run (leaf01[6] LinkDownedCounter 0 -> 2)\n"))
      << out;
  EXPECT_TRUE(has(test::slurp(prom), "fabricplace_discovery_flapping_links 1\n"));
  // Nothing new: no change, and the flap is not said twice.
  out = watch();
  EXPECT_TRUE(has(out, "fabric watch: run 5: no change\n")) << out;
  EXPECT_FALSE(has(out, "flapped")) << out;
}

TEST(IbsimDiscovery, WithoutLidsCountersAreAClearError) {
  const Fabric spec = test::gen("fat2:leaves=2,down=2,up=2");
  auto sim = start(net_for(spec, "nolid"), spec);
  ASSERT_TRUE(sim->ok());
  const auto r = sim->run({kCli, "fabric", "discover", "--counters", "-o", sim->dir() + "/x.json"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("reading counters needs LIDs"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(sim->dir() + "/x.json"));
}

TEST(IbsimDiscovery, PacketLossIsReportedNeverPublishedSilently) {
  const Fabric spec = test::gen("fat2:leaves=4,down=4,up=4");
  auto sim = start(net_for(spec, "loss"), spec);
  ASSERT_TRUE(sim->ok());
  const Fabric baseline = discover(*sim, "base.json");
  sim->command("Error \"leaf01\" 50");
  const std::vector<std::string> lossy = {kCli,
                                          "fabric",
                                          "discover",
                                          "--attempts",
                                          "2",
                                          "--retries",
                                          "1",
                                          "--timeout-ms",
                                          "100",
                                          "-o",
                                          sim->dir() + "/lossy.json"};
  const auto r = sim->run(lossy);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("fabricplace: error: discovery incomplete after 2 attempt(s)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("Nothing was written."), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(sim->dir() + "/lossy.json"));
  // Published on request, but marked.
  auto partial_args = lossy;
  partial_args.push_back("--allow-partial");
  const auto p = sim->run(partial_args);
  EXPECT_EQ(p.status, 0) << p.err;
  const Fabric partial = test::load(sim->dir() + "/lossy.json");
  EXPECT_FALSE(partial.topology().incomplete.empty());
  EXPECT_NE(cli(*sim, {"fabric", "show", sim->dir() + "/lossy.json"}, 0).find("INCOMPLETE"),
            std::string::npos);
  // What consumes it must not take it for the whole fabric.
  const std::string d =
      cli(*sim, {"fabric", "diff", sim->dir() + "/base.json", sim->dir() + "/lossy.json"}, 1);
  EXPECT_EQ(d.rfind("WARNING: the NEW fabric is INCOMPLETE", 0), 0u) << d;
  const auto e = sim->run(
      {kCli, "fabric", "export", sim->dir() + "/lossy.json", "--format", "slurm-topology"});
  EXPECT_EQ(e.status, 2);
  EXPECT_NE(e.err.find("the fabric is INCOMPLETE"), std::string::npos) << e.err;
  // Forced, it is marked; but a part with no host under a leaf switch (what the lost packets
  // left may be that little) has no topology at all, and no export writes an empty one.
  const bool some_leaf =
      std::any_of(partial.topology().leaf_stats.begin(), partial.topology().leaf_stats.end(),
                  [](const auto& l) { return l.hosts > 0; });
  const auto forced = sim->run({kCli, "fabric", "export", sim->dir() + "/lossy.json", "--format",
                                "slurm-topology", "--allow-partial"});
  if (some_leaf) {
    EXPECT_EQ(forced.status, 0) << forced.err;
    EXPECT_NE(
        forced.out.find("# WARNING: INCOMPLETE fabric (a partial discovery), so this file lacks: "),
        std::string::npos)
        << forced.out;
  } else {
    EXPECT_EQ(forced.status, 1) << forced.err;
    EXPECT_NE(forced.err.find("fabricplace: error: no host is under a leaf switch: Slurm's "
                              "topology would have no switch and no block"),
              std::string::npos)
        << forced.err;
    EXPECT_EQ(forced.out, "");
  }
  const std::string old_side =
      cli(*sim, {"fabric", "diff", sim->dir() + "/lossy.json", sim->dir() + "/base.json"}, 1);
  EXPECT_EQ(old_side.rfind("WARNING: the OLD fabric is INCOMPLETE", 0), 0u) << old_side;
  EXPECT_NE(old_side.find("what it lacks shows as added:"), std::string::npos) << old_side;
  // Loss cleared: a complete discovery again, the same as before.
  sim->command("Error \"leaf01\" 0");
  const Fabric again = discover(*sim, "again.json");
  EXPECT_EQ(without_origin(to_json(again)), without_origin(to_json(baseline)));
}

TEST(IbsimDiscovery, ExpectationsAreChecked) {
  const Fabric spec = test::gen("fat2:leaves=2,down=2,up=2");
  auto sim = start(net_for(spec, "expect"), spec);
  ASSERT_TRUE(sim->ok());
  const auto r = sim->run({kCli, "fabric", "discover", "--expect-hosts", "5", "--attempts", "1",
                           "-o", sim->dir() + "/x.json"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("found 4 hosts, expected 5"), std::string::npos) << r.err;
}

TEST(IbsimDiscovery, NoFabricIsAClearError) {
  // Without the umad2sim preload this machine has no InfiniBand device at all.
  const auto r =
      test::Ibsim::run_plain({kCli, "fabric", "discover", "-o", "/tmp/fp-never-written.json"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("libibnetdisc could not discover the fabric"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists("/tmp/fp-never-written.json"));
}

class Speeds : public ::testing::TestWithParam<std::string> {};

// Rates as ibnetdiscover decodes them on the same simulated fabric: plain speeds (no
// extended speed), extended speeds (capability bit 14, for switches in port 0), FDR10 (only
// in Mellanox ExtendedPortInfo), and a degraded width.
TEST_P(Speeds, DecodedLikeIbnetdiscover) {
  const std::string speed = GetParam();
  const std::string spec =
      "fat2:leaves=2,down=2,up=2,speed=" + std::string(speed == "FDR10" ? "QDR" : speed) +
      ",degrade=leaf01:3:w=1";
  const Fabric f = test::gen(spec);
  std::string net = to_ibsim_net(f);
  if (speed == "FDR10")
    for (std::size_t at; (at = net.find("xQDR\n")) != std::string::npos;)
      net.replace(at, 5, "xFDR10\n");
  auto sim = start(write_net(net, "speed-" + speed), f);
  ASSERT_TRUE(sim->ok());
  const Fabric found = discover(*sim, "found.json");
  const auto dump = sim->run({"/usr/sbin/ibnetdiscover"});
  ASSERT_EQ(dump.status, 0) << dump.err;
  FabricBuilder b("ibnetdiscover");
  ASSERT_TRUE(read_ibnetdiscover(dump.out, "ibnetdiscover", b));
  auto reference = b.build();
  ASSERT_TRUE(reference);
  EXPECT_EQ(without_origin(to_json(linked_only(found))), without_origin(to_json(*reference)));
  EXPECT_EQ(found.topology().tiers[0].nominal.to_string(), "4x" + speed);
  ASSERT_EQ(found.topology().degraded_links.size(), 1u);
  EXPECT_EQ(found.link(found.topology().degraded_links[0].link).rate.to_string(), "1x" + speed);
}
INSTANTIATE_TEST_SUITE_P(Ibsim, Speeds,
                         ::testing::Values("SDR", "DDR", "QDR", "FDR10", "FDR", "EDR", "HDR"));

// MADs that libibnetdisc loses without failing: each must make the discovery incomplete.
struct LostMad {
  const char* name;
  const char* error;    // ibsim console: Error "<node>" <percent> <attribute id>
  const char* missing;  // what the report must say
  friend void PrintTo(const LostMad& m, std::ostream* os) { *os << m.name; }
};
class LostMads : public ::testing::TestWithParam<LostMad> {};
TEST_P(LostMads, MakeDiscoveryIncomplete) {
  // FDR10 links, so that Mellanox ExtendedPortInfo (attribute 0xff90) matters too.
  const Fabric f = test::gen("fat2:leaves=4,down=4,up=4,speed=QDR");
  std::string net = to_ibsim_net(f);
  for (std::size_t at; (at = net.find("xQDR\n")) != std::string::npos;)
    net.replace(at, 5, "xFDR10\n");
  auto sim = start(write_net(net, GetParam().name), f);
  ASSERT_TRUE(sim->ok());
  sim->command(GetParam().error);
  const auto r =
      sim->run({kCli, "fabric", "discover", "--attempts", "1", "-o", sim->dir() + "/x.json"});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find(GetParam().missing), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(sim->dir() + "/x.json"));
}
INSTANTIATE_TEST_SUITE_P(
    Ibsim, LostMads,
    ::testing::Values(LostMad{"ExtendedPortInfo", "Error \"leaf02\" 100 0xff90",
                              "8 link(s) read as FDR10 at one end and QDR at the other (a Mellanox "
                              "ExtendedPortInfo lost)"},
                      LostMad{"HcaPortInfo", "Error \"node005_mlx5_0\" 100 0x15",
                              "1 port(s) whose PortInfo never arrived: node005 mlx5_0[1]"},
                      LostMad{"SwitchInfo", "Error \"spine01\" 100 0x12",
                              "1 switch(es) whose SwitchInfo never arrived: spine01"}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(IbsimDiscovery, AHostPoweredOffIsALostLinkOnItsLeaf) {
  const Fabric spec = test::gen("fat2:leaves=4,down=4,up=4");
  auto sim = start(net_for(spec, "poweroff"), spec);
  ASSERT_TRUE(sim->ok());
  discover(*sim, "a.json");
  sim->command("Unlink \"node003_mlx5_0\"[1]");
  const Fabric b = discover(*sim, "b.json", {"--previous", sim->dir() + "/a.json"});
  EXPECT_EQ(b.num_hosts(), 15u);
  ASSERT_EQ(b.topology().lost_links.size(), 1u);
  const std::string show = cli(*sim, {"fabric", "show", sim->dir() + "/b.json"}, 0);
  EXPECT_NE(show.find("    down leaf01[3]: linked to node003 mlx5_0[1] in the previous discovery; "
                      "hosts behind: node003\n"),
            std::string::npos)
      << show;
  EXPECT_EQ(cli(*sim, {"fabric", "diff", sim->dir() + "/a.json", sim->dir() + "/b.json"}, 1),
            "removed node003 mlx5_0[1] - leaf01[3]: 4xHDR\noversubscription leaf01: 1.00:1 -> "
            "0.75:1\nhosts removed: node003\n");
}

TEST(IbsimDiscovery, UnreadableCountersAreKeptAsProblems) {
  // After an uplink goes down and before the SM reroutes, LID-routed PortCounters queries
  // through it fail: those links are not known to be healthy, and the JSON says so.
  const Fabric spec = test::gen("fat2:leaves=4,down=4,up=4");
  auto sim = start(net_for(spec, "unreadable"), spec);
  ASSERT_TRUE(sim->ok());
  std::filesystem::create_directories(sim->dir() + "/osm");
  const auto sm =
      sim->run({"/usr/sbin/opensm", "-o", "-s", "0", "-f", sim->dir() + "/osm/opensm.log"}, "", 60,
               {{"OSM_TMP_DIR", sim->dir() + "/osm"}, {"OSM_CACHE_DIR", sim->dir() + "/osm"}});
  ASSERT_EQ(sm.status, 0);
  sim->command("Unlink \"leaf01\"[5]");
  const Fabric f = discover(*sim, "f.json", {"--counters", "--timeout-ms", "100"});
  std::size_t unreadable = 0;
  for (const Port& p : f.ports())
    unreadable += std::count(p.health.problems.begin(), p.health.problems.end(),
                             "PortCounters could not be read");
  EXPECT_GT(unreadable, 0u);
  EXPECT_FALSE(f.topology().unhealthy_links.empty());
  FabricBuilder again;
  ASSERT_TRUE(read_json(test::slurp(sim->dir() + "/f.json"), "f.json", again));
  auto g = again.build();
  ASSERT_TRUE(g);
  EXPECT_EQ(g->topology().unhealthy_links.size(), f.topology().unhealthy_links.size());
}

TEST(IbsimDiscovery, ExtendedPortInfoLostAtBothEndsIsStillCaught) {
  // Every ExtendedPortInfo answer dropped: both ends of every FDR10 link would read QDR
  // and agree. The re-read of ExtendedPortInfo over the directed route fails too, and says so.
  const Fabric f = test::gen("fat2:leaves=4,down=4,up=4,speed=QDR");
  std::string net = to_ibsim_net(f);
  for (std::size_t at; (at = net.find("xQDR\n")) != std::string::npos;)
    net.replace(at, 5, "xFDR10\n");
  auto sim = start(write_net(net, "epi-both"), f);
  ASSERT_TRUE(sim->ok());
  const Fabric clean = discover(*sim, "clean.json");
  EXPECT_EQ(clean.topology().tiers[0].nominal.to_string(), "4xFDR10");
  for (const auto& n : f.nodes()) {
    const auto id = n.type == NodeType::kSwitch
                        ? f.topology().switch_name[idx(*f.find_guid(n.guid))]
                        : std::string(split_ca_description(n.description).first) + "_" +
                              std::string(split_ca_description(n.description).second);
    sim->command("Error \"" + id + "\" 100 0xff90");
  }
  const auto r =
      sim->run({kCli, "fabric", "discover", "--attempts", "2", "-o", sim->dir() + "/x.json"});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("whose ExtendedPortInfo could not be read (FDR10 unknown)"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(sim->dir() + "/x.json"));
  // QDR fabrics (no FDR10 anywhere) are confirmed as QDR, not flagged.
  const Fabric q = test::gen("fat2:leaves=2,down=2,up=2,speed=QDR");
  auto qsim = start(net_for(q, "qdr"), q);
  ASSERT_TRUE(qsim->ok());
  EXPECT_EQ(discover(*qsim, "q.json").topology().tiers[0].nominal.to_string(), "4xQDR");
}
