// SPDX-License-Identifier: GPL-2.0-or-later
// slurm-tree: Slurm 22.05's topology/tree node selection (select/cons_tres, job_test.c,
// _eval_nodes_topo with _topo_choose_best_switch, _topo_compare_switches and _topo_add_dist;
// switch tables from topology_tree.c), for whole-node jobs of equal node weight and no
// required nodes, run on the one-parent tree our topology.conf export writes; and Slurm
// 24.11's (topology/tree/eval_nodes_tree.c, the same steps moved into the topology plugin)
// with its two changes, marked "24.11" below.
//
// What Slurm does, step by step (docs/placement.md, "The slurm-tree baseline"):
//  1. cnt[s] = usable nodes under switch s. The top switch is the LAST switch in file order
//     among those of the highest level that hold the job (the code keeps a switch whose
//     level is >= the current top's). None: the job waits.
//  2. Every switch is restricted to the nodes under the top switch; counts recomputed.
//  3. Repeatedly, over the leaves in file order, keep the best: the nearest (sum of hop
//     distances to the leaves chosen so far), unless a farther leaf compares better; at
//     equal distance the one that compares better. Comparing leaves i and j: if both hold
//     the remaining nodes, the smaller; if one does, that one; if neither, climb both to their
//     parents while the parents differ and compare there; finally the larger count, then the
//     lower level. Take the chosen leaf's nodes in index order; add its distances.
//  4. Ranks follow node index order (no SwitchAsNodeRank).
// Node index order is slurm.conf order; we take it to be natural name order (node2 before
// node10), which is how our exports and the test cluster list nodes.
// Slurm's quirks are kept: a switch that no other switch lists has parent 0 (its table is
// xcalloc'ed and only listings set `parent`), and parents' counts are not reduced as their
// leaves are used.
#include <algorithm>
#include <string>

#include "fabricplace/common/hostlist.hpp"
#include "fabricplace/policies/policies.hpp"

