// SPDX-License-Identifier: GPL-2.0-or-later
// fill(): see fill.hpp.
#include "fill.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

namespace fabricplace::policies::detail {

Set fill(const std::vector<std::uint32_t>& order, const std::vector<std::uint32_t>& cap,
         const std::vector<double>& cost, const Ranking& ranked,
         const std::vector<std::uint32_t>& pod, const std::vector<double>& pod_cost,
         std::uint32_t L, std::uint32_t G, std::uint32_t lists_above,
         std::uint32_t swap_lists_above) {
  // Scratch kept between calls (a decision fills some 20 times).
  thread_local std::vector<std::size_t> cheap, pos, by_pod;
  thread_local std::vector<std::vector<std::size_t>> spare;  // per capacity (the swaps)
  thread_local std::vector<std::uint32_t> in_pod, first, head, live, cheap_at, run_end;
  thread_local std::vector<char> taken;
  // Positions in `order`, cheapest first (ties: the earlier position): a small scope sorts
  // its own positions by rank, a large one filters the ranking.
  cheap.clear();
  if (order.size() * 8 < ranked.blocks.size()) {
    for (std::size_t j = 0; j < order.size(); ++j) cheap.push_back(j);
    std::sort(cheap.begin(), cheap.end(),
              [&](auto x, auto y) { return ranked.at[order[x]] < ranked.at[order[y]]; });
  } else {
    thread_local std::vector<std::int64_t> at;  // block -> its position in `order`, or -1
    at.assign(cap.size(), -1);
    for (std::size_t j = 0; j < order.size(); ++j) at[order[j]] = static_cast<std::int64_t>(j);
    for (auto k : ranked.blocks)
      if (at[k] >= 0) cheap.push_back(static_cast<std::size_t>(at[k]));
  }
  const std::size_t n = order.size();
  taken.assign(n, 0);
  std::uint32_t pods = 0;
  for (auto k : order) pods = std::max(pods, pod[k] + 1);
  in_pod.assign(pods, 0);  // chosen blocks per pod
  // Large fills find each step's block through per-pod lists; small ones scan (cheaper than
  // building the lists).
  const bool many = L > lists_above;
  if (many) {
    // Each pod's positions, cheapest first: by_pod[first[p] .. first[p + 1]); head[p] is the
    // first of them still a candidate.
    first.assign(pods + 1, 0);
    for (auto j : cheap) ++first[pod[order[j]] + 1];
    live.clear();  // the pods with blocks in `order`
    for (std::uint32_t p = 0; p < pods; ++p)
      if (first[p + 1] > 0) live.push_back(p);
    std::partial_sum(first.begin(), first.end(), first.begin());
    head.assign(first.begin(), first.end() - 1);
    by_pod.resize(n);
    for (auto j : cheap) by_pod[head[pod[order[j]]]++] = j;
    head.assign(first.begin(), first.end() - 1);
    // run_end[i]: the end of the run of equal costs that by_pod[i] is in, within its pod.
    run_end.resize(n);
    for (auto p : live)
      for (auto i = first[p + 1]; i-- > first[p];)
        run_end[i] = i + 1 < first[p + 1] && cost[order[by_pod[i + 1]]] == cost[order[by_pod[i]]]
                         ? run_end[i + 1]
                         : i + 1;
  }
  // Each step takes the cheapest candidate by (price, position): a block costs its cost, plus
  // its pod's cost when the pod has no chosen block yet. Within a pod the price follows the
  // cost, so the cheapest of a pod is the first of its positions in [0, end) not taken, or on
  // an equal price (a sum may round to the same double) the earliest position among those.
  constexpr std::size_t kNoBlock = std::numeric_limits<std::size_t>::max();
  // `end` never grows from one step to the next: while the job needs more than the r - 1
  // largest untaken capacities, it needs more than any one block, and what is left to cover
  // falls by the taken block's capacity, the sum by at least as much. So the lists skip the
  // positions at or past it for good.
  auto cheapest = [&](std::size_t end) {  // over the untaken positions in [0, end)
    if (!many) {
      std::size_t best = kNoBlock;
      double best_price = 0;
      for (std::size_t j = 0; j < end; ++j) {
        if (taken[j]) continue;
        const double pr = cost[order[j]] + (in_pod[pod[order[j]]] ? 0.0 : pod_cost[pod[order[j]]]);
        if (best == kNoBlock || pr < best_price) best = j, best_price = pr;
      }
      return best;
    }
    std::size_t best = kNoBlock;
    double best_price = 0;
    for (auto p : live) {
      auto& h = head[p];
      const auto stop = first[p + 1];
      while (h < stop && (taken[by_pod[h]] || by_pod[h] >= end)) ++h;
      if (h == stop) continue;
      const double extra = in_pod[p] ? 0.0 : pod_cost[p];
      std::size_t at = by_pod[h];
      const double price = cost[order[at]] + extra;
      // The head is the earliest position of its run of equal costs (a run is in position
      // order). A later run can tie on price only when the pod's cost is added and rounds
      // two costs together: then its first candidate competes.
      if (extra != 0.0)
        for (auto i = run_end[h]; i < stop && cost[order[by_pod[i]]] + extra == price;
             i = run_end[i])
          for (auto k = i; k < run_end[i]; ++k)
            if (const auto j = by_pod[k]; !taken[j] && j < end) {
              at = std::min(at, j);
              break;
            }
      if (best == kNoBlock || price < best_price || (price == best_price && at < best))
        best = at, best_price = price;
    }
    return best;
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
  // cost most (pods included) while the set still covers the job; a few passes. The best
  // swap is the untaken block of least price, on a tie the first in `cheap`, among those
  // large enough. A small fill reads `cheap` in order, skipping the taken and the too small,
  // and stops at the first block whose cost alone is no better. A large one reads only the
  // untaken blocks large enough: `spare[c]`, the untaken positions of capacity c in
  // `cheap`'s order (kept as blocks swap), for each c from the least that will do, each
  // list until its cost alone can no longer win.
  const bool swap_lists = L > swap_lists_above;
  std::uint32_t max_cap = 0;
  if (swap_lists) {
    cheap_at.resize(n);
    for (std::size_t i = 0; i < n; ++i) cheap_at[cheap[i]] = static_cast<std::uint32_t>(i);
    for (auto k : order) max_cap = std::max(max_cap, cap[k]);
    if (spare.size() < max_cap + 1) spare.resize(max_cap + 1);
    for (std::uint32_t c = 0; c <= max_cap; ++c) spare[c].clear();
    for (auto j : cheap)
      if (!taken[j]) spare[cap[order[j]]].push_back(j);
  }
  auto by_cheap = [&](std::size_t x, std::size_t y) { return cheap_at[x] < cheap_at[y]; };
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
      auto price = [&](std::uint32_t kj) {
        const bool opens = pod[kj] != pod[kx] ? in_pod[pod[kj]] == 0 : in_pod[pod[kx]] == 1;
        return cost[kj] + (opens ? pod_cost[pod[kj]] : 0.0);
      };
      if (!swap_lists) {
        for (auto j : cheap) {
          const auto kj = order[j];
          // By cost: past the best found, no block can beat it (its price is at least its
          // cost).
          if (cost[kj] >= best_cost) break;
          if (taken[j] || cap[kj] + slack < cap[kx]) continue;
          if (const double c = price(kj); c < best_cost)
            best = static_cast<std::int64_t>(j), best_cost = c;
        }
      } else {
        const auto least = static_cast<std::uint32_t>(cap[kx] > slack ? cap[kx] - slack : 0);
        for (std::uint32_t c = least; c <= max_cap; ++c) {
          for (auto j : spare[c]) {
            const auto kj = order[j];
            const auto b = static_cast<std::size_t>(best);
            // Past the best found (on an equal cost, past its place), no block of this list
            // can beat it.
            if (best < 0 ? cost[kj] >= best_cost
                         : cost[kj] > best_cost ||
                               (cost[kj] == best_cost && cheap_at[j] > cheap_at[b]))
              break;
            const double pr = price(kj);
            if (best < 0 ? pr < best_cost
                         : pr < best_cost || (pr == best_cost && cheap_at[j] < cheap_at[b]))
              best = static_cast<std::int64_t>(j), best_cost = pr;
          }
        }
      }
      if (best < 0) continue;
      const auto j = static_cast<std::size_t>(best);
      --in_pod[pod[kx]];
      ++in_pod[pod[order[j]]];
      taken[x] = 0;
      taken[j] = 1;
      if (swap_lists) {
        auto& from = spare[cap[order[j]]];
        from.erase(std::lower_bound(from.begin(), from.end(), j, by_cheap));
        auto& to = spare[cap[kx]];
        to.insert(std::lower_bound(to.begin(), to.end(), x, by_cheap), x);
      }
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

}  // namespace fabricplace::policies::detail
