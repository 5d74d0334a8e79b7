// SPDX-License-Identifier: GPL-2.0-or-later
#include "fabricplace/placement/route_order.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <utility>

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
  /// Adds an edge's load; returns how many links it touched first (the last ones of
  /// touched()).
  std::size_t add(std::span<const LinkLoad> edge) {
    std::size_t fresh = 0;
    for (const auto& [d, l] : edge) {
      if (count_[d] == 0) touched_.push_back(d), ++fresh;
      count_[d] += l;
    }
    return fresh;
  }
  /// Undoes the last add(edge), which returned `fresh`.
  void remove(std::span<const LinkLoad> edge, std::size_t fresh) {
    for (const auto& [d, l] : edge) count_[d] -= l;
    touched_.resize(touched_.size() - fresh);
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

/// Edge loads between host pairs over the links that count (`weight` not 0: the links
/// between switches; one entry per link), computed once per ring however many orders are
/// tried: the paths in one pool, found through an open-addressing table. Sources of one
/// switch_path_class() share their paths (a ring over 30 leaves of 16 hosts asks for some
/// 15,000 pairs, which ftree routes in some 1,000).
class PathCache {
 public:
  static constexpr std::uint32_t kNoRoute = std::numeric_limits<std::uint32_t>::max();
  PathCache(const routes::Model& r, std::uint64_t salt, std::span<const double> weight)
      : routes_(r), salt_(salt), weight_(weight), slots_(256) {}

  /// The edge x -> y's path (see path()); kNoRoute when the model has no route.
  std::uint32_t get(HostId x, HostId y) {
    // x's class stands for x unless it is y itself (an edge to itself is no path).
    if (const auto c = routes_.switch_path_class(x); c != y) x = c;
    const auto key = (std::uint64_t{fabric::idx(x)} << 32) | fabric::idx(y);
    if (2 * (used_ + 1) > slots_.size()) grow();
    auto& slot = slots_[find(key)];
    if (slot.filled) return slot.path;
    const auto start = pool_.size();
    slot = {key, kNoRoute, true};
    ++used_;
    if (!routes_.edge_load(x, y, salt_, pool_)) {
      pool_.resize(start);
      return kNoRoute;
    }
    // The links that count, one entry per link: filter, sort and merge.
    pool_.erase(std::remove_if(pool_.begin() + static_cast<std::ptrdiff_t>(start), pool_.end(),
                               [&](const LinkLoad& l) { return weight_[l.link] == 0; }),
                pool_.end());
    const auto first = pool_.begin() + static_cast<std::ptrdiff_t>(start);
    std::sort(first, pool_.end(),
              [](const LinkLoad& a, const LinkLoad& b) { return a.link < b.link; });
    std::size_t w = start;
    for (std::size_t i = start; i < pool_.size(); ++i) {
      if (w > start && pool_[w - 1].link == pool_[i].link)
        pool_[w - 1].load += pool_[i].load;
      else
        pool_[w++] = pool_[i];
    }
    pool_.resize(w);
    slot.path = static_cast<std::uint32_t>(paths_.size());
    paths_.emplace_back(start, w - start);
    return slot.path;
  }
  [[nodiscard]] const routes::Model& routes() const { return routes_; }
  /// A path get() returned (valid until the next get()).
  [[nodiscard]] std::span<const LinkLoad> path(std::uint32_t p) const {
    return {pool_.data() + paths_[p].first, paths_[p].second};
  }

 private:
  struct Slot {
    std::uint64_t key = 0;
    std::uint32_t path = kNoRoute;
    bool filled = false;
  };
  std::size_t find(std::uint64_t key) const {
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = (key * 0x9e3779b97f4a7c15ull) >> 20 & mask;; i = (i + 1) & mask)
      if (!slots_[i].filled || slots_[i].key == key) return i;
  }
  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    for (const auto& s : old)
      if (s.filled) slots_[find(s.key)] = s;
  }
  const routes::Model& routes_;
  std::uint64_t salt_;
  std::span<const double> weight_;
  std::vector<Slot> slots_;  // a power of two, at most half full
  std::size_t used_ = 0;
  std::vector<LinkLoad> pool_;
  std::vector<std::pair<std::size_t, std::size_t>> paths_;  // (start in pool_, links)
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

