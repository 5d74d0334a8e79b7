// SPDX-License-Identifier: GPL-2.0-or-later
// The simulator on traces small enough to follow by hand: exact start and end times, hosts,
// per-directed-link flows and slowdowns.
#include <gtest/gtest.h>

#include "fabricplace/fabric/spec.hpp"
#include "fabricplace/placement/route_order.hpp"
#include "fabricplace/policies/policies.hpp"
#include "fabricplace/routes/model.hpp"
#include "fabricplace/sim/degrade.hpp"
#include "fabricplace/sim/report.hpp"
#include "fabricplace/sim/simulator.hpp"

namespace fp = fabricplace;
using namespace fabricplace;
using fabric::HostId;

namespace {

std::unique_ptr<const routes::Model> model(const fabric::Fabric& f,
                                           routes::Kind kind = routes::Kind::kFtree) {
  routes::Spec s;
  s.automatic = false;
  s.kind = kind;
  auto m = routes::make_model(f, s);
  EXPECT_TRUE(m) << m.error().to_string();
  return std::move(*m);
}

struct World {
  fabric::Fabric f;
  std::unique_ptr<const routes::Model> routes;
  policies::Planner planner;
  sim::Simulator sim;
  World(fabric::Fabric fab, sim::SimOptions opt)
      : f(std::move(fab)), routes(model(f)), planner(f, {}, routes.get()), sim(planner, opt) {}
};

/// A spec's fabric with its ftree routes and placement context, built in place (the routes
/// point into the fabric, so this is never moved).
struct Routed {
  fabric::Fabric f;
  std::unique_ptr<const routes::Model> model_;
  const routes::Table& routes;
  placement::Context ctx;
  explicit Routed(const char* spec)
      : f(*fabric::generate(spec)),
        model_(model(f)),
        routes(*model_->table()),
        ctx(placement::prepare(f)) {}
  Routed(const Routed&) = delete;
};

fabric::Fabric make(const char* spec) {
  auto f = fabric::generate(spec);
  EXPECT_TRUE(f) << f.error().to_string();
  return std::move(*f);
}

sim::Trace itp(const std::string& text, std::uint32_t tp_cap = 8) {
  sim::TraceOptions o;
  o.tp_cap = tp_cap;
  auto t = sim::parse_trace(text, "tiny.csv", o);
  EXPECT_TRUE(t) << t.error().to_string();
  return std::move(*t);
}

std::string names(const fabric::Fabric& f, const std::vector<HostId>& hosts) {
  std::string out;
  for (auto h : hosts) out += (out.empty() ? "" : " ") + f.host(h).name;
  return out;
}

/// The directed link from switch or host `a` to `b` (names as in the fabric).
routes::DirLink dl(const fabric::Fabric& f, const std::string& a, const std::string& b) {
  auto node_of = [&](const std::string& n) {
    if (auto s = f.find_switch(n)) return *s;
    return f.host(*f.find_host(n)).hcas[0];
  };
  const auto na = node_of(a), nb = node_of(b);
  for (const auto& p : f.ports_of(na)) {
    const fabric::PortId pid{static_cast<std::uint32_t>(&p - f.ports().data())};
    if (p.link != fabric::kNoLink && f.peer_node(pid) == nb) return routes::dir_link(f, pid);
  }
  ADD_FAILURE() << "no link " << a << " -> " << b;
  return 0;
}

// Two leaves of 4 hosts under one spine, one uplink each (4:1): every ring edge between
// the leaves crosses leaf01-spine01 or leaf02-spine01. first-fit takes hosts in index order,
// so its rings are easy to follow. Communication fraction 0.5: a job whose ring runs at
// 1/s of full speed progresses at 1 / (0.5 + 0.5 s).
//
//   job  submit  dur  GPUs  nodes  what happens
//   a       0     50   16     2    node001-002, ends 50
//   x       0    100   24     3    node003-005: ring 003>004>005>003 crosses both uplinks once
//   y      60     60   32     4    node001,002,006,007: 002>006 and 007>001 cross too, so each
//                                  uplink carries 2 flows: s = 2, both run at 2/3 speed.
//                                  x has 40 s of work left: ends 60 + 40 / (2/3) = 120.
//                                  y: 40 s done by 120, then alone (s = 1): ends 140.
//   w      65    100   16     2    free: node008 only. Head of the queue; its reservation:
//                                  at x's estimated end (100) first-fit would place it on
//                                  node003,004 (free then: node003-005, node008).
//   z      70     10    8     1    backfilled at 70 on node008 (ends 80 <= 100)
//   v      75     50    8     1    at 80 node008 is free again: ends after 100, but node008
//                                  is outside the reservation: backfilled at 80, ends 130
//   w                              starts at 120 when x ends: node003,004, ends 220
constexpr const char* kTiny =
    "job_id,submission_time,duration,num_gpu\n"
    "a,0,50,16\n"
    "x,0,100,24\n"
    "y,60,60,32\n"
    "w,65,100,16\n"
    "z,70,10,8\n"
    "v,75,50,8\n";

TEST(Simulator, TinyTraceByHand) {
  sim::SimOptions opt;
  opt.comm_fraction = 0.5;
  World w(make("fat2:leaves=2,down=4,up=1"), opt);
  const auto t = itp(kTiny);
  const sim::SimPolicy ff{policies::Policy::kFirstFit};
  const auto run = w.sim.run(t, ff, w.sim.unplaceable(t, ff));
  ASSERT_EQ(run.jobs.size(), 6u);
  struct Want {
    double start, end;
    const char* hosts;
    double cs, worst;
    std::uint32_t flows;
  };
  const Want want[] = {
      {0, 50, "node001 node002", 1, 1, 0},
      {0, 120, "node003 node004 node005", 1.5, 2, 2},
      {60, 140, "node001 node002 node006 node007", 1.75, 2, 2},
      {120, 220, "node003 node004", 1, 1, 0},
      {70, 80, "node008", 1, 1, 0},
      {80, 130, "node008", 1, 1, 0},
  };
  for (std::size_t i = 0; i < 6; ++i) {
    SCOPED_TRACE(t.jobs[i].id);
    const auto& o = run.jobs[i];
    ASSERT_TRUE(o.ran);
    EXPECT_DOUBLE_EQ(o.start, want[i].start);
    EXPECT_NEAR(o.end, want[i].end, 1e-9);
    EXPECT_EQ(names(w.f, o.hosts), want[i].hosts);
    EXPECT_NEAR(o.comm_slowdown, want[i].cs, 1e-9);
    EXPECT_DOUBLE_EQ(o.worst_comm_slowdown, want[i].worst);
    EXPECT_EQ(o.max_link_load, want[i].flows);
  }
  // Per directed link: the two uplinks and the spine's two downlinks carried 2 flows at
  // once (x and y), every host link 1.
  EXPECT_EQ(run.link_peak[dl(w.f, "leaf01", "spine01")], 2 * routes::kEdge);
  EXPECT_EQ(run.link_peak[dl(w.f, "spine01", "leaf02")], 2 * routes::kEdge);
  EXPECT_EQ(run.link_peak[dl(w.f, "leaf02", "spine01")], 2 * routes::kEdge);
  EXPECT_EQ(run.link_peak[dl(w.f, "spine01", "leaf01")], 2 * routes::kEdge);
  EXPECT_EQ(run.link_peak[dl(w.f, "node002", "leaf01")], routes::kEdge);
  EXPECT_EQ(run.link_peak[dl(w.f, "leaf01", "node002")], routes::kEdge);
  EXPECT_EQ(run.link_peak[dl(w.f, "node008", "leaf02")], 0u);  // single-node jobs only
  EXPECT_EQ(run.max_link_load, 2.0);
  EXPECT_EQ(run.never_started, 0u);

  const auto s = sim::summarize(t, run, w.f.num_hosts(), opt);
  EXPECT_EQ(s.jobs, 6u);
  EXPECT_DOUBLE_EQ(s.mean_wait_s, (0 + 0 + 0 + 55 + 0 + 5) / 6.0);
  EXPECT_DOUBLE_EQ(s.p95_wait_s, 55);
  EXPECT_DOUBLE_EQ(s.makespan_s, 220);
  // busy node-seconds: a 2x50, x 3x120, y 4x80, w 2x100, z 10, v 50 = 1040 of 8 x 220.
  EXPECT_DOUBLE_EQ(s.utilization, 1040.0 / (8 * 220));
  // GPU-hours lost: x 20 s x 24 GPUs, y 20 s x 32 GPUs.
  EXPECT_NEAR(s.gpu_hours_lost, (20.0 * 24 + 20.0 * 32) / 3600, 1e-12);
  EXPECT_DOUBLE_EQ(s.mean_comm_slowdown, (1 + 1.5 + 1.75 + 1) / 4);  // a, x, y, w
}

TEST(Simulator, DegradedUplinkSlowsTheRingThatCrossesIt) {
  // leaf01's only uplink trained at 1x: 50 of 200 Gb/s, so a ring crossing it runs at 1/4
  // speed (s = 4) and, with half its time in communication, at 1 / (0.5 + 2) = 0.4.
  sim::SimOptions opt;
  opt.comm_fraction = 0.5;
  World w(make("fat2:leaves=2,down=4,up=1,degrade=leaf01:5:w=1"), opt);
  const auto t = itp("job_id,submission_time,duration,num_gpu\nfill,0,100,24\nx,0,100,16\n");
  const sim::SimPolicy ff{policies::Policy::kFirstFit};
  const auto run = w.sim.run(t, ff, {});
  EXPECT_EQ(names(w.f, run.jobs[1].hosts), "node004 node005");
  EXPECT_DOUBLE_EQ(run.jobs[1].comm_slowdown, 4);
  EXPECT_NEAR(run.jobs[1].end, 250, 1e-9);
  EXPECT_DOUBLE_EQ(run.jobs[0].end, 100);  // inside leaf01: no uplink
}

TEST(Simulator, FabricPolicyKeepsTpGroupsInLeavesWhereSlurmTreeSplitsThem) {
  // 3 hosts free in each leaf (node001 and node005 busy until 1000): a job of 4 nodes in TP
  // groups of 2 nodes. Slurm's tree takes 3 + 1 and splits a group; ours takes 2 + 2.
  sim::SimOptions opt;
  World w(make("fat2:leaves=2,down=4,up=2"), opt);
  const auto t =
      itp("job_id,submission_time,duration,num_gpu\n"
          "b1,0,1000,8\nfill,0,10,24\nb2,0,1000,8\nj,20,100,32\n",
          16);
  // b1 -> node001; fill -> node002-004 (ends 10); b2 -> node005; j at 20 has 6 free.
  for (auto pol : {policies::Policy::kFabric, policies::Policy::kSlurmTree}) {
    const sim::SimPolicy p{pol};
    const auto run = w.sim.run(t, p, {});
    const auto& j = run.jobs[3];
    SCOPED_TRACE(p.name());
    EXPECT_EQ(j.start, 20);
    EXPECT_EQ(j.hosts.size(), 4u);
    EXPECT_EQ(j.leaves, 2u);
    if (pol == policies::Policy::kFabric) {
      EXPECT_EQ(j.tp_groups_split, 0u);
    } else {
      EXPECT_EQ(j.tp_groups_split, 1u);
    }
  }
}

TEST(Simulator, SameInputsSameOutputs) {
  sim::SimOptions opt;
  World w(make("fat3:pods=2,leaves=2,down=4,up=4"), opt);
  std::string text = "job_id,submission_time,duration,num_gpu\n";
  // A deterministic mix of sizes and overlaps.
  for (int i = 0; i < 200; ++i) {
    const int gpus[] = {8, 16, 32, 8, 64, 24, 8, 48};
    text += "j" + std::to_string(i) + "," + std::to_string(i * 7 % 50 + i * 3) + "," +
            std::to_string(50 + (i * 37) % 400) + "," + std::to_string(gpus[i % 8]) + "\n";
  }
  const auto t = itp(text, 16);
  std::vector<sim::Run> a, b;
  for (const char* list : {"fabric,slurm-tree,first-fit"}) {
    auto pols = sim::parse_sim_policies(list);
    ASSERT_TRUE(pols);
    for (const auto& p : *pols) {
      a.push_back(w.sim.run(t, p, {}));
      b.push_back(w.sim.run(t, p, {}));
    }
  }
  EXPECT_EQ(sim::jobs_csv(t, a, w.f), sim::jobs_csv(t, b, w.f));
  std::vector<sim::Summary> sa, sb;
  for (const auto& r : a) sa.push_back(sim::summarize(t, r, w.f.num_hosts(), opt));
  for (const auto& r : b) sb.push_back(sim::summarize(t, r, w.f.num_hosts(), opt));
  EXPECT_EQ(sim::summary_csv(sa), sim::summary_csv(sb));
  // Every job ran under every policy, on as many hosts as it asked for, for at least its
  // duration.
  for (const auto& s : sa) EXPECT_EQ(s.jobs, 200u) << s.policy;
  for (const auto& r : a) {
    for (std::size_t i = 0; i < t.jobs.size(); ++i) {
      const auto& o = r.jobs[i];
      ASSERT_EQ(o.hosts.size(), t.jobs[i].shape.nodes) << r.policy.name() << " " << t.jobs[i].id;
      EXPECT_GE(o.start, t.jobs[i].submit);
      EXPECT_GE(o.end - o.start, t.jobs[i].duration - 1e-9);
    }
  }
}

TEST(SimPolicies, Parse) {
  auto p = sim::parse_sim_policies("fabric, slurm-tree,first-fit");
  ASSERT_TRUE(p);
  ASSERT_EQ(p->size(), 3u);
  EXPECT_EQ((*p)[1].name(), "slurm-tree");
  EXPECT_EQ(sim::parse_sim_policies("fabric,fabric").error().message,
            "policy 'fabric' given twice");
  EXPECT_EQ(
      sim::parse_sim_policies("slurm-tree+routes").error().message,
      "unknown policy 'slurm-tree+routes': expected fabric, slurm-tree, slurm-block or first-fit");
  EXPECT_EQ(sim::parse_sim_policies("fabric+routes").error().message,
            "policy 'fabric+routes' is now 'fabric': the fabric policy always orders its ring "
            "on the routes");
}

TEST(RouteAwareRing, AvoidsAnUplinkAnotherJobLoads) {
  // Two leaves of 4 hosts, 2 uplinks each (spine01, spine02). ftree sends traffic for the
  // host of index D (node001 = 0 ...) up uplink D mod 2: node005 via spine01, node006 via
  // spine02. The plain ring node001 node002 | node005 node006 enters leaf02 at node005, up
  // leaf01's spine01 uplink, which another job already loads: the route-aware ring enters at
  // node006 instead (spine02) and leaves leaf02 from node005.
  const Routed r("fat2:leaves=2,down=4,up=2,spines=2");
  const auto& f = r.f;
  const auto* routes = &r.routes;
  const auto& model = *r.model_;
  const auto& ctx = r.ctx;
  auto h = [&](const char* n) { return *f.find_host(n); };
  std::vector<routes::DirLink> p;
  ASSERT_TRUE(routes->path(h("node002"), h("node005"), p));
  ASSERT_EQ(p.size(), 4u);
  EXPECT_EQ(p[1], dl(f, "leaf01", "spine01"));
  p.clear();
  ASSERT_TRUE(routes->path(h("node002"), h("node006"), p));
  EXPECT_EQ(p[1], dl(f, "leaf01", "spine02"));

  const std::vector<HostId> plain{h("node001"), h("node002"), h("node005"), h("node006")};
  std::vector<routes::Load> flows(2 * f.num_links(), 0);
  // Idle fabric: the plain order is already best (ties keep it).
  EXPECT_EQ(names(f, placement::route_aware_ring(ctx.blocks, model, plain, flows)),
            "node001 node002 node005 node006");
  flows[dl(f, "leaf01", "spine01")] = routes::kEdge;
  EXPECT_EQ(names(f, placement::route_aware_ring(ctx.blocks, model, plain, flows)),
            "node001 node002 node006 node005");
  // A single leaf, or a ring that is not leaf-contiguous, is returned as it is.
  const std::vector<HostId> one{h("node003"), h("node001")};
  EXPECT_EQ(names(f, placement::route_aware_ring(ctx.blocks, model, one, flows)),
            "node003 node001");
  const std::vector<HostId> mixed{h("node001"), h("node005"), h("node002")};
  EXPECT_EQ(names(f, placement::route_aware_ring(ctx.blocks, model, mixed, flows)),
            "node001 node005 node002");
}

TEST(RouteAwareRing, SpreadsTheJobsOwnEdgesOverUplinks) {
  // One job on 4 leaves of a 2-level tree, 2 hosts per leaf, on an idle fabric: its 4
  // inter-leaf edges each go up a distinct uplink and come down a distinct downlink, so no
  // link carries 2 of its flows.
  const Routed r("fat2:leaves=4,down=4,up=4");
  const auto& f = r.f;
  const auto* routes = &r.routes;
  const auto& model = *r.model_;
  const auto& ctx = r.ctx;
  std::vector<HostId> ring;
  for (const char* n :
       {"node001", "node002", "node005", "node006", "node009", "node010", "node013", "node014"})
    ring.push_back(*f.find_host(n));
  std::vector<routes::Load> none;
  auto peak = [&](const std::vector<HostId>& ring_) {
    std::vector<std::uint32_t> load(2 * f.num_links(), 0);
    std::vector<routes::DirLink> p;
    for (std::size_t i = 0; i < ring_.size(); ++i) {
      p.clear();
      routes->path(ring_[i], ring_[(i + 1) % ring_.size()], p);
      for (auto d : p) ++load[d];
    }
    return *std::max_element(load.begin(), load.end());
  };
  const auto better = placement::route_aware_ring(ctx.blocks, model, ring, none);
  EXPECT_EQ(peak(better), 1u);
  EXPECT_LE(peak(better), peak(ring));
}

TEST(RouteAwareRing, TriesEveryOpeningHostOfTheFirstLeaf) {
  // A running ring node001 node002 | node005 node006 loads leaf01 -> spine01 (to node005,
  // index 4) and leaf02 -> spine01 (to node001, index 0). The new job on node003 node004 |
  // node007 node008 avoids both only if it enters leaf02 at node008 (index 7: spine02) and
  // leaf01 at node004 (index 3: spine02), which fixes the first leaf's opening host: a greedy
  // walk from the plain order's opening host (node003) cannot get there.
  const Routed r("fat2:leaves=2,down=4,up=2,spines=2");
  const auto& f = r.f;
  const auto& model = *r.model_;
  const auto& ctx = r.ctx;
  auto hosts = [&](std::initializer_list<const char*> names) {
    std::vector<HostId> out;
    for (const char* n : names) out.push_back(*f.find_host(n));
    return out;
  };
  std::vector<routes::Load> flows;
  routes::add_ring_load(model, hosts({"node001", "node002", "node005", "node006"}), 1, flows);
  EXPECT_EQ(flows[dl(f, "leaf01", "spine01")], routes::kEdge);
  EXPECT_EQ(flows[dl(f, "leaf02", "spine01")], routes::kEdge);
  const auto plain = hosts({"node003", "node004", "node007", "node008"});
  auto with_plain = flows;
  routes::add_ring_load(model, plain, 0, with_plain);
  EXPECT_EQ(routes::max_switch_link_load(f, with_plain), 2 * routes::kEdge);

  const auto better = placement::route_aware_ring(ctx.blocks, model, plain, flows);
  EXPECT_EQ(names(f, better), "node004 node003 node008 node007");
  auto with_better = flows;
  routes::add_ring_load(model, better, 0, with_better);
  EXPECT_EQ(routes::max_switch_link_load(f, with_better), routes::kEdge);
}

TEST(Simulator, BackfillKeepsOffTheHostsReservedForTheHead) {
  // fabric policy, TP groups of 4 nodes (32 GPUs): H needs a whole leaf. At 20 leaf01 has
  // node001-003 free and node004 busy until 50 (R); leaf02 node005-007 free, node008 busy
  // until 1000 (S). H's reservation: leaf01 at 50. J (2 nodes, ends at 521, after 50) may
  // only use hosts outside it: node005-006. So H starts at 50, not after J.
  sim::SimOptions opt;
  opt.comm_fraction = 0;
  World w(make("fat2:leaves=2,down=4,up=1"), opt);
  const auto t =
      itp("job_id,submission_time,duration,num_gpu\n"
          "P,0,10,24\nQ,0,10,24\nR,0,50,8\nS,0,1000,8\nH,20,100,32\nJ,21,500,16\n",
          32);
  const auto run = w.sim.run(t, {policies::Policy::kFabric}, {});
  EXPECT_EQ(names(w.f, run.jobs[4].hosts), "node001 node002 node003 node004");
  EXPECT_EQ(run.jobs[4].start, 50);
  EXPECT_EQ(names(w.f, run.jobs[5].hosts), "node005 node006");
  EXPECT_EQ(run.jobs[5].start, 21);
}

TEST(Simulator, JobsEndingTogetherAllCountForTheReservation) {
  // A and B (2 nodes each) both end at 100; H needs 6 of 8 hosts, so its reservation at 100
  // takes node001-006 and leaves node007-008 spare: C (2 nodes, ends long after 100) is
  // backfilled there at 20.
  sim::SimOptions opt;
  World w(make("fat2:leaves=2,down=4,up=1"), opt);
  const auto t =
      itp("job_id,submission_time,duration,num_gpu\nA,0,100,16\nB,0,100,16\nH,10,50,48\n"
          "C,20,500,16\n");
  const auto run = w.sim.run(t, {policies::Policy::kFirstFit}, {});
  EXPECT_EQ(run.jobs[2].start, 100);
  EXPECT_EQ(run.jobs[3].start, 20);
  EXPECT_EQ(names(w.f, run.jobs[3].hosts), "node007 node008");
}

// Issue #14: a running ring loads leaf01's and leaf02's single uplinks (R on node004 and
// node008); J (6 nodes) then fits leaf01 + leaf03 best by fit, but its ring would share
// leaf01's uplink with R. The fabric policy sees R's load and takes leaf03 + leaf04: J's
// predicted and simulated slowdown are 1.0. slurm-tree shares the link: both run at half.
TEST(Simulator, RunningLoadIsAvoided) {
  sim::SimOptions opt;
  opt.comm_fraction = 0.5;
  World w(make("fat2:leaves=4,down=4,up=1"), opt);
  const auto t =
      itp("job_id,submission_time,duration,num_gpu\n"
          "X1,0,10,24\nX2,0,1000,24\nX3,0,10,32\nX4,0,10,32\nR,0,1000,16\nJ,20,100,48\n");
  const auto fab = w.sim.run(t, {policies::Policy::kFabric}, {});
  EXPECT_EQ(names(w.f, fab.jobs[4].hosts), "node004 node008");
  EXPECT_EQ(names(w.f, fab.jobs[5].hosts), "node009 node010 node011 node012 node013 node014");
  EXPECT_EQ(fab.jobs[5].comm_slowdown, 1.0);
  EXPECT_EQ(fab.jobs[5].worst_comm_slowdown, 1.0);
  EXPECT_EQ(fab.jobs[4].worst_comm_slowdown, 1.0);
  EXPECT_EQ(fab.jobs[5].end, 120);
  const auto slurm = w.sim.run(t, {policies::Policy::kSlurmTree}, {});
  EXPECT_EQ(names(w.f, slurm.jobs[4].hosts), "node004 node008");
  EXPECT_EQ(names(w.f, slurm.jobs[5].hosts), "node001 node002 node009 node010 node011 node012");
  EXPECT_EQ(slurm.jobs[5].comm_slowdown, 2.0);
  EXPECT_EQ(slurm.jobs[4].worst_comm_slowdown, 2.0);
  // Half its time at half speed: 100 s of work take 100 x (0.5 + 0.5 x 2) = 150 s.
  EXPECT_EQ(slurm.jobs[5].end, 170);
}

}  // namespace

