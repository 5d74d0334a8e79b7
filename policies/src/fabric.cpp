// fabric: the fabric-aware policy (docs/placement.md).
//
// Hard constraints: every TP group of g = group_nodes() hosts lies inside one block (a leaf,
// or a rail group on rail-optimised fabrics); only free, healthy, non-excluded hosts; the
// fewest blocks L* that can hold the job's G = N / g groups. A block of u usable hosts holds
// floor(u / g) groups; L* is the smallest L whose L largest capacities reach G.
//
// Among the L*-block sets, the policy minimises the score of docs/placement.md. For a set
// whose blocks form one contiguous stretch of the ring each, that score is, up to terms equal
// for every set, sum over its blocks of (2 x uplink weight x the block's uplink penalty +
// leftover weight x the block's free hosts) + pods weight x the pods it spans. The search:
//  - scopes: each single pod that can hold the job in L* blocks; the fewest pods (greedily,
//    strongest first) that can; all pods of each connected part of the fabric;
//  - per scope, the exact minimum-cost set by a knapsack over (blocks, groups covered) while
//    the decision's budget of knapsack cells lasts (kExactBudget), and in every case a
//    feasibility-preserving greedy fill: L* times, take the cheapest block such that the blocks
//    still to come can cover what remains, then swap any chosen block for a cheaper unchosen one
//    while the set still covers the job. The fill runs with the full cost and with either cost term
//    alone, so the candidates include what a health-blind and a fit-blind choice would take;
//  - the best candidate wins; the next distinct one is the runner-up that --explain shows
//    (when every search agreed: the best set without the winner's costliest block).
// With L* = 1 the search is exhaustive: every block that holds the job is a candidate.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <string>

#include "fabricplace/policies/policies.hpp"