/// The greedy boundary choice over the stretches in one order: which host of each stretch
/// opens it (entry) and which closes it (exit), one boundary at a time in ring order, the
/// first stretch's opening host fixed before and its closing edge chosen last.
class Stretches {
 public:
  Stretches(const std::vector<std::vector<HostId>>& seg, PathCache& paths, Overlay& added,
            std::span<const double> inv_cap, std::span<const Load> flows)
      : seg_(seg),
        paths_(paths),
        added_(added),
        inv_cap_(inv_cap),
        flows_(flows),
        entry_(seg.size(), kUnset),
        exit_(seg.size(), kUnset) {}

  /// The ring with `first_entry` opening the first stretch; nothing when a pair has no route.
  std::optional<std::pair<std::vector<HostId>, Cost>> order(std::size_t first_entry) {
    if (!open(first_entry, nullptr)) return std::nullopt;
    return close(first_entry);
  }

  /// Every opening host `e` < n of the first stretch: the same rings order(e) gives, in
  /// order of e, each passed to `take` (nothing when a pair has no route). The boundaries
  /// after the first stretch do not depend on e unless the first boundary's choice does:
  /// that choice skips exits equal to e, and skipping a pair that never led the running
  /// minimum leaves the minimum as it was. So the boundaries are chosen once with no opening
  /// host fixed; only the first stretch's hosts that led that minimum at some point are
  /// chosen again as order(e); every other e changes only the closing edge.
  template <class Take>
  void every_opening(std::size_t n, Take&& take) {
    std::vector<std::size_t> leaders;
    if (seg_.front().size() == 1 || !open(kUnset, &leaders)) {
      for (std::size_t e = 0; e < n; ++e) take(order(e));
      return;
    }
    bool shared = true;  // the state is open(kUnset)'s
    for (std::size_t e = 0; e < n; ++e) {
      if (std::find(leaders.begin(), leaders.end(), e) != leaders.end()) {
        take(order(e));
        shared = false;
        continue;
      }
      if (!shared) shared = open(kUnset, nullptr);  // the same boundaries as before
      if (shared) take(close(e));
    }
  }

 private:
  static constexpr std::size_t kUnset = static_cast<std::size_t>(-1);

  // Loads in ring edges (kEdge = 1): the most loaded link of x -> y's path with the edge
  // added, then the load summed over the path.
  bool cost_of(HostId x, HostId y, Cost& c, std::uint32_t& path) {
    path = paths_.get(x, y);
    if (path == PathCache::kNoRoute) return false;
    c = {};
    for (const auto& [d, own] : paths_.path(path)) {
      const double load = routes::edges((d < flows_.size() ? flows_[d] : 0) + added_.get(d));
      c.worst = std::max(c.worst, (load + routes::edges(own)) * inv_cap_[d]);
      c.total += load * inv_cap_[d];
    }
    return true;
  }

  // Picks the best (exit of a, entry of b) pair; a fixed end has a single candidate. Exits
  // are tried from the stretch's last host back, entries from its first: on ties the input
  // order stands. `leaders`: the exits that led the running minimum, in turn.
  bool choose(std::size_t a, std::size_t bb, std::vector<std::size_t>* leaders,
              std::uint32_t& best_path) {
    Cost best;
    std::size_t bx = kUnset, by = kUnset;
    std::uint32_t path = PathCache::kNoRoute;
    best_path = PathCache::kNoRoute;
    // Exits of one switch_path_class() have the same costs: the first tried stands for the
    // others (they would only tie with it).
    classes_.clear();
    for (std::size_t xr = seg_[a].size(); xr-- > 0;) {
      const std::size_t x = xr;
      if (seg_[a].size() > 1 && x == entry_[a]) continue;
      const auto cls = paths_.routes().switch_path_class(seg_[a][x]);
      if (std::find(classes_.begin(), classes_.end(), cls) != classes_.end()) continue;
      classes_.push_back(cls);
      for (std::size_t y = 0; y < seg_[bb].size(); ++y) {
        if (entry_[bb] != kUnset && y != entry_[bb]) continue;
        if (entry_[bb] == kUnset && seg_[bb].size() > 1 && y == exit_[bb]) continue;
        Cost c;
        if (!cost_of(seg_[a][x], seg_[bb][y], c, path)) continue;
        if (bx == kUnset || c < best) {
          best = c;
          bx = x;
          by = y;
          best_path = path;
          if (leaders && (leaders->empty() || leaders->back() != x)) leaders->push_back(x);
        }
      }
    }
    if (bx == kUnset) return false;  // no route known: keep the input order
    exit_[a] = bx;
    entry_[bb] = by;
    return true;
  }