namespace fabricplace::policies {
namespace {

using fabric::HostId;
using fabric::idx;

// _topo_compare_switches: > 0 when switch i is the better choice, < 0 when j is. `i_fit_out`
// (24.11): whether the last switch compared on i's side holds the rest.
int compare_switches(const SlurmTables& t, const std::vector<std::uint32_t>& cnt, std::uint32_t rem,
                     std::uint32_t i, std::uint32_t j, bool* i_fit_out = nullptr) {
  // Slurm's climb has no bound; parent-0 roots could make it cycle on forests of unequal
  // depth, so stop after as many steps as there are switches.
  for (std::uint32_t steps = 0; steps <= t.n; ++steps) {
    const bool i_fit = cnt[i] >= rem, j_fit = cnt[j] >= rem;
    if (i_fit_out) *i_fit_out = i_fit;
    if (i_fit && j_fit) {
      if (cnt[i] < cnt[j]) return 1;
      if (cnt[i] > cnt[j]) return -1;
      break;
    }
    if (i_fit) return 1;
    if (j_fit) return -1;
    if ((t.parent[i] != i || t.parent[j] != j) && t.parent[i] != t.parent[j]) {
      i = t.parent[i];
      j = t.parent[j];
      continue;
    }
    break;
  }
  if (cnt[i] > cnt[j]) return 1;
  if (cnt[i] < cnt[j]) return -1;
  if (t.level[i] < t.level[j]) return 1;
  if (t.level[i] > t.level[j]) return -1;
  return 0;
}

}  // namespace

SlurmTables slurm_tables(const fabric::SlurmTree& tree) {
  SlurmTables t;
  t.n = static_cast<std::uint32_t>(tree.switches.size());
  t.level.assign(t.n, -1);
  t.parent.assign(t.n, 0);  // xcalloc: unlisted switches keep parent 0
  t.children.resize(t.n);
  for (std::uint32_t s = 0; s < t.n; ++s) {
    const auto& sw = tree.switches[s];
    if (sw.level == 1) t.level[s] = 0;
    t.children[s] = sw.children;
    for (auto c : sw.children) t.parent[c] = s;  // the last listing wins
  }
  // Levels: a switch with Nodes= is 0, others one above their highest child.
  for (bool changed = true; changed;) {
    changed = false;
    for (std::uint32_t s = 0; s < t.n; ++s) {
      if (t.level[s] == 0 || t.children[s].empty()) continue;
      int lv = -1;
      bool all = true;
      for (auto c : t.children[s]) {
        if (t.level[c] < 0) all = false;
        lv = std::max(lv, t.level[c] + 1);
      }
      if (all && lv != t.level[s]) t.level[s] = lv, changed = true;
    }
  }
  // Hop distances over the Switches= edges. topology_tree.c runs Floyd-Warshall; on an
  // unweighted graph a breadth-first search from every switch gives the same numbers in
  // O(n (n + e)) instead of O(n^3) (a 16,384-host fabric has 529 Slurm switches).
  constexpr auto kInf = SlurmTables::kInfinite;
  std::vector<std::vector<std::uint32_t>> adj(t.n);
  for (std::uint32_t s = 0; s < t.n; ++s)
    for (auto c : t.children[s]) {
      adj[s].push_back(c);
      adj[c].push_back(s);
    }
  t.dist.assign(std::size_t{t.n} * t.n, kInf);
  std::vector<std::uint32_t> queue;
  for (std::uint32_t src = 0; src < t.n; ++src) {
    auto* row = &t.dist[std::size_t{src} * t.n];
    row[src] = 0;
    queue.assign(1, src);
    for (std::size_t q = 0; q < queue.size(); ++q)
      for (auto nb : adj[queue[q]])
        if (row[nb] == kInf) {
          row[nb] = row[queue[q]] + 1;
          queue.push_back(nb);
        }
  }
  return t;
}

placement::Placement slurm_tree(const placement::Context& c, const SlurmTables& t,
                                const placement::JobRequest& job,
                                const placement::NodeStates& states,
                                const placement::Traffic* traffic, SlurmSeries series) {
  const bool v2411 = series == SlurmSeries::k2411;
  constexpr auto kInf = SlurmTables::kInfinite;
  const auto& tree = c.tree;
  const auto ok = placement::usable_hosts(c, job, states, /*healthy_only=*/false);
  const std::uint32_t n = t.n, N = job.nodes;

  // Usable nodes under each switch: leaves directly, upper switches through their children
  // (in level order, so children are counted first).
  std::vector<std::uint32_t> cnt(n, 0);
  std::vector<std::uint32_t> by_level(n);
  for (std::uint32_t s = 0; s < n; ++s) by_level[s] = s;
  std::stable_sort(by_level.begin(), by_level.end(),
                   [&](auto a, auto b) { return t.level[a] < t.level[b]; });
  auto count_up = [&] {
    for (auto s : by_level)
      if (t.level[s] > 0) {
        cnt[s] = 0;
        for (auto ch : t.children[s]) cnt[s] += cnt[ch];
      }
  };
  for (std::uint32_t s = 0; s < n; ++s)
    if (t.level[s] == 0)
      for (HostId h : tree.switches[s].hosts) cnt[s] += ok[idx(h)] ? 1 : 0;
  count_up();

  // 1. The top switch.
  std::int64_t top = -1;
  for (std::uint32_t s = 0; s < n; ++s)
    if (cnt[s] >= N && (top < 0 || t.level[s] >= t.level[static_cast<std::uint32_t>(top)])) top = s;
  if (top < 0) {
    std::uint32_t best = 0;
    for (std::uint32_t s = 0; s < n; ++s) best = std::max(best, cnt[s]);
    placement::Placement p;
    p.policy = "slurm-tree";
    p.reason = "no switch has " + std::to_string(N) +
               " free, not excluded nodes under it (the most is " + std::to_string(best) +
               "); Slurm would leave the job pending";
    return p;
  }
  // 2. Restrict every switch to the nodes under the top switch.
  const auto topu = static_cast<std::uint32_t>(top);
  // Slurm ANDs every switch's node bitmap with the top's: in a tree, a leaf keeps its nodes
  // exactly when the top switch is the leaf or one of its ancestors.
  for (std::uint32_t s = 0; s < n; ++s) {
    if (t.level[s] != 0) continue;
    bool under = false;
    for (std::uint32_t a = s; a != fabric::kNone && !under; a = tree.switches[a].parent)
      under = a == topu;
    if (!under) cnt[s] = 0;
  }
  count_up();

  // 3. Leaves, best first, until the job is whole.
  std::vector<std::uint32_t> dist(n, 0);
  std::vector<HostId> chosen;
  std::uint32_t rem = N;
  while (rem > 0) {
    std::int64_t best = -1;
    for (std::uint32_t i = 0; i < n; ++i) {
      if (t.level[i] != 0) continue;
      if (best < 0 || dist[i] == kInf || cnt[i] == 0) {
        if (cnt[i] && dist[i] < kInf) best = i;
        continue;
      }
      const auto b = static_cast<std::uint32_t>(best);
      bool i_fit = false;
      const int tcs = compare_switches(t, cnt, rem, i, b, &i_fit);
      const bool nearer = v2411 ? i_fit : tcs >= 0;  // 24.11: nearer and holding the rest
      if ((dist[i] < dist[b] && nearer) || (dist[i] == dist[b] && tcs > 0)) best = i;
    }
    if (best < 0) break;
    const auto b = static_cast<std::uint32_t>(best);
    for (std::uint32_t i = 0; i < n; ++i)
      dist[i] = (dist[i] == kInf || t.d(b, i) == kInf) ? kInf : dist[i] + t.d(b, i);
    for (HostId h : tree.switches[b].hosts) {
      if (rem == 0) break;
      if (!ok[idx(h)]) continue;
      chosen.push_back(h);
      --rem;
    }
    if (v2411)  // _decrement_node_cnt: the leaf and every switch above it lose its count
      for (auto a = b, used = cnt[b]; a != fabric::kNone; a = tree.switches[a].parent)
        cnt[a] = cnt[a] <= used ? 0 : cnt[a] - used;
    cnt[b] = 0;
  }
  if (rem > 0) {
    placement::Placement p;
    p.policy = "slurm-tree";
    p.reason = "the leaves under " + tree.switches[topu].name + " ran out after " +
               std::to_string(N - rem) + " of " + std::to_string(N) + " nodes";
    return p;
  }
  // 4. Ranks in node index order.
  std::sort(chosen.begin(), chosen.end(), [](HostId a, HostId b) { return idx(a) < idx(b); });
  return placement::evaluate(c, job, states, std::move(chosen), "slurm-tree", traffic);
}

}  // namespace fabricplace::policies
