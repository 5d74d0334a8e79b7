// SPDX-License-Identifier: GPL-2.0-or-later
// placement::route_aware_ring against a reference that does what its contract says the
// plain way (docs/rankfiles.md, step 4): for every opening host of the first leaf, in both
// directions, a full greedy pass over every (exit, entry) pair of every boundary, each pair
// routed on its own. The library shares work between opening hosts and between the hosts of
// one source class (routes::Model::switch_path_class); the rings must be the same, on random
// leaf-contiguous rings (seeded) over random running jobs, under ftree, ecmp and minhop on
// a 4-rail fabric.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <random>
#include <unordered_map>
#include <utility>

#include "fabricplace/fabric/spec.hpp"
#include "fabricplace/placement/route_order.hpp"
#include "fabricplace/placement/traffic.hpp"
#include "fabricplace/routes/model.hpp"

namespace fabricplace::placement {
namespace {

using fabric::HostId;
using routes::DirLink;
using routes::LinkLoad;
using routes::Load;

/// The load a ring under construction adds, per directed link; reset() clears only what
/// was touched, so one overlay serves every order tried.
class Overlay {
 public:
  explicit Overlay(std::size_t dir_links) : count_(dir_links, 0) {}
  [[nodiscard]] Load get(DirLink d) const { return count_[d]; }
  void add(std::span<const LinkLoad> edge) {
    for (const auto& [d, l] : edge) {
      if (count_[d] == 0) touched_.push_back(d);
      count_[d] += l;
    }
  }
  void reset() {
    for (DirLink d : touched_) count_[d] = 0;
    touched_.clear();
  }
  [[nodiscard]] const std::vector<DirLink>& touched() const { return touched_; }

 private:
  std::vector<Load> count_;
  std::vector<DirLink> touched_;
};

struct Cost {
  double worst = 0;
  double total = 0;
  /// Lower worst, then lower total; differences below a relative 1e-9 are ties (the same
  /// loads summed in another order differ in their last bits).
  bool operator<(const Cost& o) const {
    if (less(worst, o.worst)) return true;
    if (less(o.worst, worst)) return false;
    return less(total, o.total);
  }
  static bool less(double a, double b) { return a < b - 1e-9 * std::max(std::abs(a), std::abs(b)); }
};

/// Edge loads between host pairs (one entry per link), computed once per ring however many
/// orders are tried.
class PathCache {
 public:
  PathCache(const routes::Model& r, std::uint64_t salt) : routes_(r), salt_(salt) {}
  /// The load of edge x -> y; nullptr when the model has no route.
  const std::vector<LinkLoad>* get(HostId x, HostId y) {
    const auto key = (std::uint64_t{fabric::idx(x)} << 32) | fabric::idx(y);
    auto [it, fresh] = cache_.try_emplace(key);
    if (fresh) {
      auto& e = it->second;
      e.ok = routes_.edge_load(x, y, salt_, e.path);
      // One entry per link: sort and merge.
      std::sort(e.path.begin(), e.path.end(),
                [](const LinkLoad& a, const LinkLoad& b) { return a.link < b.link; });
      std::size_t w = 0;
      for (std::size_t i = 0; i < e.path.size(); ++i) {
        if (w > 0 && e.path[w - 1].link == e.path[i].link)
          e.path[w - 1].load += e.path[i].load;
        else
          e.path[w++] = e.path[i];
      }
      e.path.resize(w);
    }
    return it->second.ok ? &it->second.path : nullptr;
  }