  // Every boundary but the closing one, with `first_entry` opening the first stretch.
  bool open(std::size_t first_entry, std::vector<std::size_t>* leaders) {
    added_.reset();
    std::fill(entry_.begin(), entry_.end(), kUnset);
    std::fill(exit_.begin(), exit_.end(), kUnset);
    entry_[0] = first_entry;
    for (std::size_t k = 0; k + 1 < seg_.size(); ++k) {
      std::uint32_t path = PathCache::kNoRoute;
      if (!choose(k, k + 1, k == 0 ? leaders : nullptr, path)) return false;
      added_.add(paths_.path(path));
    }
    return true;
  }

  // The closing boundary with `first_entry` opening the first stretch, the ring and its
  // cost; the overlay is left as open() made it.
  std::optional<std::pair<std::vector<HostId>, Cost>> close(std::size_t first_entry) {
    const std::size_t L = seg_.size();
    const auto first = entry_[0], last_exit = exit_[L - 1];
    entry_[0] = first_entry;
    std::uint32_t path = PathCache::kNoRoute;
    if (!choose(L - 1, 0, nullptr, path)) return std::nullopt;
    const auto fresh = added_.add(paths_.path(path));
    auto cost = ring_cost(added_, inv_cap_, flows_);
    added_.remove(paths_.path(path), fresh);
    std::vector<HostId> out;
    out.reserve(std::accumulate(seg_.begin(), seg_.end(), std::size_t{0},
                                [](std::size_t n, const auto& s) { return n + s.size(); }));
    for (std::size_t k = 0; k < L; ++k) {
      const auto& s = seg_[k];
      if (s.size() == 1) {
        out.push_back(s[0]);
        continue;
      }
      out.push_back(s[entry_[k]]);
      for (std::size_t i = 0; i < s.size(); ++i)
        if (i != entry_[k] && i != exit_[k]) out.push_back(s[i]);
      out.push_back(s[exit_[k]]);
    }
    entry_[0] = first;
    exit_[L - 1] = last_exit;
    return std::make_pair(std::move(out), cost);
  }

  const std::vector<std::vector<HostId>>& seg_;
  PathCache& paths_;
  Overlay& added_;
  std::span<const double> inv_cap_;
  std::span<const Load> flows_;
  std::vector<std::size_t> entry_, exit_;  // indices into seg_[k]
  std::vector<HostId> classes_;            // choose(): the exits' classes tried
};

/// TP groups (consecutive `gn` hosts) whose hosts span blocks.
std::uint32_t splits(const Blocks& b, const std::vector<HostId>& ring, std::uint32_t gn) {
  return measure_ring(b, ring, gn).tp_groups_split;
}

constexpr std::size_t kOpeningCandidates = 32;

}  // namespace

std::vector<HostId> route_aware_ring(const Blocks& b, const routes::Model& routes,
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
  // Links of weight 0 add nothing to a cost: the cache keeps the others only.
  PathCache paths(routes, salt, inv_cap);
  // The input order is a candidate too, and wins ties: the boundaries are chosen greedily,
  // one at a time, and under a multipath model (ecmp's flows, adaptive's split) edges that
  // each look best alone can still meet, so a greedy ring may be worse than the one given.
  {
    added.reset();
    bool routed = true;
    for (std::size_t k = 0; k < L && routed; ++k) {
      const auto edge = paths.get(seg[k].back(), seg[(k + 1) % L].front());
      if (edge == PathCache::kNoRoute)
        routed = false;
      else
        added.add(paths.path(edge));
    }
    if (routed) best.emplace(ring, ring_cost(added, inv_cap, flows));
  }
  for (const auto* order : {&seg, &rev}) {
    // At most kOpeningCandidates opening hosts (a leaf rarely has more useful uplinks).
    const std::size_t n = std::min(order->front().size(), kOpeningCandidates);
    Stretches(*order, paths, added, inv_cap, flows).every_opening(n, [&](auto cand) {
      if (!cand) return;
      if (order == &rev && splits(b, cand->first, group_nodes) > plain_splits) return;
      if (!best || cand->second < best->second) best = std::move(cand);
    });
  }
  if (!best) return ring;
  return std::move(best->first);
}

}  // namespace fabricplace::placement
