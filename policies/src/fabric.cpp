// SPDX-License-Identifier: GPL-2.0-or-later
// fabric: the fabric-aware policy (docs/placement.md, "The fabric policy").
//
// Hard constraints: every TP group of g = group_nodes() hosts lies inside one block (a leaf,
// or a rail group on rail-optimised fabrics); only free, healthy, non-excluded hosts; a set
// of several blocks uses only blocks with uplinks, inside one connected part of the fabric.
//
// Among the sets it considers, the policy minimises the objective (placement::score_of): the
// job's predicted communication slowdown and the slowdown it adds to the running jobs, on
// the route model in force, then locality (blocks, pods, ring crossings) and fragmentation.
// A ring runs at its worst link, so the objective is not a sum over blocks: the search
// proposes sets from a per-block estimate, then measures each one exactly. Search::run()
// reads as the algorithm:
//  1. usable(): per block, its usable hosts, its capacity in TP groups, its free hosts;
//  2. estimate(): per block, the slowdown one ring edge crossing its uplinks would see with
//     their load now, and the same per pod for the tier above the pods; a block's cost is
//     that slowdown's cost plus its locality and fragmentation terms, a pod's cost the
//     slowdown of its uplinks plus the pods weight times how thin they are (pod_scarcity);
//  3. propose(): per connected part and scope (the whole part; each pod that can hold the
//     job alone; the fewest pods, strongest first), the fewest blocks L that hold the job
//     there, and L + 1 where some uplink is loaded or slow: sets from a greedy fill (and an
//     exact knapsack while its budget lasts), with the full estimate and with each term
//     alone. So "fewest leaves" is a candidate, not a rule: more leaves in one pod compete
//     with fewer leaves over several pods;
//  4. score(): each distinct set gets its hosts and ring order and is measured exactly: its
//     inter-block edges on the route model over the running jobs' load
//     (placement::forecast_edges), its locality and fragmentation;
//     refine(): on a large loaded fabric the knapsack and the single-term fills of step 3
//     (and the local search below) run only where the best set is slowed or slows a
//     running job;
//     repair(): while the best set is slowed, sets without its bottleneck's block (or pod),
//     then without the bottleneck of the best of those too, a few rounds;
//     improve(): local search on the measured objective (swap, drop, two for one);
//  5. choose(): the lowest score wins (equal scores: the fewest faulty uplinks, then the set
//     first in topology.conf order);
//     its ring gets route-aware boundaries (placement::route_aware_ring), or with pipeline
//     stages the best of the stage-aligned block orders, the column layout and the
//     route-aware ring; the next distinct set is the runner-up --explain shows.
// With a block that holds the whole job the search is exhaustive over such blocks (a ring
// inside one block crosses no uplink: s = 1).
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <unordered_set>
#include <utility>

#include "fabricplace/placement/route_order.hpp"
#include "fabricplace/policies/policies.hpp"
#include "fill.hpp"