 private:
  struct Entry {
    bool ok = false;
    std::vector<LinkLoad> path;
  };
  const routes::Model& routes_;
  std::uint64_t salt_;
  std::unordered_map<std::uint64_t, Entry> cache_;
};

/// A ring's own cost: its most loaded link (relative to capacity) with the edges in `added`
/// over `flows`, then the load over those links.
Cost ring_cost(const Overlay& added, std::span<const double> inv_cap, std::span<const Load> flows) {
  Cost c;
  for (DirLink d : added.touched()) {
    const double load = routes::edges((d < flows.size() ? flows[d] : 0) + added.get(d));
    c.worst = std::max(c.worst, load * inv_cap[d]);
    c.total += load * inv_cap[d];
  }
  return c;
}

/// The greedy boundary choice over stretches in this order; nothing when a pair has no route.
std::optional<std::pair<std::vector<HostId>, Cost>> order_stretches(
    const std::vector<std::vector<HostId>>& seg, PathCache& paths, Overlay& added,
    std::span<const double> inv_cap, std::span<const Load> flows, std::size_t first_entry) {
  const std::size_t L = seg.size();
  added.reset();
  const std::vector<LinkLoad>* path = nullptr;
  // Loads in ring edges (kEdge = 1).
  auto cost_of = [&](HostId x, HostId y, Cost& c) {
    path = paths.get(x, y);
    if (path == nullptr) return false;
    c = {};
    for (const auto& [d, own] : *path) {
      const double load = routes::edges((d < flows.size() ? flows[d] : 0) + added.get(d));
      c.worst = std::max(c.worst, (load + routes::edges(own)) * inv_cap[d]);
      c.total += load * inv_cap[d];
    }
    return true;
  };
  constexpr std::size_t kUnset = static_cast<std::size_t>(-1);
  std::vector<std::size_t> entry(L, kUnset), exit(L, kUnset);  // indices into seg[k]
  entry[0] = first_entry;
  // Picks the best (exit of a, entry of b) pair; a fixed end has a single candidate.
  auto choose = [&](std::size_t a, std::size_t bb) {
    Cost best;
    std::size_t bx = kUnset, by = kUnset;
    const std::vector<LinkLoad>* best_path = nullptr;
    // Exits are tried from the stretch's last host back, entries from its first: on ties the
    // input order stands.
    for (std::size_t xr = seg[a].size(); xr-- > 0;) {
      const std::size_t x = xr;
      if (seg[a].size() > 1 && x == entry[a]) continue;
      for (std::size_t y = 0; y < seg[bb].size(); ++y) {
        if (entry[bb] != kUnset && y != entry[bb]) continue;
        if (entry[bb] == kUnset && seg[bb].size() > 1 && y == exit[bb]) continue;
        Cost c;
        if (!cost_of(seg[a][x], seg[bb][y], c)) continue;
        if (bx == kUnset || c < best) {
          best = c;
          bx = x;
          by = y;
          best_path = path;
        }
      }
    }
    if (bx == kUnset) return false;  // no route known: keep the input order
    exit[a] = bx;
    entry[bb] = by;
    added.add(*best_path);
    return true;
  };
  for (std::size_t k = 0; k + 1 < L; ++k) {
    if (!choose(k, k + 1)) return std::nullopt;
  }
  if (!choose(L - 1, 0)) return std::nullopt;

  std::vector<HostId> out;
  out.reserve(std::accumulate(seg.begin(), seg.end(), std::size_t{0},
                              [](std::size_t n, const auto& s) { return n + s.size(); }));
  for (std::size_t k = 0; k < L; ++k) {
    const auto& s = seg[k];
    if (s.size() == 1) {
      out.push_back(s[0]);
      continue;
    }
    out.push_back(s[entry[k]]);
    for (std::size_t i = 0; i < s.size(); ++i)
      if (i != entry[k] && i != exit[k]) out.push_back(s[i]);
    out.push_back(s[exit[k]]);
  }
  return std::make_pair(std::move(out), ring_cost(added, inv_cap, flows));
}

/// TP groups (consecutive `gn` hosts) whose hosts span blocks.
std::uint32_t splits(const Blocks& b, const std::vector<HostId>& ring, std::uint32_t gn) {
  return measure_ring(b, ring, gn).tp_groups_split;
}

constexpr std::size_t kOpeningCandidates = 32;

std::vector<HostId> reference_ring(const Blocks& b, const routes::Model& routes,
                                     std::vector<HostId> ring, std::span<const Load> flows,
                                     std::uint32_t group_nodes, std::uint64_t salt) {
  // Stretches: maximal runs of one block.
  std::vector<std::vector<HostId>> seg;
  for (std::size_t i = 0; i < ring.size(); ++i) {
    if (i == 0 || b.of_host[fabric::idx(ring[i])] != b.of_host[fabric::idx(ring[i - 1])]) {
      seg.emplace_back();
    }
    seg.back().push_back(ring[i]);
  }
  // A ring whose last stretch is the first one's block continues it (wrap-around).
  if (seg.size() > 1 &&
      b.of_host[fabric::idx(seg.front().front())] == b.of_host[fabric::idx(seg.back().front())]) {
    return ring;  // not leaf-contiguous: leave such a ring as it is
  }
  const std::size_t L = seg.size();
  if (L < 2) return ring;

  // The first stretch's opening host decides the closing edge's route: each is tried, with
  // the leaves in order and in the opposite direction (every inter-leaf edge then runs the
  // other way, over other links). The best ring wins; ties keep the earlier candidate, so an
  // idle fabric keeps the input order. The opposite direction must split no more TP groups;
  // it cannot, since groups tile the ring and a mirrored tiling is the same tiling, but the
  // check is cheap and keeps the contract if stretches ever move.
  std::optional<std::pair<std::vector<HostId>, Cost>> best;
  std::vector<std::vector<HostId>> rev(seg.rbegin(), seg.rend());
  const auto plain_splits = splits(b, ring, group_nodes);
  PathCache paths(routes, salt);
  Overlay added(2 * routes.fabric().num_links());
  // 1 / capacity per directed switch-to-switch link; a link of unknown rate counts at the
  // fastest known rate (all alike when no rate is known, as from a topology.conf). Host links
  // count 0: every host sends one ring edge and receives one whatever the order, so they
  // cannot tell orders apart (and would hide a switch link loaded as much).
  const auto& fab = routes.fabric();
  const auto gbps = routes::link_gbps(fab);
  std::vector<double> inv_cap(2 * fab.num_links());
  for (std::size_t d = 0; d < inv_cap.size(); ++d) {
    if (routes::switch_to_switch(fab, static_cast<routes::DirLink>(d)))
      inv_cap[d] = 1 / gbps[d / 2];
  }
  // The input order is a candidate too, and wins ties: the boundaries are chosen greedily,
  // one at a time, and under a multipath model (ecmp's flows, adaptive's split) edges that
  // each look best alone can still meet, so a greedy ring may be worse than the one given.
  {
    added.reset();
    bool routed = true;
    for (std::size_t k = 0; k < L && routed; ++k) {
      const auto* edge = paths.get(seg[k].back(), seg[(k + 1) % L].front());
      if (edge == nullptr)
        routed = false;
      else
        added.add(*edge);
    }
    if (routed) best.emplace(ring, ring_cost(added, inv_cap, flows));
  }
  for (const auto* order : {&seg, &rev}) {
    // At most kOpeningCandidates opening hosts (a leaf rarely has more useful uplinks).
    const std::size_t n = std::min(order->front().size(), kOpeningCandidates);
    for (std::size_t e = 0; e < n; ++e) {
      auto cand = order_stretches(*order, paths, added, inv_cap, flows, e);
      if (!cand) continue;
      if (order == &rev && splits(b, cand->first, group_nodes) > plain_splits) continue;
      if (!best || cand->second < best->second) best = std::move(cand);
    }
  }
  if (!best) return ring;
  return std::move(best->first);
}


struct Case {
  const char* spec;
  routes::Kind kind;
};

TEST(RouteAwareRing, MatchesTheReferenceOnRandomRings) {
  for (const Case& c : {Case{"fat3:pods=4,leaves=6,down=8,up=4,spines=4,radix=16", routes::Kind::kFtree},
                        Case{"fat2:leaves=8,down=12,up=4,spines=4", routes::Kind::kEcmp},
                        Case{"rail:sus=3,hosts=6,rails=4", routes::Kind::kMinhop}}) {
    const auto f = *fabric::generate(c.spec);
    routes::Spec rs;
    rs.automatic = false;
    rs.kind = c.kind;
    const auto m = std::move(*routes::make_model(f, rs));
    const auto ctx = prepare(f);
    const auto& b = ctx.blocks;
    std::mt19937 rng(11);
    std::size_t changed = 0;
    for (int it = 0; it < 400; ++it) {
      Traffic t(*m, ctx.capacity, &ctx.groups);
      const int jobs = static_cast<int>(rng() % 12);
      for (int j = 0; j < jobs; ++j) {
        std::vector<HostId> r;
        const int n = 2 + static_cast<int>(rng() % 10);
        for (int i = 0; i < n; ++i) r.push_back(HostId{static_cast<std::uint32_t>(rng() % f.num_hosts())});
        std::sort(r.begin(), r.end());
        r.erase(std::unique(r.begin(), r.end()), r.end());
        if (r.size() > 1) t.add(r, 100 + static_cast<std::uint64_t>(j));
      }
      // L random blocks, each a random non-empty subset of its hosts in random order.
      std::vector<std::uint32_t> ks(b.size());
      std::iota(ks.begin(), ks.end(), 0u);
      std::shuffle(ks.begin(), ks.end(), rng);
      const auto L = 2 + rng() % std::min<std::size_t>(8, ks.size() - 1);
      std::vector<HostId> ring;
      for (std::size_t i = 0; i < L; ++i) {
        auto hs = b.hosts[ks[i]];
        std::shuffle(hs.begin(), hs.end(), rng);
        hs.resize(1 + rng() % hs.size());
        ring.insert(ring.end(), hs.begin(), hs.end());
      }
      const std::uint32_t g = rng() % 3 == 0 ? 2 : 1;
      const std::uint64_t salt = rng();
      const auto got = route_aware_ring(b, *m, ring, t.load(), g, salt);
      const auto want = reference_ring(b, *m, ring, t.load(), g, salt);
      ASSERT_EQ(got, want) << c.spec << " " << routes::to_string(c.kind) << ", case " << it;
      changed += want != ring;
    }
    // The cases exercise the search: most rings are re-ordered.
    EXPECT_GT(changed, 200u) << c.spec;
  }
}

}  // namespace
}  // namespace fabricplace::placement
