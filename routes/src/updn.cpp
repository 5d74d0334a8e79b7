// SPDX-License-Identifier: GPL-2.0-or-later
// opensm's updn engine (`-R updn`; osm_ucast_updn.c, 3.3.23) with no root or id files:
// roots found from the minhop hop matrix, ranks by distance from the roots, then a
// breadth-first search per switch that never steps up after stepping down; the LFTs are
// built from that matrix as minhop builds them (docs/opensm-engines.md).
#include <string>

#include "fabricplace/common/strings.hpp"
#include "opensm_lfts.hpp"

namespace fabricplace::routes {

namespace {

constexpr std::uint32_t kUnranked = 0xFFFFFFFFu;  // opensm's initial rank
constexpr std::size_t kPathHopsMax = 64;          // IB_SUBNET_PATH_HOPS_MAX

enum class Dir : std::uint8_t { kUp, kDown };

// updn_get_dir: the direction of a step from (rank, GUID) `cur` to `rem`.
Dir step_dir(std::uint32_t cur_rank, std::uint32_t rem_rank, std::uint64_t cur_id,
             std::uint64_t rem_id) {
  if (cur_rank == 0 && rem_rank == 0) return Dir::kUp;  // root to root
  if (cur_rank < rem_rank) return Dir::kDown;
  if (cur_rank > rem_rank) return Dir::kUp;
  return cur_id > rem_id ? Dir::kUp : Dir::kDown;  // equal ranks: the plain numeric GUID
}

// Roots (updn_find_root_nodes_by_min_hop), per subnet (connected part: each has its own
// SM): a switch is a root when, in the histogram of its CAs by least hops, exactly one bar
// is above 0.9 x the CAs of the subnet and exactly one above 0.05 x them. Returns the switch
// indices of the roots, ascending.
Result<std::vector<std::uint32_t>> find_roots(const osm::Graph& g) {
  const Fabric& f = g.f;
  const std::size_t n = g.size();
  const auto& comp = f.topology().node_component;
  std::vector<std::uint32_t> dist, queue;
  std::vector<std::uint32_t> hist(n * kPathHopsMax, 0);
  std::vector<std::uint64_t> cas_of_comp(f.topology().num_components, 0);
  for (std::uint32_t t = 0; t < n; ++t) {
    if (g.end_links[t] == 0) continue;
    cas_of_comp[comp[idx(g.node[t])]] += g.end_links[t];
    osm::distances_from(g, t, dist, queue);
    for (std::uint32_t s = 0; s < n; ++s)
      if (dist[s] < kPathHopsMax) hist[s * kPathHopsMax + dist[s]] += g.end_links[t];
  }
  std::vector<std::uint32_t> roots;
  std::vector<std::uint32_t> roots_of_comp(cas_of_comp.size(), 0);
  for (std::uint32_t s = 0; s < n; ++s) {
    const auto c = comp[idx(g.node[s])];
    const double thd1 = static_cast<double>(cas_of_comp[c]) * 0.9;
    const double thd2 = static_cast<double>(cas_of_comp[c]) * 0.05;
    int over1 = 0, over2 = 0;
    for (std::size_t h = 0; h < kPathHopsMax; ++h) {
      over1 += hist[s * kPathHopsMax + h] > thd1;
      over2 += hist[s * kPathHopsMax + h] > thd2;
    }
    if (over1 == 1 && over2 == 1) {
      roots.push_back(s);
      ++roots_of_comp[c];
    }
  }
  // A subnet with CAs and no root: opensm's updn fails there and opensm routes with minhop.
  // (A subnet without CAs has no SM and no end port to route to.)
  if (roots.empty()) {
    return fail(ErrorCode::kUnsupported,
                "opensm's updn engine finds no root switch in this fabric (no switch sees over "
                "90% of the CA ports at one distance and over 5% at no other; a fabric without "
                "CAs has none): opensm falls back to minhop");
  }
  for (std::uint32_t s = 0; s < n; ++s) {
    const auto c = comp[idx(g.node[s])];
    if (cas_of_comp[c] == 0 || roots_of_comp[c] != 0) continue;
    return fail(ErrorCode::kUnsupported,
                "opensm's updn engine finds no root switch among the " +
                    std::to_string(cas_of_comp[c]) + " CA ports of the part of the fabric around " +
                    f.topology().switch_name[idx(g.node[s])] +
                    " (no switch sees over 90% of them at one distance and over 5% at no "
                    "other): opensm falls back to minhop");
  }
  return roots;
}

}  // namespace

Result<std::vector<NodeId>> updn_roots(const Fabric& f) {
  const osm::Graph g(f);
  auto roots = find_roots(g);
  if (!roots) return std::unexpected(roots.error());
  std::vector<NodeId> out;
  for (const std::uint32_t s : *roots) out.push_back(g.node[s]);
  return out;
}

Result<Table> updn_routes(const Fabric& f) {
  const osm::Graph g(f);
  const std::size_t n = g.size();
  auto found = find_roots(g);
  if (!found) return std::unexpected(found.error());
  const auto roots = found->size();
  std::vector<std::uint32_t> rank(n, kUnranked);
  for (const std::uint32_t s : *found) rank[s] = 0;
  std::vector<std::uint32_t> queue;

  // Ranks (updn_subn_rank): breadth-first distance from the nearest root over
  // switch-to-switch links; switches no root reaches stay unranked.
  queue.clear();
  for (std::uint32_t s : g.key_order)
    if (rank[s] == 0) queue.push_back(s);
  for (std::size_t i = 0; i < queue.size(); ++i) {
    const std::uint32_t u = queue[i];
    for (const osm::Slot& q : g.slots_of(u)) {
      if (q.peer == kNone || rank[q.peer] <= rank[u] + 1) continue;
      rank[q.peer] = rank[u] + 1;
      queue.push_back(q.peer);
    }
  }
  std::vector<std::uint64_t> id(n);
  for (std::uint32_t s = 0; s < n; ++s) id[s] = f.node(g.node[s]).guid;

  // The hop rows (updn_bfs_by_node), copied step by step: a FIFO of switches, each with the
  // direction it was queued with; a dequeued switch offers its least count + 1 to each
  // neighbour's port facing it, unless that would be a step up after a step down.
  std::vector<Dir> dir(n, Dir::kUp);
  std::vector<std::uint8_t> queued(n, 0);
  std::vector<std::uint32_t> fifo;
  const auto row = [&](std::uint32_t t, osm::Row& r) {
    std::fill(r.hops.begin(), r.hops.end(), osm::kNoHops);  // osm_switch_clear_hops
    std::fill(r.least.begin(), r.least.end(), osm::kNoHops);
    r.least[t] = 0;
    dir[t] = Dir::kUp;
    fifo.assign(1, t);
    for (std::size_t i = 0; i < fifo.size(); ++i) {
      const std::uint32_t u = fifo[i];
      queued[u] = 0;
      const Dir cur = dir[u];
      for (const osm::Slot& q : g.slots_of(u)) {
        if (q.peer == kNone) continue;
        const std::uint32_t rem = q.peer;
        const Dir next = step_dir(rank[u], rank[rem], id[u], id[rem]);
        if (cur == Dir::kDown && next == Dir::kUp) continue;
        const std::uint32_t offer = r.least[u] + 1;
        if (offer >= r.hops[q.peer_slot]) continue;
        r.hops[q.peer_slot] = offer;
        if (offer < r.least[rem]) r.least[rem] = offer;
        if (!queued[rem]) {
          dir[rem] = next;
          queued[rem] = 1;
          fifo.push_back(rem);
        }
      }
    }
  };
  return osm::build_lfts(g, row,
                         "opensm's updn engine, modelled; " + std::to_string(roots) +
                             " root switch" + (roots == 1 ? "" : "es"));
}

}  // namespace fabricplace::routes