namespace fabricplace::policies {
namespace {

using detail::fill;
using detail::Ranking;
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

using detail::Set;  // block indices, ascending
struct SetHash {
  std::size_t operator()(const Set& s) const noexcept {
    std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a over the indices
    for (auto k : s) h = (h ^ k) * 0x100000001b3ull;
    return static_cast<std::size_t>(h);
  }
};

// The exact minimum of  sum of block costs + the costs of the pods used  over the sets of
// exactly L blocks of `order` covering G groups: a knapsack over (blocks chosen, groups
// covered capped at G, whether the current pod is open), blocks taken pod by pod, of
// 2 x order.size() x (L + 1) x (G + 1) cells. A decision spends at most kExactBudget cells on
// it, scope by scope (the whole fabric first); empty when no such set exists.
constexpr std::size_t kExactBudget = std::size_t{1} << 15;
// Single-pod scopes proposed at most (Search::propose).
constexpr std::size_t kPodScopes = 4;
// Rounds of repair after the measured bottleneck (Search::repair).
constexpr int kRepairs = 4;
// Local search (Search::improve): at most this many sets measured, and at most this many
// hosts laid out for them.
constexpr std::size_t kImproveSets = 32;
constexpr std::size_t kImproveHosts = std::size_t{1} << 15;
// Route-aware boundaries (choose()) for rings over at most this many blocks.
constexpr std::size_t kRouteAwareBlocks = 32;
// The single-term fills run only when blocks x L is at most this.
constexpr std::size_t kVariantBudget = std::size_t{1} << 14;
// On fabrics of more blocks than this with some uplink loaded or slow, the refinements (the
// exact knapsack, the single-term fills, the local search) run only where the best set found
// is slowed or slows a running job (Search::refine).
constexpr std::size_t kRefineBlocks = 128;

std::size_t exact_cells(std::size_t blocks, std::uint32_t L, std::uint32_t G) {
  return 2 * blocks * (std::size_t{L} + 1) * (std::size_t{G} + 1);
}

Set exact(std::vector<std::uint32_t> order, const std::vector<std::uint32_t>& cap,
          const std::vector<double>& cost, const std::vector<std::uint32_t>& pod,
          const std::vector<double>& pod_cost, std::uint32_t L, std::uint32_t G) {
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
    const double opens = pod_cost[pod[order[i]]];
    for (std::uint32_t k = std::min<std::uint32_t>(L, static_cast<std::uint32_t>(i) + 1); k >= 1;
         --k) {
      // Row k - 1 is the state before block i (k descends), row k after it.
      const double* from_closed = closed.data() + (k - 1) * S;
      const double* from_open = open.data() + (k - 1) * S;
      double* to = open.data() + k * S;
      std::uint8_t* to_how = how.data() + (i * K + k) * S;
      auto take = [&](double base, double extra, std::uint8_t from, std::size_t s0) {
        if (base == kInf) return;
        const double v = base + w + extra;
        const std::size_t s = std::min<std::size_t>(G, s0 + c);
        if (v < to[s]) {
          to[s] = v;
          to_how[s] = from;
          if (s == G) from_full[i * K + k] = static_cast<std::uint32_t>(s0);
        }
      };
      for (std::size_t s0 = 0; s0 < S; ++s0) {
        take(from_closed[s0], opens, 1, s0);  // opens the pod
        take(from_open[s0], 0.0, 2, s0);
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
  return std::string(fabric::block_noun(c.blocks.kind, plural));
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
  // The group kept together: the EP group when it is the larger, else the TP group.
  const std::string what = job.ep > job.tp_size() ? "EP" : "TP";
  const std::string gw = what + " group needs " + std::to_string(in.g) + " " + hosts_word(in.g) +
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
    std::string s = "job needs " + std::to_string(in.G) + " " + what + " groups of " +
                    std::to_string(in.g) + " " + hosts_word(in.g) + ", each under one " +
                    block_word(c) + "; the usable hosts form only " + std::to_string(groups) + " (";
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

// The search of one decision (see the top of this file).
class Search {
 public:
  Search(const placement::Context& c, const placement::JobRequest& job,
         const placement::NodeStates& states, const placement::Traffic* traffic)
      : c_(c), b_(c.blocks), w_(c.weights), job_(job), states_(states), traffic_(traffic), in_(c) {}

  placement::Placement run() {
    large_ = b_.size() > kRefineBlocks;
    usable();
    if (!fewest_blocks()) return infeasible();
    estimate();
    propose();
    if (cands_.empty()) return infeasible();
    score();
    refine();
    repair();
    improve();
    return choose();
  }

 private:
  struct Candidate {
    Set blocks;
    placement::Measures m;
    /// Measured: the objective. Not measured: its locality and fragmentation terms alone,
    /// a lower bound (bandwidth terms are never negative).
    double score = 0;
    bool measured = false;
    std::uint32_t faults = 0;  // degraded, unhealthy and lost uplinks of its blocks
  };

  // 1. Usable hosts and each block's capacity in TP groups.
  void usable() {
    in_.g = job_.group_nodes();
    in_.N = job_.nodes;
    in_.G = job_.groups();
    placement::BlockCounts counts;
    in_.ok = placement::usable_hosts(c_, job_, states_, /*healthy_only=*/true, counts);
    in_.usable = std::move(counts.usable);
    in_.free_hosts = std::move(counts.free);
    in_.cap.assign(b_.size(), 0);
    for (std::size_t k = 0; k < b_.size(); ++k) in_.cap[k] = in_.usable[k] / in_.g;
  }

  // The blocks that hold the job alone; else, per connected part, the blocks that can join
  // a set of several (capacity descending) and the fewest blocks that can hold the job.
  bool fewest_blocks() {
    for (std::uint32_t k = 0; k < b_.size(); ++k)
      if (in_.cap[k] >= in_.G) one_.push_back(k);
    if (!one_.empty()) return true;
    for (std::uint32_t k = 0; k < b_.size(); ++k)
      if (in_.cap[k] > 0 && c_.uplinked(k)) parts_[b_.component[k]].push_back(k);
    bool any = false;
    for (auto& [comp, ks] : parts_) {
      by_capacity(ks);
      any = any || fewest(ks) > 0;
    }
    return any;
  }

  // 2. Per-block and per-pod estimates of what crossing their uplinks costs now.
  void estimate() {
    // The slowdown one more ring edge sees over a block's uplinks or a pod's links to the
    // core (placement::edge_slowdown): kept current by the Traffic when it tracks the
    // context's groups, else computed here.
    const auto& groups = c_.groups;
    const bool tracked = traffic_ && traffic_->groups() == &groups;
    const std::span<const routes::Load> bg =
        traffic_ ? traffic_->load() : std::span<const routes::Load>{};
    auto slowdown = [&](std::size_t i) {
      if (tracked) return traffic_->group_slowdown(static_cast<std::uint32_t>(i));
      if (!traffic_) return groups.idle[i];
      return placement::edge_slowdown(c_.capacity, groups.fluid, bg, groups.links_of(i));
    };
    const double n = in_.N;
    bw_.assign(b_.size(), 0);
    fit_.assign(b_.size(), 0);
    std::uint32_t pods = 0;
    for (std::size_t k = 0; k < b_.size(); ++k) pods = std::max(pods, b_.pod[k] + 1);
    // A pod used costs the pods weight, times how thin its links to the core are (the set
    // crosses them when it spans pods).
    pod_cost_.resize(pods);
    for (std::uint32_t p = 0; p < pods; ++p) pod_cost_[p] = w_.pods * c_.pod_scarcity[p];
    pod_flat_ = pod_cost_;
    std::vector<char> pod_done(pods, 0);
    // A job inside one block crosses no uplink: only fit tells blocks apart.
    const bool spans = one_.empty();
    for (std::size_t k = 0; k < b_.size(); ++k) {
      if (in_.cap[k] == 0) continue;
      const double s =
          spans ? std::max(slowdown(c_.block_group(k, false)), slowdown(c_.block_group(k, true)))
                : 1.0;
      bw_[k] = w_.slowdown * n * (s - 1);
      loaded_ = loaded_ || s > 1;
      const bool whole = in_.free_hosts[k] == b_.hosts[k].size();
      fit_[k] = w_.leftover * in_.free_hosts[k] +
                (whole && in_.free_hosts[k] > in_.N ? w_.fresh_block : 0.0);
      const auto p = b_.pod[k];
      if (spans && !pod_done[p] && c_.block_tier2[k] != kNone) {
        pod_done[p] = 1;
        const auto t = c_.block_tier2[k];
        const double sp =
            std::max(slowdown(c_.tier2_group(t, false)), slowdown(c_.tier2_group(t, true)));
        pod_cost_[p] += w_.slowdown * n * (sp - 1);
        loaded_ = loaded_ || sp > 1;
        pods_loaded_ = pods_loaded_ || sp > 1 || c_.pod_scarcity[p] > 1;
      }
    }
    const double per_block = w_.leaves + w_.ring_crossings;
    full_.resize(b_.size());
    for (std::size_t k = 0; k < b_.size(); ++k) {
      full_[k] = bw_[k] + fit_[k] + per_block;
      bw_[k] += per_block;
      fit_[k] += per_block;
    }
    if (spans) rank_full_ = rank(full_);  // fill() runs only for sets of several blocks
  }

  // The blocks that can take part (some capacity) by `cost` ascending, then capacity
  // descending, then index: the order fill() takes a scope's blocks in by cost. A stable
  // radix sort of the blocks in capacity order (by_cap_) on the cost's bits, mapped so that
  // unsigned order is the doubles' order; passes whose byte is the same for every block are
  // skipped (costs made of few terms share most bytes).
  Ranking rank(const std::vector<double>& cost) {
    if (by_cap_.empty()) {
      for (std::uint32_t k = 0; k < b_.size(); ++k)
        if (in_.cap[k] > 0) by_cap_.push_back(k);
      by_capacity(by_cap_);
    }
    const std::size_t n = by_cap_.size();
    thread_local std::vector<std::pair<std::uint64_t, std::uint32_t>> a, t;
    a.resize(n);
    t.resize(n);
    std::array<std::array<std::uint32_t, 256>, 8> count{};
    for (std::size_t i = 0; i < n; ++i) {
      const auto k = by_cap_[i];
      // + 0.0 makes -0.0 +0.0, which compares equal to it.
      auto bits = std::bit_cast<std::uint64_t>(cost[k] + 0.0);
      bits = bits >> 63 ? ~bits : bits | (std::uint64_t{1} << 63);
      a[i] = {bits, k};
      for (std::size_t d = 0; d < 8; ++d) ++count[d][(bits >> (8 * d)) & 0xff];
    }
    for (std::size_t d = 0; d < 8; ++d) {
      auto& c = count[d];
      if (n == 0 || c[(a[0].first >> (8 * d)) & 0xff] == n) continue;  // one value: in order
      std::uint32_t sum = 0;
      for (auto& x : c) sum += std::exchange(x, sum);
      for (const auto& e : a) t[c[(e.first >> (8 * d)) & 0xff]++] = e;
      a.swap(t);
    }
    Ranking r;
    r.blocks.resize(n);
    r.at.assign(b_.size(), kNone);
    for (std::size_t i = 0; i < n; ++i) {
      r.blocks[i] = a[i].second;
      r.at[a[i].second] = static_cast<std::uint32_t>(i);
    }
    return r;
  }

  // 3. Candidate sets.
  void propose() {
    if (!one_.empty()) {
      // A ring inside one block crosses no uplink (s = 1): the blocks differ only in fit,
      // so the two best by it are the candidates (equal: the first in fabric order).
      std::int64_t first = -1, second = -1;
      for (auto k : one_) {
        if (first < 0 || fit_[k] < fit_[static_cast<std::size_t>(first)]) {
          second = first;
          first = k;
        } else if (second < 0 || fit_[k] < fit_[static_cast<std::size_t>(second)]) {
          second = k;
        }
      }
      for (auto k : {first, second})
        if (k >= 0) consider({static_cast<std::uint32_t>(k)});
      return;
    }
    for (const auto& [comp, ks] : parts_) {
      const std::uint32_t L = fewest(ks);
      if (L == 0) continue;
      // The whole part first: with the knapsack's budget, its optimum over every set.
      fills(ks, L, /*whole=*/true);
      std::map<std::uint32_t, std::vector<std::uint32_t>> by_pod;
      for (auto k : ks) by_pod[b_.pod[k]].push_back(k);
      std::vector<std::pair<std::uint64_t, std::uint32_t>> strength;  // (reach in L, pod)
      // (fewest blocks, groups they hold, pod) of the pods that hold the job alone: a set
      // inside one pod crosses none of its core links, so neither their load nor how thin
      // they are ranks it, only how few blocks and how tight a fit.
      std::vector<std::tuple<std::uint32_t, std::uint64_t, std::uint32_t>> alone;
      // (groups the pod holds, pod), for the fewest pods by capacity.
      std::vector<std::pair<std::uint64_t, std::uint32_t>> room;
      for (auto& [pod, pks] : by_pod) {
        if (const auto Lp = fewest(pks); Lp > 0 && by_pod.size() > 1)
          alone.emplace_back(Lp, reach(pks, Lp), pod);
        strength.emplace_back(reach(pks, L), pod);
        room.emplace_back(reach(pks, static_cast<std::uint32_t>(pks.size())), pod);
      }
      if (pods_loaded_) {
        // The job inside one pod, with as many of its blocks as that takes, where the tier
        // above the pods is loaded, slow or thin (pod_scarcity): for the pods that need the
        // fewest blocks, then fit tightest, at most kPodScopes of them.
        std::sort(alone.begin(), alone.end());
        for (std::size_t i = 0; i < alone.size() && i < kPodScopes; ++i)
          fills(by_pod[std::get<2>(alone[i])], std::get<0>(alone[i]), false);
        // And over the fewest pods that can hold it at all (largest first), with as many
        // blocks as that takes: more leaves in fewer pods cross fewer core links.
        std::stable_sort(room.begin(), room.end(),
                         [](const auto& x, const auto& y) { return x.first > y.first; });
        std::vector<std::uint32_t> few;
        std::uint64_t held = 0;
        std::size_t few_pods = 0;
        for (const auto& [r, pod] : room) {
          if (held >= in_.G) break;
          held += r;
          ++few_pods;
          few.insert(few.end(), by_pod[pod].begin(), by_pod[pod].end());
        }
        by_capacity(few);
        if (few_pods > 1 && few.size() < ks.size())
          if (const auto Lf = fewest(few); Lf > 0) fills(few, Lf, false);
      }
      // The fewest pods, strongest first, that together hold the job in L blocks.
      std::stable_sort(strength.begin(), strength.end(),
                       [](const auto& x, const auto& y) { return x.first > y.first; });
      std::vector<std::uint32_t> scope;
      std::size_t scope_pods = 0;
      // Each pod's blocks are in capacity order (taken from ks): merged, the scope stays so.
      std::vector<std::uint32_t> merged;
      for (const auto& [r, pod] : strength) {
        ++scope_pods;
        merged.clear();
        std::merge(scope.begin(), scope.end(), by_pod[pod].begin(), by_pod[pod].end(),
                   std::back_inserter(merged),
                   [&](auto x, auto y) { return capacity_first(x, y); });
        scope.swap(merged);
        if (reach(scope, L) >= in_.G) break;
      }
      if (scope_pods > 1 && scope.size() < ks.size()) fills(scope, L, false);
    }
    if (cands_.size() == 1 && cands_[0].blocks.size() > 1) {
      // Every search agreed: the runner-up is the best set without one of the chosen
      // blocks, the costliest first (each of them for small searches).
      Set best = cands_[0].blocks;
      std::reverse(best.begin(), best.end());
      std::stable_sort(best.begin(), best.end(),
                       [&](auto x, auto y) { return full_[x] > full_[y]; });
      const auto L = static_cast<std::uint32_t>(best.size());
      const std::size_t tries = best.size() * L <= kVariantBudget ? best.size() : 1;
      for (std::size_t i = 0; i < best.size() && i < tries && cands_.size() == 1; ++i) {
        std::vector<std::uint32_t> order;
        for (auto k : parts_[b_.component[best[i]]])
          if (k != best[i]) order.push_back(k);
        // As many blocks as it takes without that one.
        if (const auto l = fewest(order); l > 0)
          consider(
              fill(order, in_.cap, full_, rank_full_, b_.pod, pod_cost_, std::max(l, L), in_.G));
      }
    }
  }

  // 4. The new candidates scored: locality and fragmentation first (exact, cheap), then,
  // cheapest first, the bandwidth terms measured on the routes for each that could still
  // beat the best measured so far (the others keep their lower bound, measured only if
  // they ever reach the top two).
  void score() {
    for (std::size_t i = scored_; i < cands_.size(); ++i) bound(cands_[i]);
    const auto mid = cands_.begin() + static_cast<std::ptrdiff_t>(scored_);
    std::sort(mid, cands_.end(), better);
    double best = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < scored_; ++i)
      if (cands_[i].measured) best = std::min(best, cands_[i].score);
    for (auto it = mid; it != cands_.end(); ++it)
      if (it->score <= best + 1e-9 * std::max(1.0, std::abs(best))) {
        measure(*it);
        best = std::min(best, it->score);
      }
    std::sort(mid, cands_.end(), better);
    std::inplace_merge(cands_.begin(), mid, cands_.end(), better);
    scored_ = cands_.size();
    measure_top(1);
  }

  // Lower score first; equal scores: the set with the fewest faulty uplinks (a tie means the
  // job's routes avoid them, the next job's may not), then the set whose blocks come first in
  // fabric (topology.conf) order. Scores compare on a grid of 1e-6 (sums of the same terms
  // in another order differ in the last bits), which keeps the order transitive; as doubles,
  // so that no weight, however large, overflows it.
  static double grid(double score) { return std::nearbyint(score * 1e6); }
  static bool better(const Candidate& x, const Candidate& y) {
    if (const auto gx = grid(x.score), gy = grid(y.score); gx != gy) return gx < gy;
    if (x.faults != y.faults) return x.faults < y.faults;
    return x.blocks < y.blocks;
  }

  // Makes the first `n` candidates measured ones (measuring moves a candidate down).
  void measure_top(std::size_t n) {
    for (bool again = true; again;) {
      again = false;
      for (std::size_t i = 0; i < n && i < cands_.size(); ++i)
        if (!cands_[i].measured) {
          measure(cands_[i]);
          std::stable_sort(cands_.begin(), cands_.end(), better);
          again = true;
          break;
        }
    }
  }

  // Locality and fragmentation: exact without laying out hosts.
  void bound(Candidate& cand) {
    takes(cand.blocks);
    auto& m = cand.m;
    m.hosts = in_.N;
    m.leaves = static_cast<std::uint32_t>(cand.blocks.size());
    pods_.clear();
    std::uint32_t free = 0;
    cand.faults = 0;
    for (auto k : cand.blocks) {
      cand.faults += c_.uplink_faults[k];
      pods_.push_back(b_.pod[k]);
      free += in_.free_hosts[k];
      if (in_.free_hosts[k] == b_.hosts[k].size() && take_[k] * in_.g < in_.free_hosts[k])
        ++m.fresh_blocks;
    }
    std::sort(pods_.begin(), pods_.end());
    m.pods = static_cast<std::uint32_t>(std::unique(pods_.begin(), pods_.end()) - pods_.begin());
    const auto pods = std::span(pods_).first(m.pods);
    m.thin_core = placement::thin_core_of_pods(c_, pods);
    m.core_assumed = placement::core_assumed_of_pods(c_, pods);
    m.leftover = free - in_.N;
    // Blocks are contiguous in the ring: L inter-block edges (none for one block), P of them
    // between pods when P > 1.
    if (m.leaves > 1) {
      m.ring_inter_leaf = m.leaves;
      m.ring_inter_pod = m.pods > 1 ? m.pods : 0;
    }
    cand.score = placement::score_of(w_, m);
  }

  // The bandwidth terms: the job's traffic between blocks (its ring, or with pipeline stages
  // each stage's ring and the stage-to-stage pairs) on the routes over the running jobs.
  void measure(Candidate& cand) {
    cand.measured = true;
    auto& m = cand.m;
    if (m.leaves < 2) return;
    edges_.clear();
    if (job_.pp > 1) {
      const auto ring = hosts_of(cand.blocks);
      for (const auto& [x, y] : placement::job_edges(ring, job_.pp))
        if (b_.of_host[idx(x)] != b_.of_host[idx(y)]) edges_.emplace_back(x, y);
      m.pp_inter_leaf = static_cast<std::uint32_t>(edges_.size());
    } else {
      // The ring's inter-block edges, in ring order, the closing one last: from the last host
      // of each block's stretch to the first of the next one's (the hosts hosts_of() would
      // lay out; only the boundaries cross uplinks).
      takes(cand.blocks);
      stretch_.clear();
      for (auto k : ring_blocks(cand.blocks)) {
        const auto& usable = usable_of(k);
        const std::size_t want =
            std::min<std::size_t>(std::size_t{take_[k]} * in_.g, usable.size());
        if (want > 0) stretch_.emplace_back(usable.front(), usable[want - 1]);
      }
      if (stretch_.size() > 1)
        for (std::size_t i = 0; i < stretch_.size(); ++i)
          edges_.emplace_back(stretch_[i].second, stretch_[(i + 1) % stretch_.size()].first);
    }
    if (c_.routes)
      m.bandwidth = placement::forecast_edges(*c_.routes, c_.capacity, traffic_, edges_, job_.salt,
                                              &edge_cache_);
    cand.score = placement::score_of(w_, m);
  }

  // 4a. On a large fabric (more than kRefineBlocks blocks) each refinement passes over
  // hundreds of blocks; there they run only where the best set found is slowed or slows a
  // running job, the estimate's blind spot. Elsewhere they ran in propose() and run again
  // in improve() whatever the best set (on small fabrics they find the locality and fit the
  // greedy fills miss, which the brute-force property test holds the search to).
  bool slowed_best() const {
    if (cands_.empty() || !cands_[0].measured) return false;
    const auto& bw = cands_[0].m.bandwidth;
    return bw.slowdown > 1 || bw.slowed > 0;
  }
  void refine() {
    if ((exacts_.empty() && wholes_.empty()) || !slowed_best()) return;
    for (const auto& e : exacts_) exact_fill(e.order, e.l, e.whole);
    for (const auto& [order, l] : wholes_) single_terms(*order, l);
    score();
  }

  // 4b. The estimates are averages; the measured bottleneck names the block (or pod) that
  // actually slows the best set. While it is slowed, propose sets without that block (or
  // that pod's uplinks) and measure them; then follow the best of those new sets the same
  // way, each round avoiding every bottleneck found so far, a few rounds. So a job walks
  // away from two or three loaded leaves in turn even where each set on the way is no better
  // than the first (the one that avoids them all can need L + 2 blocks or more).
  void repair() {
    std::set<std::uint32_t> excluded_blocks, excluded_tier2;
    if (cands_.empty()) return;
    Set probe = cands_[0].blocks;  // the set whose bottleneck the next round avoids
    for (int round = 0; round < kRepairs; ++round) {
      const auto at = std::find_if(cands_.begin(), cands_.end(),
                                   [&](const Candidate& x) { return x.blocks == probe; });
      if (at == cands_.end()) return;
      if (!at->measured) measure(*at);
      const auto& fc = at->m.bandwidth;
      if (fc.bottleneck == kNone || (fc.slowdown <= 1 && fc.slowed == 0)) return;
      const auto k = c_.link_block[fc.bottleneck];
      const auto t = c_.link_tier2[fc.bottleneck];
      if (k != kNone) {
        if (!excluded_blocks.insert(k).second) return;
      } else if (t != kNone) {
        if (!excluded_tier2.insert(t).second) return;
      } else {
        return;  // a host link or a link further up: no set of blocks avoids it
      }
      std::vector<Set> fresh;
      for (const auto& [comp, ks] : parts_) {
        std::vector<std::uint32_t> order;
        for (auto b : ks)
          if (!excluded_blocks.contains(b) && !excluded_tier2.contains(c_.block_tier2[b]))
            order.push_back(b);
        if (const auto L = fewest(order); L > 0)
          for (std::uint32_t l = L; l <= L + 1 && l <= order.size(); ++l) {
            auto set = fill(order, in_.cap, full_, rank_full_, b_.pod, pod_cost_, l, in_.G);
            if (!set.empty()) fresh.push_back(set);
            consider(std::move(set));
          }
      }
      if (fresh.empty()) return;
      score();
      // The best of this round's sets (proposed now or before), measured, is the next probe.
      const Candidate* next = nullptr;
      for (auto& c : cands_)
        if (std::find(fresh.begin(), fresh.end(), c.blocks) != fresh.end()) {
          if (!c.measured) measure(c);
          if (!next || better(c, *next)) next = &c;
        }
      probe = next->blocks;
      std::stable_sort(cands_.begin(), cands_.end(), better);
    }
  }

  // 4c. Local search on the measured objective: replace one block of the best set by another
  // (or drop it) while that lowers the score, within a budget of measured sets.
  void improve() {
    // Only where the estimates can mislead: some uplink is loaded or slow.
    if (!loaded_ || cands_.empty() || cands_[0].blocks.size() < 2) return;
    if (large_ && !slowed_best()) return;  // see refine()
    const std::size_t budget =
        std::min<std::size_t>(kImproveSets, kImproveHosts / std::max<std::uint32_t>(in_.N, 1));
    std::size_t spent = 0;
    std::map<std::uint32_t, std::vector<std::uint32_t>> cheapest;  // part -> its blocks
    for (bool better = true; better && spent < budget;) {
      better = false;
      const Set best = cands_[0].blocks;
      const double best_score = cands_[0].score;
      std::uint64_t total = 0;
      for (auto k : best) total += in_.cap[k];
      const auto comp = b_.component[best[0]];
      auto out = best;
      std::stable_sort(out.begin(), out.end(), [&](auto x, auto y) { return full_[x] > full_[y]; });
      // The part's blocks by estimate, cheapest first (ties: capacity order, as parts_).
      auto& in = cheapest[comp];
      if (in.empty()) {
        std::vector<char> member(b_.size(), 0);
        for (auto k : parts_[comp]) member[k] = 1;
        for (auto k : rank_full_.blocks)
          if (member[k]) in.push_back(k);
      }
      // Moves: drop one block and take one other (or none); then drop two and take one
      // (one block fewer). The first that lowers the score is kept.
      // A move: drop `d1` (and `d2` unless kNone), take `add` unless kNone. Most moves fail
      // the capacity or the seen test: those cost a few operations and no allocation.
      auto try_set = [&](std::uint32_t d1, std::uint32_t d2, std::uint32_t add) {
        std::uint64_t t = total - in_.cap[d1] - (d2 != kNone ? in_.cap[d2] : 0);
        if (add != kNone) {
          t += in_.cap[add];
          if (t < in_.G || std::binary_search(best.begin(), best.end(), add)) return false;
        } else if (t < in_.G) {
          return false;
        }
        Set next;
        next.reserve(best.size());
        for (auto x : best)
          if (x != d1 && x != d2) next.push_back(x);
        if (add != kNone) next.insert(std::lower_bound(next.begin(), next.end(), add), add);
        if (seen_.contains(next)) return false;
        consider(std::move(next));
        score();
        ++spent;
        return cands_[0].score < best_score - 1e-9 * std::max(1.0, std::abs(best_score));
      };
      for (std::size_t i = 0; i < out.size() && !better && spent < budget; ++i) {
        better = try_set(out[i], kNone, kNone);
        for (std::size_t j = 0; j < in.size() && !better && spent < budget; ++j)
          better = try_set(out[i], kNone, in[j]);
      }
      for (std::size_t i = 0; i < out.size() && !better && spent < budget; ++i)
        for (std::size_t i2 = i + 1; i2 < out.size() && !better && spent < budget; ++i2)
          for (std::size_t j = 0; j < in.size() && !better && spent < budget; ++j)
            better = try_set(out[i], out[i2], in[j]);
    }
  }

  // 5. The winner, its ring on the routes, and the runner-up.
  placement::Placement choose() {
    measure_top(job_.runner_up ? 2 : 1);
    auto ring = hosts_of(cands_[0].blocks);
    const std::span<const routes::Load> bg =
        traffic_ ? traffic_->load() : std::span<const routes::Load>{};
    placement::Placement p;
    if (job_.pp > 1 && cands_[0].blocks.size() > 1) {
      // Pipeline stages: the block orders that align stages to blocks, the layout that keeps
      // stage-to-stage pairs inside blocks, and the route-aware ring, each measured whole;
      // the lowest score wins (the first on ties).
      std::vector<std::vector<HostId>> rings;
      for (const auto& order : stage_orders(cands_[0].blocks)) rings.push_back(lay_out(order));
      if (auto columns = stage_columns(cands_[0].blocks); !columns.empty())
        rings.push_back(std::move(columns));
      if (c_.routes && c_.routes->kind() != routes::Kind::kAdaptive)
        rings.push_back(placement::route_aware_ring(b_, *c_.routes, ring, bg, in_.g, job_.salt));
      bool first = true;
      for (auto& r : rings) {
        auto q = placement::evaluate(c_, job_, states_, std::move(r), "fabric", traffic_);
        if (first || q.score < p.score - 1e-9 * std::max(1.0, std::abs(p.score))) p = std::move(q);
        first = false;
      }
    } else {
      // Route-aware boundaries where the measured ring is slowed or slows others (on a ring
      // that already runs at full speed and slows no one they cannot lower the objective),
      // for rings over at most kRouteAwareBlocks blocks (the search is quadratic in them).
      // It is kept only where it scores better. Not under adaptive routing: there the switches
      // steer each flow around the load, so which hosts face each other does not pick links.
      const auto& fc = cands_[0].m.bandwidth;
      const bool aware = c_.routes && c_.routes->kind() != routes::Kind::kAdaptive &&
                         cands_[0].blocks.size() > 1 &&
                         cands_[0].blocks.size() <= kRouteAwareBlocks &&
                         (fc.slowdown > 1 || fc.slowed > 0);
      std::vector<HostId> other;
      if (aware) other = placement::route_aware_ring(b_, *c_.routes, ring, bg, in_.g, job_.salt);
      p = placement::evaluate(c_, job_, states_, std::move(ring), "fabric", traffic_);
      if (aware && other != p.hosts) {
        auto q = placement::evaluate(c_, job_, states_, std::move(other), "fabric", traffic_);
        if (q.score < p.score - 1e-9 * std::max(1.0, std::abs(p.score))) p = std::move(q);
      }
    }
    if (job_.runner_up && cands_.size() > 1) {
      const auto r =
          placement::evaluate(c_, job_, states_, hosts_of(cands_[1].blocks), "fabric", traffic_);
      p.has_runner_up = true;
      p.runner_up_leaves = r.leaves;
      p.runner_up = r.measures;
      p.runner_up_score = r.score;
    }
    return p;
  }

  placement::Placement infeasible() const {
    placement::Placement p;
    p.policy = "fabric";
    p.reason = why_not(in_, job_, states_);
    return p;
  }

  // The order of blocks by capacity: descending, then index.
  bool capacity_first(std::uint32_t x, std::uint32_t y) const {
    return in_.cap[x] > in_.cap[y] || (in_.cap[x] == in_.cap[y] && x < y);
  }
  // Capacity descending, then index: a counting sort by capacity (a block holds at most a
  // leaf's hosts, so capacities are small) of the blocks in index order.
  void by_capacity(std::vector<std::uint32_t>& ks) const {
    std::uint32_t most = 0;
    for (auto k : ks) most = std::max(most, in_.cap[k]);
    if (most > 4 * ks.size() + 64) {  // wide capacities: a comparison sort
      std::sort(ks.begin(), ks.end(), [&](auto x, auto y) { return capacity_first(x, y); });
      return;
    }
    if (!std::is_sorted(ks.begin(), ks.end())) std::sort(ks.begin(), ks.end());
    std::vector<std::uint32_t> start(most + 2, 0);  // by capacity, descending
    for (auto k : ks) ++start[most - in_.cap[k] + 1];
    for (std::size_t c = 1; c < start.size(); ++c) start[c] += start[c - 1];
    std::vector<std::uint32_t> out(ks.size());
    for (auto k : ks) out[start[most - in_.cap[k]]++] = k;
    ks = std::move(out);
  }
  // Groups the first L blocks of `order` (capacity descending) hold.
  std::uint64_t reach(const std::vector<std::uint32_t>& order, std::uint32_t L) const {
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < order.size() && i < L; ++i) sum += in_.cap[order[i]];
    return sum;
  }
  // The fewest blocks of `order` (capacity descending) that hold the job; 0: none do.
  std::uint32_t fewest(const std::vector<std::uint32_t>& order) const {
    std::uint64_t sum = 0;
    for (std::uint32_t i = 0; i < order.size(); ++i)
      if ((sum += in_.cap[order[i]]) >= in_.G) return i + 1;
    return 0;
  }

  // Sets of L blocks of `order` (and of L + 1 where some uplink is loaded or slow: more,
  // smaller blocks can then avoid a loaded one).
  void fills(const std::vector<std::uint32_t>& order, std::uint32_t L, bool whole) {
    for (std::uint32_t l = L; l <= L + (loaded_ ? 1u : 0u) && l <= order.size(); ++l) {
      // On a large loaded fabric the knapsack and the single-term fills wait for refine()
      // (kept in the order they come, so that the knapsack's budget goes as it would).
      const bool later = large_ && loaded_;
      if (later)
        exacts_.push_back({order, l, whole});
      else
        exact_fill(order, l, whole);
      consider(fill(order, in_.cap, full_, rank_full_, b_.pod, pod_cost_, l, in_.G));
      // Each term alone (the whole part, small searches only, and only where the terms
      // differ): what a bandwidth-blind and a fit-blind choice would take.
      if (whole && loaded_ && order.size() * l <= kVariantBudget) {
        if (later)
          wholes_.emplace_back(&order, l);
        else
          single_terms(order, l);
      }
    }
  }

  void exact_fill(const std::vector<std::uint32_t>& order, std::uint32_t l, bool whole) {
    if (const std::size_t cells = exact_cells(order.size(), l, in_.G);
        (whole || !exact_whole_) && cells <= exact_budget_) {
      exact_budget_ -= cells;
      exact_whole_ = exact_whole_ || whole;
      consider(exact(order, in_.cap, full_, b_.pod, pod_cost_, l, in_.G));
    }
  }
  void single_terms(const std::vector<std::uint32_t>& order, std::uint32_t l) {
    if (rank_fit_.blocks.empty()) rank_fit_ = rank(fit_), rank_bw_ = rank(bw_);
    consider(fill(order, in_.cap, fit_, rank_fit_, b_.pod, pod_flat_, l, in_.G));
    consider(fill(order, in_.cap, bw_, rank_bw_, b_.pod, pod_cost_, l, in_.G));
  }
  struct Exact {  // a knapsack refine() may run: its scope and size
    std::vector<std::uint32_t> order;
    std::uint32_t l = 0;
    bool whole = false;
  };

  void consider(Set s) {
    if (s.empty() || !seen_.insert(s).second) return;
    cands_.push_back({std::move(s), {}, 0});
  }

  // A set's blocks in ring order: by pod, then index (placement::ring_order).
  Set ring_blocks(const Set& s) const {
    Set ring = s;
    std::stable_sort(ring.begin(), ring.end(),
                     [&](auto x, auto y) { return b_.pod[x] < b_.pod[y]; });
    return ring;
  }

  // Hosts of a set in ring order. One block takes what the others leave: a block that is not
  // wholly free if there is one (so no free block is broken into), the largest such (ties:
  // the last in fabric order); every other block gives all its groups. So what is left over
  // stays together in one block. Blocks by pod then index (placement::ring_order), usable
  // hosts by index inside each.
  std::vector<HostId> hosts_of(const Set& s) {
    takes(s);
    return lay_out(ring_blocks(s));
  }

  // The groups each block of a set gives (take_, valid for the set's blocks only).
  void takes(const Set& s) {
    if (take_.size() != b_.size()) take_.assign(b_.size(), 0);
    std::uint64_t total = 0;
    for (auto k : s) total += in_.cap[k];
    auto whole = [&](std::uint32_t k) { return in_.free_hosts[k] == b_.hosts[k].size(); };
    std::int64_t rest = -1;
    for (auto k : s) {
      // Every other block gives all it holds: the rest must still be at least one group.
      if (total - in_.cap[k] >= in_.G) continue;
      const auto r = static_cast<std::size_t>(rest);
      if (rest < 0 || (!whole(k) && whole(static_cast<std::uint32_t>(r))) ||
          (whole(k) == whole(static_cast<std::uint32_t>(r)) && in_.cap[k] >= in_.cap[r]))
        rest = k;
    }
    if (rest < 0) {
      // A set with a block to spare (never proposed): ascending capacity, largest the rest.
      Set by_cap = s;
      std::stable_sort(by_cap.begin(), by_cap.end(),
                       [&](auto x, auto y) { return in_.cap[x] < in_.cap[y]; });
      std::uint32_t need = in_.G;
      for (std::size_t i = 0; i < by_cap.size(); ++i) {
        const auto k = by_cap[i];
        const auto after = static_cast<std::uint32_t>(by_cap.size() - i - 1);
        take_[k] = i + 1 == by_cap.size() ? need : std::min(in_.cap[k], need - after);
        need -= take_[k];
      }
    } else {
      const auto r = static_cast<std::uint32_t>(rest);
      for (auto k : s) take_[k] = in_.cap[k];
      take_[r] = static_cast<std::uint32_t>(in_.G - (total - in_.cap[r]));
    }
  }

  // The hosts take_ gives each block, blocks in `order`, usable hosts by index in each.
  std::vector<HostId> lay_out(const std::vector<std::uint32_t>& order) {
    std::vector<HostId> hosts;
    hosts.reserve(in_.N);
    for (auto k : order) {
      const auto& usable = usable_of(k);
      const std::size_t want = std::min<std::size_t>(std::size_t{take_[k]} * in_.g, usable.size());
      hosts.insert(hosts.end(), usable.begin(), usable.begin() + static_cast<std::ptrdiff_t>(want));
    }
    return hosts;
  }
  // A block's usable hosts in index order, found the first time a layout needs them (a
  // decision lays out many sets over the same blocks).
  const std::vector<HostId>& usable_of(std::uint32_t k) {
    if (usable_of_.size() != b_.size()) {
      usable_of_.assign(b_.size(), {});
      usable_known_.assign(b_.size(), 0);
    }
    if (!usable_known_[k]) {
      usable_known_[k] = 1;
      for (HostId h : b_.hosts[k])
        if (in_.ok[idx(h)]) usable_of_[k].push_back(h);
    }
    return usable_of_[k];
  }

  // Pipeline stages: block orders that put stage boundaries on block boundaries. Blocks
  // whose hosts make whole stages come first (each then holds its stages alone); the
  // others follow as they are, or largest first. nullopt-free: always at least one order.
  std::vector<std::vector<std::uint32_t>> stage_orders(const Set& s) const {
    const std::uint32_t per = in_.N / job_.pp;
    const Set ring = ring_blocks(s);
    std::vector<std::uint32_t> whole, rest;
    for (auto k : ring) (take_[k] * in_.g % per == 0 ? whole : rest).push_back(k);
    std::vector<std::vector<std::uint32_t>> out{ring};
    auto a = whole;
    a.insert(a.end(), rest.begin(), rest.end());
    out.push_back(a);
    std::stable_sort(rest.begin(), rest.end(), [&](auto x, auto y) { return take_[x] > take_[y]; });
    auto b = whole;
    b.insert(b.end(), rest.begin(), rest.end());
    out.push_back(b);
    return out;
  }

  // Pipeline stages the other way round: node i of every stage in one block where it can
  // be, so that the stage-to-stage pairs (node i of stage s <-> node i of stage s + 1, the
  // pipeline's activations) stay inside blocks and only the stages' own rings cross them.
  // Each block's hosts, in ring order, are cut into columns of pp TP groups, one per stage
  // (what is left of each block joins a shared run, cut the same way); stage s is every
  // column's s-th group. Empty when the stages do not hold whole TP groups.
  std::vector<HostId> stage_columns(const Set& s) {
    const std::uint32_t pp = job_.pp, g = in_.g, per = in_.N / pp;
    if (pp < 2 || in_.N % pp != 0 || per % g != 0) return {};
    const Set ring = ring_blocks(s);
    const std::size_t column = std::size_t{g} * pp;
    std::vector<HostId> whole, rest;  // hosts in whole columns; the rest, block by block
    for (auto k : ring) {
      const auto hosts = lay_out({k});
      const std::size_t cut = hosts.size() / column * column;
      whole.insert(whole.end(), hosts.begin(), hosts.begin() + static_cast<std::ptrdiff_t>(cut));
      rest.insert(rest.end(), hosts.begin() + static_cast<std::ptrdiff_t>(cut), hosts.end());
    }
    whole.insert(whole.end(), rest.begin(), rest.end());
    if (whole.size() != in_.N) return {};
    std::vector<HostId> out;
    out.reserve(in_.N);
    for (std::uint32_t stage = 0; stage < pp; ++stage)
      for (std::size_t c = 0; c < whole.size(); c += column)
        for (std::uint32_t i = 0; i < g; ++i) out.push_back(whole[c + std::size_t{stage} * g + i]);
    return out;
  }

  const placement::Context& c_;
  const placement::Blocks& b_;
  const placement::Weights& w_;
  const placement::JobRequest& job_;
  const placement::NodeStates& states_;
  const placement::Traffic* traffic_;
  Input in_;
  std::vector<std::uint32_t> one_;
  std::map<std::uint32_t, std::vector<std::uint32_t>> parts_;  // component -> eligible blocks
  std::vector<double> full_, bw_, fit_, pod_cost_, pod_flat_;
  std::vector<Exact> exacts_;  // knapsacks waiting for refine()
  // The whole parts and sizes whose single-term fills wait for refine().
  std::vector<std::pair<const std::vector<std::uint32_t>*, std::uint32_t>> wholes_;
  Ranking rank_full_, rank_fit_, rank_bw_;  // rank(full_) ...
  std::vector<std::uint32_t> by_cap_;       // the blocks with capacity, capacity descending
  bool loaded_ = false;                     // some uplink is loaded or slower than a host link
  bool large_ = false;                      // more blocks than kRefineBlocks (refine())
  bool pods_loaded_ = false;                // some pod's links to the core are loaded, slow or thin
  std::vector<Candidate> cands_;
  std::unordered_set<Set, SetHash> seen_;
  std::size_t exact_budget_ = kExactBudget;
  bool exact_whole_ = false;
  std::vector<std::uint32_t> take_;  // per block: groups taken (hosts_of)
  std::vector<std::pair<HostId, HostId>> edges_;
  std::vector<std::pair<HostId, HostId>> stretch_;  // per block in ring order: first, last host
  placement::EdgeCache edge_cache_;                 // the inter-block edges routed so far
  std::size_t scored_ = 0;                          // candidates scored so far (bound or measured)
  std::vector<std::uint32_t> pods_;
  std::vector<std::vector<HostId>> usable_of_;  // usable_of(), per block
  std::vector<std::uint8_t> usable_known_;
};

}  // namespace

placement::Placement fabric_aware(const placement::Context& c, const placement::JobRequest& job,
                                  const placement::NodeStates& states,
                                  const placement::Traffic* traffic) {
  return Search(c, job, states, traffic).run();
}

}  // namespace fabricplace::policies