namespace fabricplace::policies {
namespace {

using fabric::HostId;
using fabric::idx;
using fabric::kNone;
using placement::HostState;

struct Input {
  explicit Input(const placement::Context& ctx) : c(ctx) {}
  const placement::Context& c;
  std::uint32_t g = 1, G = 0, N = 0;
  std::vector<std::uint8_t> ok;                        // usable hosts
  std::vector<std::uint32_t> usable, free_hosts, cap;  // per block
};

using Set = std::vector<std::uint32_t>;  // block indices, ascending

struct Candidate {
  Set blocks;
  double cost = 0;  // the set-dependent part of the score
};

// Greedy fill of exactly L blocks from `order` (eligible blocks sorted by capacity
// descending, then index) covering G groups; empty when impossible. A block of a pod not
// yet used costs `pod_weight` more.
Set fill(const std::vector<std::uint32_t>& order, const std::vector<std::uint32_t>& cap,
         const std::vector<double>& cost, const std::vector<std::uint32_t>& pod, double pod_weight,
         std::uint32_t L, std::uint32_t G) {
  std::vector<char> taken(order.size(), 0);
  std::uint32_t pods = 0;
  for (auto k : order) pods = std::max(pods, pod[k] + 1);
  std::vector<std::uint32_t> in_pod(pods, 0);  // chosen blocks per pod
  auto price = [&](std::uint32_t k) { return cost[k] + (in_pod[pod[k]] ? 0.0 : pod_weight); };
  std::uint32_t need = G;
  Set out;
  for (std::uint32_t step = 0; step < L; ++step) {
    const std::uint32_t r = L - step;  // blocks still to choose, this one included
    // Sum of the r - 1 largest untaken capacities, and the r-th.
    std::uint64_t top = 0, rth = 0;
    std::uint32_t seen = 0;
    for (std::size_t j = 0; j < order.size() && seen < r; ++j) {
      if (taken[j]) continue;
      if (seen + 1 < r)
        top += cap[order[j]];
      else
        rth = cap[order[j]];
      ++seen;
    }
    if (seen < r || top + rth < need) return {};
    std::int64_t best = -1;
    double best_price = 0;
    seen = 0;
    for (std::size_t j = 0; j < order.size(); ++j) {
      if (taken[j]) continue;
      const bool in_top = seen++ + 1 < r;
      // `order` is by capacity, descending: past the top r - 1, the first block too small
      // to complete the set ends the candidates.
      if (!in_top && cap[order[j]] + top < need) break;
      const double pr = price(order[j]);
      if (best < 0 || pr < best_price) best = static_cast<std::int64_t>(j), best_price = pr;
    }
    const auto j = static_cast<std::size_t>(best);
    taken[j] = 1;
    out.push_back(order[j]);
    ++in_pod[pod[order[j]]];
    need -= std::min(need, cap[order[j]]);
  }
  // Swaps: each chosen block, costliest first, for the unchosen one that lowers the set's
  // cost most (pods included) while the set still covers the job; a few passes.
  std::vector<std::size_t> pos(out.size());  // positions in `order` of the chosen blocks
  for (std::size_t i = 0; i < out.size(); ++i)
    pos[i] =
        static_cast<std::size_t>(std::find(order.begin(), order.end(), out[i]) - order.begin());
  std::vector<std::size_t> cheap(order.size());
  std::iota(cheap.begin(), cheap.end(), std::size_t{0});
  std::stable_sort(cheap.begin(), cheap.end(),
                   [&](auto x, auto y) { return cost[order[x]] < cost[order[y]]; });
  std::uint64_t total = 0;
  for (auto k : out) total += cap[k];
  for (int pass = 0; pass < 4; ++pass) {
    bool improved = false;
    std::stable_sort(pos.begin(), pos.end(),
                     [&](auto x, auto y) { return cost[order[x]] > cost[order[y]]; });
    for (auto& x : pos) {
      const std::uint64_t slack = total - G;
      const auto kx = order[x];
      // Removing x frees its pod when it is the pod's only chosen block.
      const double freed = in_pod[pod[kx]] == 1 ? pod_weight : 0.0;
      const double old_cost = cost[kx] + freed;
      std::int64_t best = -1;
      double best_cost = old_cost;
      for (auto j : cheap) {
        const auto kj = order[j];
        if (cost[kj] >= old_cost) break;
        if (taken[j] || cap[kj] + slack < cap[kx]) continue;
        const bool opens = pod[kj] != pod[kx] ? in_pod[pod[kj]] == 0 : freed > 0;
        const double c = cost[kj] + (opens ? pod_weight : 0.0);
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
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = order[pos[i]];
  std::sort(out.begin(), out.end());
  return out;
}

// The exact minimum of  sum of block costs + pods weight x pods used  over the sets of
// exactly L blocks of `order` covering G groups: a knapsack over (blocks chosen, groups
// covered capped at G, whether the current pod is open), blocks taken pod by pod, of
// 2 x order.size() x (L + 1) x (G + 1) cells. A decision spends at most kExactBudget cells on
// it, scope by scope (the whole fabric first); empty when no such set exists.
constexpr std::size_t kExactBudget = std::size_t{1} << 20;
// The single-term fills run only when blocks x L is at most this.
constexpr std::size_t kVariantBudget = std::size_t{1} << 14;

std::size_t exact_cells(std::size_t blocks, std::uint32_t L, std::uint32_t G) {
  return 2 * blocks * (std::size_t{L} + 1) * (std::size_t{G} + 1);
}

Set exact(std::vector<std::uint32_t> order, const std::vector<std::uint32_t>& cap,
          const std::vector<double>& cost, const std::vector<std::uint32_t>& pod, double pod_weight,
          std::uint32_t L, std::uint32_t G) {
  std::stable_sort(order.begin(), order.end(), [&](auto x, auto y) { return pod[x] < pod[y]; });
  const std::size_t n = order.size(), S = G + 1, K = L + 1;
  constexpr double kInf = std::numeric_limits<double>::infinity();
  // closed[k][s]: best cost with no block of the current pod taken; open[k][s]: with some.
  std::vector<double> closed(K * S, kInf), open(K * S, kInf);
  // how[(i K + k) S + s]: 0 = (k, s, open) kept its value at block i; 1 or 2 = reached by
  // taking block i from the closed (1) or open (2) state. from_full[i K + k]: for s = G
  // (capped), the groups covered before. reopened[(i K + k) S + s]: at the first block i
  // of a pod, the closed state came from the previous pod's open one.
  std::vector<std::uint8_t> how(n * K * S, 0), reopened(n * K * S, 0);
  std::vector<std::uint32_t> from_full(n * K, 0);
  closed[0] = 0;
  auto first_of_pod = [&](std::size_t i) { return i == 0 || pod[order[i]] != pod[order[i - 1]]; };
  for (std::size_t i = 0; i < n; ++i) {
    if (first_of_pod(i))
      for (std::size_t x = 0; x < K * S; ++x) {
        if (open[x] < closed[x]) {
          closed[x] = open[x];
          reopened[i * K * S + x] = 1;
        }
        open[x] = kInf;
      }
    const std::uint32_t c = cap[order[i]];
    const double w = cost[order[i]];
    for (std::uint32_t k = std::min<std::uint32_t>(L, static_cast<std::uint32_t>(i) + 1); k >= 1;
         --k)
      for (std::size_t s0 = 0; s0 < S; ++s0)
        for (const std::uint8_t from : {std::uint8_t{1}, std::uint8_t{2}}) {
          const double base = (from == 1 ? closed : open)[(k - 1) * S + s0];
          if (base == kInf) continue;
          const double v = base + w + (from == 1 ? pod_weight : 0);
          const std::size_t s = std::min<std::size_t>(G, s0 + c);
          if (v < open[k * S + s]) {
            open[k * S + s] = v;
            how[(i * K + k) * S + s] = from;
            if (s == G) from_full[i * K + k] = static_cast<std::uint32_t>(s0);
          }
        }
  }
  const std::size_t end = L * S + G;
  if (std::min(open[end], closed[end]) == kInf) return {};
  Set out;
  std::uint32_t k = L;
  std::size_t s = G;
  bool is_open = open[end] <= closed[end];
  for (std::size_t i = n; i-- > 0;) {
    if (is_open && how[(i * K + k) * S + s]) {
      const auto from = how[(i * K + k) * S + s];
      out.push_back(order[i]);
      s = s == G ? from_full[i * K + k] : s - cap[order[i]];
      --k;
      is_open = from == 2;
    }
    if (first_of_pod(i)) {
      // Before this pod: the state is the previous pod's, open if it was carried over.
      is_open = !is_open && reopened[(i * K + k) * S + s];
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string block_word(const placement::Context& c, bool plural = false) {
  if (c.tree.virtual_leaves) return plural ? "rail groups" : "rail group";
  return plural ? "leaves" : "leaf";
}

std::string hosts_word(std::uint32_t n) {
  return n == 1 ? "host" : "hosts";
}

// Why no placement exists now.
std::string why_not(const Input& in, const placement::JobRequest& job,
                    const placement::NodeStates& states) {
  const auto& c = in.c;
  const auto& b = c.blocks;
  const std::uint32_t total = std::accumulate(in.usable.begin(), in.usable.end(), 0u);
  if (total < in.N) {
    std::uint32_t free = 0, unhealthy = 0, excluded = 0, leafless = 0;
    std::vector<bool> excl(states.state.size(), false);
    for (HostId h : job.exclude) excl[idx(h)] = true;
    for (std::uint32_t h = 0; h < states.state.size(); ++h) {
      if (states.state[h] != HostState::kFree) continue;
      ++free;
      if (b.of_host[h] == kNone)
        ++leafless;
      else if (excl[h])
        ++excluded;
      else if (!c.healthy[h])
        ++unhealthy;
    }
    std::string s = "job needs " + std::to_string(in.N) + " " + hosts_word(in.N) + "; " +
                    std::to_string(total) + " usable (" + std::to_string(free) + " free";
    std::string minus;
    auto add_minus = [&](std::uint32_t n, const std::string& what) {
      if (n) minus += (minus.empty() ? "" : ", ") + std::to_string(n) + " " + what;
    };
    add_minus(unhealthy, "unhealthy or cut off");
    add_minus(excluded, "excluded");
    add_minus(leafless, "under no leaf");
    if (!minus.empty()) s += ", less " + minus;
    for (HostState st :
         {HostState::kBusy, HostState::kDrained, HostState::kDown, HostState::kUnknown})
      if (auto n = states.count(st))
        s += "; " + std::to_string(n) + " " +
             (st == HostState::kUnknown ? std::string("not reported")
                                        : std::string(placement::to_string(st)));
    return s + ")";
  }
  std::size_t largest = 0;
  for (std::size_t k = 1; k < b.size(); ++k)
    if (b.hosts[k].size() > b.hosts[largest].size()) largest = k;
  const std::string gw = "TP group needs " + std::to_string(in.g) + " " + hosts_word(in.g) +
                         " under one " + block_word(c);
  if (b.size() == 0) return "the fabric has no " + block_word(c) + " with hosts";
  if (in.g > b.hosts[largest].size())
    return gw + "; the largest " + block_word(c) + ", " + b.name[largest] + ", has " +
           std::to_string(b.hosts[largest].size());
  std::vector<std::uint32_t> order(b.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](auto x, auto y) { return in.usable[x] > in.usable[y]; });
  const std::uint32_t groups = std::accumulate(in.cap.begin(), in.cap.end(), 0u);
  if (groups == 0)
    return gw + "; no " + block_word(c) + " has " + std::to_string(in.g) + " usable " +
           hosts_word(in.g) + "; best " + block_word(c) + " " + b.name[order[0]] + " has " +
           std::to_string(in.usable[order[0]]);
  if (groups < in.G) {
    std::string s = "job needs " + std::to_string(in.G) + " TP groups of " + std::to_string(in.g) +
                    " " + hosts_word(in.g) + ", each under one " + block_word(c) +
                    "; the usable hosts form only " + std::to_string(groups) + " (";
    std::size_t listed = 0;
    for (auto k : order) {
      if (in.cap[k] == 0 || listed == 4) break;
      s += (listed++ ? ", " : "") + b.name[k] + " " + std::to_string(in.cap[k]);
    }
    if (listed < static_cast<std::size_t>(std::count_if(
                     in.cap.begin(), in.cap.end(), [](auto x) { return x > 0; })))
      s += ", ...";
    return s + ")";
  }
  return "the " + block_word(c, true) +
         " that could hold the job cannot reach each other (no uplink, or separate parts of "
         "the fabric)";
}

}  // namespace

placement::Placement fabric_aware(const placement::Context& c, const placement::JobRequest& job,
                                  const placement::NodeStates& states) {
  const auto& b = c.blocks;
  const auto& w = c.weights;
  Input in(c);
  in.g = job.group_nodes();
  in.N = job.nodes;
  in.G = job.groups();
  in.ok = placement::usable_hosts(c, job, states, /*healthy_only=*/true);
  in.usable.assign(b.size(), 0);
  in.free_hosts.assign(b.size(), 0);
  in.cap.assign(b.size(), 0);
  for (std::size_t k = 0; k < b.size(); ++k) {
    for (HostId h : b.hosts[k]) {
      in.usable[k] += in.ok[idx(h)] ? 1 : 0;
      in.free_hosts[k] += states.free(h) ? 1 : 0;
    }
    in.cap[k] = in.usable[k] / in.g;
  }
  auto infeasible = [&] {
    placement::Placement p;
    p.policy = "fabric";
    p.reason = why_not(in, job, states);
    return p;
  };

  // L*: one block if any holds the job; else the fewest blocks with uplinks inside one
  // connected part of the fabric.
  std::uint32_t L = 0;
  std::vector<std::uint32_t> one;
  for (std::uint32_t k = 0; k < b.size(); ++k)
    if (in.cap[k] >= in.G) one.push_back(k);
  std::map<std::uint32_t, std::vector<std::uint32_t>> parts;  // component -> eligible blocks
  if (!one.empty()) {
    L = 1;
  } else {
    for (std::uint32_t k = 0; k < b.size(); ++k)
      if (in.cap[k] > 0 && c.uplink[k] < placement::kNoUplink) parts[b.component[k]].push_back(k);
    for (auto& [comp, ks] : parts) {
      std::stable_sort(ks.begin(), ks.end(), [&](auto x, auto y) { return in.cap[x] > in.cap[y]; });
      std::uint64_t sum = 0;
      for (std::uint32_t i = 0; i < ks.size(); ++i) {
        sum += in.cap[ks[i]];
        if (sum >= in.G) {
          if (L == 0 || i + 1 < L) L = i + 1;
          break;
        }
      }
    }
    if (L == 0) return infeasible();
  }

  // Per-block costs: the full one and each term alone.
  const double cross = L > 1 ? 2.0 : 0.0;
  std::vector<double> full(b.size()), fit(b.size()), up(b.size());
  for (std::size_t k = 0; k < b.size(); ++k) {
    up[k] = cross * w.uplink * c.uplink[k];
    fit[k] = w.leftover * in.free_hosts[k];
    full[k] = up[k] + fit[k];
  }
  std::vector<Candidate> cands;
  std::set<Set> seen;
  auto pods_of = [&](const Set& s) {
    std::set<std::uint32_t> pods;
    for (auto k : s) pods.insert(b.pod[k]);
    return pods.size();
  };
  auto consider = [&](Set s) {
    if (s.empty() || !seen.insert(s).second) return;
    double cost = w.pods * static_cast<double>(pods_of(s));
    for (auto k : s) cost += full[k];
    cands.push_back({std::move(s), cost});
  };
  std::size_t exact_budget = kExactBudget;
  bool exact_whole = false;  // the knapsack ran over a whole connected part
  auto fills = [&](const std::vector<std::uint32_t>& order, bool whole) {
    if (const std::size_t cells = exact_cells(order.size(), L, in.G);
        (whole || !exact_whole) && cells <= exact_budget) {
      exact_budget -= cells;
      exact_whole = exact_whole || whole;
      consider(exact(order, in.cap, full, b.pod, w.pods, L, in.G));
    }
    consider(fill(order, in.cap, full, b.pod, w.pods, L, in.G));
    // Each term alone (small searches only), unless the uplink term is the same for every
    // block (then either variant would repeat the full fill).
    bool uniform = true;
    for (auto k : order) uniform = uniform && c.uplink[k] == c.uplink[order.front()];
    if (!uniform && order.size() * L <= kVariantBudget)
      for (const auto* cost : {&up, &fit})
        consider(fill(order, in.cap, *cost, b.pod, w.pods, L, in.G));
  };

  if (L == 1) {
    // Exhaustive: the two cheapest blocks that hold the job.
    std::int64_t first = -1, second = -1;
    for (auto k : one) {
      if (first < 0 || full[k] < full[static_cast<std::size_t>(first)]) {
        second = first;
        first = k;
      } else if (second < 0 || full[k] < full[static_cast<std::size_t>(second)]) {
        second = k;
      }
    }
    for (auto k : {first, second})
      if (k >= 0) consider({static_cast<std::uint32_t>(k)});
  } else {
    for (const auto& [comp, ks] : parts) {
      // ks: eligible blocks of this part, capacity descending.
      std::map<std::uint32_t, std::vector<std::uint32_t>> by_pod;
      for (auto k : ks) by_pod[b.pod[k]].push_back(k);
      auto reach = [&](const std::vector<std::uint32_t>& order) {
        std::uint64_t sum = 0;
        for (std::size_t i = 0; i < order.size() && i < L; ++i) sum += in.cap[order[i]];
        return sum;
      };
      if (reach(ks) < in.G) continue;
      // The whole part first: with the knapsack's budget, its optimum over every set.
      fills(ks, /*whole=*/true);
      std::vector<std::pair<std::uint64_t, std::uint32_t>> strength;  // (reach, pod)
      for (const auto& [pod, pks] : by_pod) {
        const auto r = reach(pks);
        if (r >= in.G) fills(pks, false);  // the job fits inside this pod
        strength.emplace_back(r, pod);
      }
      // The fewest pods, strongest first, that together reach the job.
      std::stable_sort(strength.begin(), strength.end(),
                       [](const auto& x, const auto& y) { return x.first > y.first; });
      std::vector<std::uint32_t> scope;
      std::size_t scope_pods = 0;
      for (const auto& [r, pod] : strength) {
        ++scope_pods;
        scope.insert(scope.end(), by_pod[pod].begin(), by_pod[pod].end());
        std::stable_sort(scope.begin(), scope.end(), [&](auto x, auto y) {
          return in.cap[x] > in.cap[y] || (in.cap[x] == in.cap[y] && x < y);
        });
        if (reach(scope) >= in.G) break;
      }
      if (scope_pods > 1 && scope.size() < ks.size()) fills(scope, false);
    }
  }
  if (cands.empty()) return infeasible();
  // Lower cost first; equal costs (to rounding): the set whose blocks come first in fabric
  // (topology.conf) order.
  auto by_cost = [](const Candidate& x, const Candidate& y) {
    if (std::abs(x.cost - y.cost) > 1e-9 * std::max(1.0, std::abs(x.cost))) return x.cost < y.cost;
    return x.blocks < y.blocks;
  };
  std::stable_sort(cands.begin(), cands.end(), by_cost);
  if (cands.size() == 1 && L > 1) {
    // Every search agreed: the runner-up is the best set without one of the chosen blocks,
    // trying the costliest first (the last on ties), each of them (only the first for large
    // searches).
    Set best = cands[0].blocks;
    std::reverse(best.begin(), best.end());
    std::stable_sort(best.begin(), best.end(), [&](auto x, auto y) { return full[x] > full[y]; });
    const std::size_t tries = best.size() * L <= kVariantBudget ? best.size() : 1;
    for (std::size_t i = 0; i < best.size() && i < tries && cands.size() == 1; ++i) {
      std::vector<std::uint32_t> order;
      for (auto k : parts[b.component[best[i]]])
        if (k != best[i]) order.push_back(k);
      consider(fill(order, in.cap, full, b.pod, w.pods, L, in.G));
    }
    std::stable_sort(cands.begin(), cands.end(), by_cost);
  }

  // Hosts: blocks in ascending capacity give all their groups, the largest the rest, so what
  // is left over stays together in one block.
  auto hosts_of = [&](const Set& s) {
    Set by_cap = s;
    std::stable_sort(by_cap.begin(), by_cap.end(),
                     [&](auto x, auto y) { return in.cap[x] < in.cap[y]; });
    std::vector<std::uint32_t> take(b.size(), 0);
    std::uint32_t need = in.G;
    for (std::size_t i = 0; i < by_cap.size(); ++i) {
      const auto k = by_cap[i];
      const auto after = static_cast<std::uint32_t>(by_cap.size() - i - 1);
      take[k] = i + 1 == by_cap.size() ? need : std::min(in.cap[k], need - after);
      need -= take[k];
    }
    // Ring order (placement::ring_order): blocks by pod, then index; hosts by index.
    Set ring = s;
    std::stable_sort(ring.begin(), ring.end(), [&](auto x, auto y) { return b.pod[x] < b.pod[y]; });
    std::vector<HostId> hosts;
    hosts.reserve(in.N);
    for (auto k : ring) {
      std::uint32_t want = take[k] * in.g;
      for (HostId h : b.hosts[k]) {
        if (want == 0) break;
        if (!in.ok[idx(h)]) continue;
        hosts.push_back(h);
        --want;
      }
    }
    return hosts;
  };

  placement::Placement p = placement::evaluate(c, job, states, hosts_of(cands[0].blocks), "fabric");
  if (cands.size() > 1) {
    const auto r = placement::evaluate(c, job, states, hosts_of(cands[1].blocks), "fabric");
    p.has_runner_up = true;
    p.runner_up_leaves = r.leaves;
    p.runner_up = r.measures;
    p.runner_up_score = r.score;
  }
  return p;
}

}  // namespace fabricplace::policies
