// SPDX-License-Identifier: GPL-2.0-or-later
// NVLink domains in placement (docs/placement.md, "NVLink domains"): the EP shape; TP and EP
// groups never leave a domain (seeded property test); small jobs go to the fullest domain that
// fits (exact hosts); a domain across leaves holds a group across them.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "fabricplace/common/hostlist.hpp"
#include "fabricplace/fabric/domains.hpp"
#include "fabricplace/placement/route_order.hpp"
#include "fabricplace/policies/policies.hpp"
#include "test_support.hpp"

namespace fabricplace::policies {
namespace {

using fabric::HostId;
using fabric::idx;
using placement::HostState;

std::string names(const fabric::Fabric& f, const std::vector<HostId>& hs) {
  std::vector<std::string> n;
  for (HostId h : hs) n.push_back(f.host(h).name);
  return hostlist::compress(n);
}

placement::NodeStates busy(const fabric::Fabric& f, const std::string& hosts) {
  auto st = placement::busy_hosts(f, hosts);
  EXPECT_TRUE(st) << st.error().to_string();
  return *st;
}

placement::JobRequest job(std::uint32_t nodes, std::uint32_t G, std::uint32_t tp,
                          std::uint32_t ep = 0) {
  placement::ShapeSpec s;
  s.nodes = nodes;
  s.gpus_per_node = G;
  s.tp = tp;
  if (ep) s.ep = ep;
  auto shape = placement::JobShape::make(s);
  EXPECT_TRUE(shape) << shape.error().to_string();
  return placement::request(*shape);
}

}  // namespace

TEST(DomainShape, EpRulesAndGroup) {
  using placement::JobShape;
  using placement::ShapeSpec;
  auto err = [](ShapeSpec s) {
    auto r = JobShape::make(s);
    EXPECT_FALSE(r);
    return r ? std::string() : r.error().message;
  };
  ShapeSpec s;
  s.nodes = 16;
  s.gpus_per_node = 4;
  s.tp = 4;
  s.ep = 16;
  auto shape = JobShape::make(s);
  ASSERT_TRUE(shape) << shape.error().message;
  EXPECT_EQ(shape->group_gpus(), 16u);
  EXPECT_EQ(shape->group_nodes(), 4u);
  EXPECT_EQ(shape->ranks_per_group(), 4u);  // TP ranks, not EP
  s.nodes = 16;
  s.ep = 2;  // an EP group inside a TP group: the TP group is kept together
  shape = JobShape::make(s);
  ASSERT_TRUE(shape);
  EXPECT_EQ(shape->group_gpus(), 4u);
  EXPECT_EQ(shape->spec().ep, 2u);
  s.ep = 0;
  EXPECT_EQ(err(s), "--ep must be at least 1");
  s.ep = 6;
  EXPECT_EQ(err(s),
            "--ep 6 with 4 GPUs per node: an EP group larger than a node must span whole nodes "
            "(a multiple of 4)");
  s.ep = 3;
  EXPECT_EQ(err(s),
            "--ep 3 with 4 GPUs per node: an EP group smaller than a node must divide it (4 is "
            "not a multiple of 3)");
  s.tp = 8;
  s.ep = 12;
  EXPECT_EQ(err(s),
            "--ep 12 with --tp 8: EP and TP groups must nest (one size a multiple of the "
            "other)");
  s.tp = 4;
  s.ep = 24;
  EXPECT_EQ(err(s), "--ep 24 does not tile the job: 64 GPUs are not a multiple of 24");
  s.ep = 16;
  s.pp = 8;
  EXPECT_EQ(err(s),
            "--ep 16 does not tile the job: 64 GPUs are not a multiple of max(TP, EP) x "
            "PP = 128");
  // An EP group of whole ranks: 3 ranks on 6 GPUs make 2 GPUs a rank, and EP 3 is 1.5 ranks.
  ShapeSpec r;
  r.nodes = 2;
  r.gpus_per_node = 6;
  r.ranks_per_node = 3;
  r.tp = 1;
  r.ep = 3;
  EXPECT_EQ(err(r),
            "--ep 3 with 6 GPUs per node and 3 tasks per node: an EP group would be 3 x 3 / 6 "
            "tasks, not a whole number, and 3 tasks do not split a node into whole EP groups");
}

// A one-node job goes to the fullest domain that still has a free host; larger groups to the
// fullest that holds them, whole domains left for large jobs.
TEST(DomainPlacement, FullestDomainThatFits) {
  const auto f = test::gen("fat2:leaves=2,down=8,up=8,nvl=4,gpus=4");  // nvl01..nvl04
  const Planner planner(f);
  // nvl01: 1 free (node004), nvl02: 2 free (node007-008), nvl03: 4 free, nvl04: 3 free.
  const auto st = busy(f, "node[001-003,005-006,013]");
  auto p = planner.place(job(1, 4, 4), st, Policy::kFabric);
  ASSERT_TRUE(p.feasible) << p.reason;
  EXPECT_EQ(names(f, p.hosts), "node004");
  EXPECT_EQ(p.leaves, std::vector<std::string>{"nvl01"});
  p = planner.place(job(2, 4, 8), st, Policy::kFabric);  // a TP group of 2 hosts
  ASSERT_TRUE(p.feasible) << p.reason;
  EXPECT_EQ(names(f, p.hosts), "node[007-008]");
  p = planner.place(job(2, 4, 4, 8), st, Policy::kFabric);  // an EP group of 2 hosts
  ASSERT_TRUE(p.feasible) << p.reason;
  EXPECT_EQ(names(f, p.hosts), "node[007-008]");
  p = planner.place(job(4, 4, 16), st, Policy::kFabric);
  ASSERT_TRUE(p.feasible) << p.reason;
  EXPECT_EQ(names(f, p.hosts), "node[009-012]");
  // Three one-host groups: the fullest domain that holds the job (its ring stays on NVLink),
  // nvl04, not the whole free nvl03; spread over nvl01 and nvl02 it would cross the network.
  p = planner.place(job(3, 4, 4), st, Policy::kFabric);
  ASSERT_TRUE(p.feasible) << p.reason;
  EXPECT_EQ(names(f, p.hosts), "node[014-016]");
  // A group larger than any domain's free hosts: no placement, and it says why.
  p = planner.place(job(8, 4, 32), st, Policy::kFabric);
  EXPECT_FALSE(p.feasible);
  EXPECT_FALSE(p.reason.empty());
}

// Domains of 18 hosts across leaves of 12: a TP group of 72 GPUs lies in one domain over two
// leaves (its traffic is on NVLink); first-fit, which knows no domains, is measured by them.
TEST(DomainPlacement, DomainAcrossLeavesHoldsItsGroup) {
  const auto f = test::gen("fat2:leaves=3,down=12,up=12,nvl=18,gpus=4");
  const Planner planner(f);
  auto st = busy(f, "node001");
  auto p = planner.place(job(18, 4, 72), st, Policy::kFabric);
  ASSERT_TRUE(p.feasible) << p.reason;
  EXPECT_EQ(names(f, p.hosts), "node[019-036]");
  EXPECT_EQ(p.measures.tp_groups_split, 0u);
  EXPECT_EQ(p.measures.leaves, 1u);  // one domain
  const auto ff = planner.place(job(18, 4, 72), st, Policy::kFirstFit);
  ASSERT_TRUE(ff.feasible);
  EXPECT_EQ(names(f, ff.hosts), "node[002-019]");
  EXPECT_EQ(ff.measures.tp_groups_split, 1u);  // node019 is in nvl02
}

// Seeded fabrics with domains (straddling leaves or not, rail groups), random busy hosts and
// TP/EP shapes: the fabric policy places whenever the domains' free hosts hold the job's
// groups, and then every group lies inside one domain.
TEST(DomainPlacement, NoGroupEverLeavesADomain) {
  std::mt19937 rng(20261205);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int feasible_seen = 0, infeasible_seen = 0, straddling_seen = 0, multi_domain_seen = 0,
      shuffled_seen = 0, none_seen = 0;
  for (int iter = 0; iter < 120; ++iter) {
    std::string spec;
    int hosts = 0;
    switch (pick(0, 2)) {
      case 0: {
        const int leaves = pick(2, 6), down = pick(2, 12);
        hosts = leaves * down;
        spec = "fat2:leaves=" + std::to_string(leaves) + ",down=" + std::to_string(down) +
               ",up=" + std::to_string(pick(1, 8));
        break;
      }
      case 1: {
        const int pods = pick(2, 3), leaves = pick(2, 3), down = pick(2, 8);
        hosts = pods * leaves * down;
        spec = "fat3:pods=" + std::to_string(pods) + ",leaves=" + std::to_string(leaves) +
               ",down=" + std::to_string(down) + ",up=2,spines=2,spine_up=2";
        break;
      }
      default: {
        const int sus = pick(2, 4), per = pick(2, 9);
        hosts = sus * per;
        spec = "rail:sus=" + std::to_string(sus) + ",hosts=" + std::to_string(per) +
               ",rails=" + std::to_string(pick(1, 4));
      }
    }
    std::vector<int> divisors;
    for (int d = 1; d <= hosts; ++d)
      if (hosts % d == 0 && d <= 18) divisors.push_back(d);
    const int nvl =
        divisors[static_cast<std::size_t>(pick(0, static_cast<int>(divisors.size()) - 1))];
    // Two cases in three: the spec's consecutive domains; else domains of the same size over
    // hosts drawn at random (cabling that interleaves racks and leaves: a domain's block is
    // then no run of ids).
    const bool shuffled = pick(0, 2) == 0;
    fabric::Fabric f =
        shuffled ? test::gen(spec) : test::gen(spec + ",nvl=" + std::to_string(nvl) + ",gpus=4");
    bool in_none = false;
    if (shuffled) {
      std::vector<std::string> names;
      for (const auto& h : f.hosts()) names.push_back(h.name);
      std::shuffle(names.begin(), names.end(), rng);
      // One case in two, the last rack's hosts report no domain (trays the fabric manager
      // has not registered): each is then a block of its own, for one-host groups only.
      in_none = names.size() > static_cast<std::size_t>(nvl) && pick(0, 1) == 1;
      const std::size_t listed = names.size() - (in_none ? static_cast<std::size_t>(nvl) : 0);
      std::vector<fabric::DomainMember> m;
      for (std::size_t i = 0; i < listed; ++i)
        m.push_back({names[i], "rack" + std::to_string(i / static_cast<std::size_t>(nvl)), 4, 1});
      auto g = fabric::with_domains(f, m, "shuffled");
      ASSERT_TRUE(g) << g.error().to_string();
      f = std::move(*g);
      ++shuffled_seen;
    }
    SCOPED_TRACE("case " + std::to_string(iter) + ": " + spec + (shuffled ? " shuffled" : ""));
    test::expect_valid(f);
    const Planner planner(f);
    const auto& ctx = planner.context();
    for (const auto& d : f.domains()) {
      std::set<fabric::NodeId> leaves;
      for (HostId h : d.hosts) leaves.insert(f.topology().host_leaf[idx(h)]);
      straddling_seen += leaves.size() > 1 && !f.topology().rail_optimised;
    }
    for (int round = 0; round < 4; ++round) {
      placement::NodeStates st = placement::all_free(f);
      const double load = std::uniform_real_distribution<double>(0, 0.8)(rng);
      for (auto& s : st.state)
        s = std::uniform_real_distribution<double>(0, 1)(rng) < load ? HostState::kBusy
                                                                     : HostState::kFree;
      // Groups of g hosts (TP or EP, 4 GPUs a host), g up to the domain size.
      const std::uint32_t g = static_cast<std::uint32_t>(pick(1, nvl));
      const bool use_ep = pick(0, 1) == 1;
      const std::uint32_t groups =
          static_cast<std::uint32_t>(pick(1, std::max(1, hosts / static_cast<int>(g) / 2)));
      const auto j = use_ep ? job(g * groups, 4, 4, 4 * g) : job(g * groups, 4, 4 * g);
      SCOPED_TRACE(std::to_string(j.nodes) + " nodes, groups of " + std::to_string(g) +
                   (use_ep ? " (EP)" : " (TP)"));
      ASSERT_EQ(j.group_nodes(), g);
      std::uint64_t fits = 0;
      for (const auto& d : f.domains()) {
        std::uint32_t free = 0;
        for (HostId h : d.hosts) free += st.free(h) && ctx.healthy[idx(h)];
        fits += free / g;
      }
      // A host in no domain holds a group only when the group is that one host.
      if (g == 1)
        for (std::uint32_t h = 0; h < f.num_hosts(); ++h)
          fits += f.domain_of(HostId{h}) == fabric::kNone && st.free(HostId{h}) && ctx.healthy[h];
      none_seen += in_none && g > 1;
      const auto p = planner.place(j, st, Policy::kFabric);
      ASSERT_EQ(p.feasible, fits >= groups) << p.reason;
      if (!p.feasible) {
        ++infeasible_seen;
        continue;
      }
      ++feasible_seen;
      ASSERT_EQ(p.hosts.size(), j.nodes);
      std::set<std::uint32_t> domains;
      for (std::size_t i = 0; i < p.hosts.size(); i += g) {
        const auto d = f.domain_of(p.hosts[i]);
        if (g == 1) continue;  // a one-host group: any host
        ASSERT_NE(d, fabric::kNone) << "a group of " << g << " hosts on a host in no domain";
        domains.insert(d);
        for (std::size_t k = i; k < i + g; ++k) {
          EXPECT_TRUE(st.free(p.hosts[k]));
          EXPECT_EQ(f.domain_of(p.hosts[k]), d)
              << "group at rank " << i << " leaves " << f.domains()[d].name;
        }
      }
      multi_domain_seen += domains.size() > 1;
      EXPECT_EQ(p.measures.tp_groups_split, 0u);
    }
  }
  EXPECT_GT(feasible_seen, 150);
  EXPECT_GT(infeasible_seen, 10);
  EXPECT_GT(straddling_seen, 10);
  EXPECT_GT(multi_domain_seen, 50);
  EXPECT_GT(shuffled_seen, 20);
  EXPECT_GT(none_seen, 10);
}

// The route-aware ring on a fabric with domains: an edge inside a domain is free, so the ring
// crosses between domains where that loads no switch link (leaf02 holds hosts of both).
TEST(DomainPlacement, RouteAwareRingCrossesDomainsUnderOneLeaf) {
  const auto f = test::gen("fat2:leaves=3,down=4,up=1,nvl=6,gpus=4");
  const Planner planner(f);
  std::vector<HostId> ring;
  for (const char* n : {"node004", "node005", "node006", "node007", "node008", "node009"})
    ring.push_back(*f.find_host(n));
  const auto& model = planner.routes();
  std::vector<routes::Load> plain;
  ASSERT_TRUE(routes::add_ring_load(model, ring, 0, plain));
  EXPECT_EQ(routes::max_switch_link_load(f, plain), routes::kEdge);  // node009 -> node004
  const auto better = placement::route_aware_ring(planner.context().blocks, model, ring, {});
  std::vector<routes::Load> load;
  ASSERT_TRUE(routes::add_ring_load(model, better, 0, load));
  EXPECT_EQ(routes::max_switch_link_load(f, load), 0u) << names(f, better);
}

// Hosts in no domain (nvidia-smi says N/A: trays not registered with the fabric manager):
// each is a block of its own, so a TP group that spans hosts never lands on them, even where
// they are free and under one leaf, while one-host groups may; the reasons and reports name
// domains (exact hosts).
TEST(DomainPlacement, HostsInNoDomainTakeOnlyOneHostGroups) {
  const std::string csv =
      "host,leaf,spine,domain\n"
      "n1,l1,s1,d0\nn2,l1,s1,d0\nn3,l1,s1,d0\nn4,l1,s1,d0\n"
      "n5,l2,s1,\nn6,l2,s1,\nn7,l2,s1,\nn8,l2,s1,\n";
  fabric::FabricBuilder b;
  ASSERT_TRUE(fabric::read_tiers_csv(csv, "t.csv", {}, b));
  auto f = b.build();
  ASSERT_TRUE(f) << f.error().to_string();
  const Planner planner(*f);
  const auto& blocks = planner.context().blocks;
  EXPECT_EQ(blocks.name, (std::vector<std::string>{"d0", "n5", "n6", "n7", "n8"}));
  const auto st = busy(*f, "n[1-3]");
  // TP 8 on 4-GPU hosts: a group of 2 hosts, which only d0 could hold (1 free).
  auto p = planner.place(job(2, 4, 8), st, Policy::kFabric);
  EXPECT_FALSE(p.feasible) << names(*f, p.hosts);
  EXPECT_EQ(p.reason,
            "TP group needs 2 hosts under one NVLink domain; no NVLink domain has 2 usable hosts; "
            "best NVLink domain d0 has 1");
  // TP 4: one host a group; 3 hosts: d0's last free host, then hosts in none.
  p = planner.place(job(3, 4, 4), st, Policy::kFabric);
  ASSERT_TRUE(p.feasible) << p.reason;
  EXPECT_EQ(names(*f, p.hosts), "n[4-6]");
  EXPECT_EQ(p.measures.tp_groups_split, 0u);
  // slurm-tree and first-fit put the 2-host group on n5 and n6 (one leaf, two nodes of
  // their own NVLink): counted as split.
  for (auto pol : {Policy::kSlurmTree, Policy::kFirstFit}) {
    const auto q = planner.place(job(2, 4, 8), busy(*f, "n[1-4]"), pol);
    ASSERT_TRUE(q.feasible) << to_string(pol) << ": " << q.reason;
    EXPECT_EQ(names(*f, q.hosts), "n[5-6]") << to_string(pol);
    EXPECT_EQ(q.measures.tp_groups_split, 1u) << to_string(pol);
  }
}

// Racks cabled across two leaves so that a domain's hosts interleave the ids of another's
// (d1 = n3, n7 under l1 and n2, n6 under l2: its block, leaf by leaf, is n3 n7 n2 n6, whose
// first and last ids span 4 hosts though they are no run): every host of it counts.
TEST(DomainPlacement, InterleavedCablingPlacesWholeDomains) {
  const std::string csv =
      "host,leaf,spine,domain\n"
      "n1,l1,s1,d0\nn2,l2,s1,d1\nn3,l1,s1,d1\nn4,l1,s1,d0\n"
      "n5,l2,s1,d0\nn6,l2,s1,d1\nn7,l1,s1,d1\nn8,l2,s1,d0\n";
  fabric::FabricBuilder b;
  ASSERT_TRUE(fabric::read_tiers_csv(csv, "t.csv", {}, b));
  auto f = b.build();
  ASSERT_TRUE(f) << f.error().to_string();
  const Planner planner(*f);
  EXPECT_EQ(planner.context().block_run, (std::vector<std::uint8_t>{0, 0}));
  auto st = busy(*f, "n1");
  for (auto pol : {Policy::kFabric, Policy::kSlurmBlock}) {
    const auto p = planner.place(job(4, 4, 16), st, pol);
    ASSERT_TRUE(p.feasible) << to_string(pol) << ": " << p.reason;
    EXPECT_EQ(names(*f, p.hosts), "n[2-3,6-7]") << to_string(pol);
  }
  // With d1's n6 busy, no domain holds 4 free hosts.
  st = busy(*f, "n[1,6]");
  const auto p = planner.place(job(4, 4, 16), st, Policy::kFabric);
  EXPECT_FALSE(p.feasible) << names(*f, p.hosts);
}

}  // namespace fabricplace::policies