// NVLink domains: the time integral of fragmented domains (some hosts busy, some free). Two
// domains of 4 hosts; first-fit puts a (1 node, 100 s) on node001 and b (3 nodes, 200 s) on
// node[002-004]: nvl01 is whole busy until a ends, then fragmented until b ends (100 s);
// nvl02 is never touched. The summary reports it over the makespan (200 s).
TEST(Simulator, FragmentedDomainSeconds) {
  sim::SimOptions opt;
  World w(make("fat2:leaves=2,down=4,up=4,nvl=4,gpus=4"), opt);
  sim::TraceOptions o;
  o.gpus_per_node = 4;
  o.tp_cap = 4;
  auto t = sim::parse_trace("job_id,submission_time,duration,num_gpu\na,0,100,4\nb,0,200,12\n",
                            "tiny.csv", o);
  ASSERT_TRUE(t) << t.error().to_string();
  const auto run = w.sim.run(*t, {policies::Policy::kFirstFit}, {});
  EXPECT_EQ(names(w.f, run.jobs[0].hosts), "node001");
  EXPECT_EQ(names(w.f, run.jobs[1].hosts), "node002 node003 node004");
  EXPECT_EQ(run.domains, 2u);
  EXPECT_DOUBLE_EQ(run.fragmented_domain_seconds, 100.0);
  const auto s = sim::summarize(*t, run, w.f.num_hosts(), opt);
  EXPECT_DOUBLE_EQ(s.mean_fragmented_domains, 0.5);
  // The fabric policy puts the 1-node job in the fullest domain that fits: the same here.
  const auto fab = w.sim.run(*t, {policies::Policy::kFabric}, {});
  EXPECT_EQ(names(w.f, fab.jobs[0].hosts), "node001");
}

// A what-if with degraded links keeps the fabric's NVLink domains.
TEST(Simulator, DegradedLinksKeepDomains) {
  const auto f = make("rail:sus=2,hosts=4,rails=2,nvl=4,gpus=4");
  auto d = sim::degrade_random_links(f, 2, 1);
  ASSERT_TRUE(d) << d.error().to_string();
  ASSERT_EQ(d->fabric.domains().size(), 2u);
  EXPECT_EQ(d->fabric.domains()[1].name, "nvl02");
  EXPECT_EQ(d->fabric.domains()[1].gpus_per_host, 4u);
  EXPECT_EQ(d->fabric.domain_of(*d->fabric.find_host("node005")), 1u);
}
