// SPDX-License-Identifier: GPL-2.0-or-later
// detail::fill (policies/src/fill.hpp) against a reference that does each greedy step and
// each swap the plain way: a scan over every position for the cheapest untaken block, and a
// scan over every block, taken or not, for the best swap (the fill of stop 26, kept here on
// purpose). The library takes large fills' steps from per-pod lists and swaps over the
// untaken blocks only; the sets must be the same, with the lists forced on small inputs too,
// on random scopes (seeded): few and many pods, equal costs, -0.0, infinite costs, and sums
// that round to the same double.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "../../policies/src/fill.hpp"

namespace fabricplace::policies::detail {
namespace {

constexpr std::uint32_t kAbsent = 0xffffffffu;  // Ranking::at of a block not ranked

Set reference_fill(const std::vector<std::uint32_t>& order, const std::vector<std::uint32_t>& cap,
         const std::vector<double>& cost, const Ranking& ranked,
         const std::vector<std::uint32_t>& pod, const std::vector<double>& pod_cost,
         std::uint32_t L, std::uint32_t G) {
  // Scratch kept between calls (a decision fills some 20 times).
  std::vector<std::size_t> cheap, pos;
  std::vector<char> taken;
  std::vector<std::uint32_t> in_pod;
  // Positions in `order`, cheapest first (ties: the earlier position): a small scope sorts
  // its own positions by rank, a large one filters the ranking.
  cheap.clear();
  if (order.size() * 8 < ranked.blocks.size()) {
    for (std::size_t j = 0; j < order.size(); ++j) cheap.push_back(j);
    std::sort(cheap.begin(), cheap.end(),
              [&](auto x, auto y) { return ranked.at[order[x]] < ranked.at[order[y]]; });
  } else {
    std::vector<std::int64_t> at;  // block -> its position in `order`, or -1
    at.assign(cap.size(), -1);
    for (std::size_t j = 0; j < order.size(); ++j) at[order[j]] = static_cast<std::int64_t>(j);
    for (auto k : ranked.blocks)
      if (at[k] >= 0) cheap.push_back(static_cast<std::size_t>(at[k]));
  }
  taken.assign(order.size(), 0);
  std::uint32_t pods = 0;
  for (auto k : order) pods = std::max(pods, pod[k] + 1);
  in_pod.assign(pods, 0);  // chosen blocks per pod
  auto price = [&](std::uint32_t k) { return cost[k] + (in_pod[pod[k]] ? 0.0 : pod_cost[pod[k]]); };
  // Each step takes the cheapest candidate by (price, position).
  const std::size_t n = order.size();
  constexpr std::size_t kNoBlock = std::numeric_limits<std::size_t>::max();
  auto cheapest = [&](std::size_t end) {  // over the untaken positions in [0, end)
    std::int64_t best = -1;
    double best_price = 0;
    for (std::size_t j = 0; j < end; ++j) {
      if (taken[j]) continue;
      const double pr = price(order[j]);
      if (best < 0 || pr < best_price) best = static_cast<std::int64_t>(j), best_price = pr;
    }
    return best < 0 ? kNoBlock : static_cast<std::size_t>(best);
  };
  std::uint32_t need = G;
  Set out;
  pos.clear();  // positions in `order` of the chosen blocks
  // Sum of the r - 1 largest untaken capacities (the first r - 1 untaken positions, the last
  // of them at `last`, -1 when none) and the r-th (at `rth_at`): found by a scan for the first
  // step, then kept as blocks are taken.
  std::uint64_t top = 0;
  std::int64_t last = -1;
  std::size_t rth_at = 0;
  {
    std::uint32_t seen = 0;
    for (std::size_t j = 0; j < n && seen < L; ++j, ++seen) {
      if (seen + 1 < L) {
        top += cap[order[j]];
        last = static_cast<std::int64_t>(j);
      } else {
        rth_at = j;
      }
    }
    if (seen < L) return {};
  }
  auto untaken_before = [&](std::int64_t i) {
    for (--i; i >= 0 && taken[static_cast<std::size_t>(i)]; --i) {
    }
    return i;
  };
  for (std::uint32_t step = 0; step < L; ++step) {
    const std::uint32_t r = L - step;  // blocks still to choose, this one included
    const std::uint64_t rth = cap[order[rth_at]];
    if (top + rth < need) return {};
    // The candidates: the untaken blocks among the top r - 1, and the others that complete
    // the set with them. `order` being by capacity descending, they are the untaken blocks
    // before the first position too small to (every block of the top r - 1, and the r-th,
    // is large enough).
    const std::uint64_t least = need > top ? need - top : 0;
    const auto end = static_cast<std::size_t>(
        std::partition_point(order.begin(), order.end(),
                             [&](std::uint32_t k) { return cap[k] >= least; }) -
        order.begin());
    const auto j = cheapest(end);
    if (j == kNoBlock) return {};  // only when `order` is not by capacity (never here)
    taken[j] = 1;
    pos.push_back(j);
    if (r >= 2) {
      // The first r - 2 untaken: the first r - 1 without j if it was one of them, else
      // without their last, which becomes the (r - 1)-th.
      const auto at_last = static_cast<std::size_t>(last);
      if (j <= at_last) {
        top -= cap[order[j]];
        if (j == at_last) last = untaken_before(last);
      } else {
        top -= cap[order[at_last]];
        rth_at = at_last;
        last = untaken_before(last);
      }
    }
    ++in_pod[pod[order[j]]];
    need -= std::min(need, cap[order[j]]);
  }
  // Swaps: each chosen block, costliest first, for the unchosen one that lowers the set's
  // cost most (pods included) while the set still covers the job; a few passes.
  std::uint64_t total = 0;
  for (auto j : pos) total += cap[order[j]];
  for (int pass = 0; pass < 4; ++pass) {
    bool improved = false;
    std::stable_sort(pos.begin(), pos.end(),
                     [&](auto x, auto y) { return cost[order[x]] > cost[order[y]]; });
    for (auto& x : pos) {
      const std::uint64_t slack = total - G;
      const auto kx = order[x];
      // Removing x frees its pod when it is the pod's only chosen block.
      const double freed = in_pod[pod[kx]] == 1 ? pod_cost[pod[kx]] : 0.0;
      const double old_cost = cost[kx] + freed;
      std::int64_t best = -1;
      double best_cost = old_cost;
      for (auto j : cheap) {
        const auto kj = order[j];
        // By cost: past the best found, no block can beat it (its price is at least its cost).
        if (cost[kj] >= best_cost) break;
        if (taken[j] || cap[kj] + slack < cap[kx]) continue;
        const bool opens = pod[kj] != pod[kx] ? in_pod[pod[kj]] == 0 : in_pod[pod[kx]] == 1;
        const double c = cost[kj] + (opens ? pod_cost[pod[kj]] : 0.0);
        if (c < best_cost) best = static_cast<std::int64_t>(j), best_cost = c;
      }
      if (best < 0) continue;
      const auto j = static_cast<std::size_t>(best);
      --in_pod[pod[kx]];
      ++in_pod[pod[order[j]]];
      taken[x] = 0;
      taken[j] = 1;
      total = total - cap[kx] + cap[order[j]];
      x = j;
      improved = true;
    }
    if (!improved) break;
  }
  for (auto j : pos) out.push_back(order[j]);
  std::sort(out.begin(), out.end());
  return out;
}

TEST(Fill, MatchesTheReferenceOnRandomScopes) {
  std::mt19937_64 rng(27);
  int filled = 0;
  for (int it = 0; it < 4000; ++it) {
    const std::size_t nb = 2 + rng() % 600;
    const std::uint32_t pods = 1 + static_cast<std::uint32_t>(rng() % (it % 7 == 0 ? 400 : 20));
    std::vector<std::uint32_t> cap(nb), pod(nb);
    std::vector<double> cost(nb), pod_cost(pods);
    const int mode = it % 6;
    for (std::size_t k = 0; k < nb; ++k) {
      cap[k] = static_cast<std::uint32_t>(rng() % 6);
      pod[k] = static_cast<std::uint32_t>(rng() % pods);
      switch (mode) {
        case 0: cost[k] = static_cast<double>(rng() % 5); break;  // many ties
        case 1: cost[k] = static_cast<double>(rng() % 1000) / 7.0; break;
        case 2: cost[k] = 1e16 + static_cast<double>(rng() % 8); break;  // sums round together
        case 3: cost[k] = rng() % 3 == 0 ? -0.0 : (rng() % 2 ? 0.0 : 1.0); break;
        case 4:
          cost[k] = rng() % 10 == 0 ? std::numeric_limits<double>::infinity()
                                    : static_cast<double>(rng() % 50);
          break;
        default: cost[k] = -static_cast<double>(rng() % 100) / 3.0;
      }
    }
    for (auto& c : pod_cost)
      c = it % 5 == 0   ? 0.0
          : mode == 2 ? 3e16 * static_cast<double>(rng() % 3)
                      : static_cast<double>(rng() % 300) / 3.0;
    // A scope: some of the blocks with capacity, by capacity descending, then index.
    std::vector<std::uint32_t> order;
    for (std::uint32_t k = 0; k < nb; ++k)
      if (cap[k] > 0 && (it % 2 ? rng() % 4 != 0 : rng() % 12 == 0)) order.push_back(k);
    std::stable_sort(order.begin(), order.end(), [&](auto x, auto y) { return cap[x] > cap[y]; });
    // The ranking Search::rank makes: by cost (-0.0 as 0.0), then capacity, then index.
    std::vector<std::uint32_t> ranked;
    for (std::uint32_t k = 0; k < nb; ++k)
      if (cap[k] > 0) ranked.push_back(k);
    std::stable_sort(ranked.begin(), ranked.end(), [&](auto x, auto y) { return cap[x] > cap[y]; });
    std::stable_sort(ranked.begin(), ranked.end(),
                     [&](auto x, auto y) { return cost[x] + 0.0 < cost[y] + 0.0; });
    Ranking r;
    r.blocks = ranked;
    r.at.assign(nb, kAbsent);
    for (std::uint32_t i = 0; i < ranked.size(); ++i) r.at[ranked[i]] = i;
    const auto L = 1 + static_cast<std::uint32_t>(
                           rng() % std::max<std::size_t>(1, std::min<std::size_t>(order.size(), 250)));
    const auto G = 1 + static_cast<std::uint32_t>(rng() % (4 * L + 2));
    const auto want = reference_fill(order, cap, cost, r, pod, pod_cost, L, G);
    filled += !want.empty();
    ASSERT_EQ(fill(order, cap, cost, r, pod, pod_cost, L, G, 0, 0), want) << "iteration " << it;
    ASSERT_EQ(fill(order, cap, cost, r, pod, pod_cost, L, G, kAbsent, kAbsent), want) << "iteration " << it;
    ASSERT_EQ(fill(order, cap, cost, r, pod, pod_cost, L, G, kAbsent, 0), want) << "iteration " << it;
    ASSERT_EQ(fill(order, cap, cost, r, pod, pod_cost, L, G), want) << "iteration " << it;
  }
  EXPECT_GT(filled, 3300);  // most scopes hold their job: the sets compared are not all empty
}

}  // namespace
}  // namespace fabricplace::policies::detail
