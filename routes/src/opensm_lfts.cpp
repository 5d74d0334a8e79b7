// SPDX-License-Identifier: GPL-2.0-or-later
// opensm's LFT builder (ucast_mgr_build_lfts, osm_switch_recommend_path; 3.3.23) for the
// default options, modelled step by step (docs/opensm-engines.md, "The common part").
#include "opensm_lfts.hpp"

#include <algorithm>

namespace fabricplace::routes::osm {

using fabric::kNoLink;
using fabric::NodeType;

Graph::Graph(const Fabric& fab) : f(fab), of_node(fab.num_nodes(), kNone) {
  node.assign(f.switches().begin(), f.switches().end());
  for (std::uint32_t s = 0; s < node.size(); ++s) of_node[idx(node[s])] = s;
  std::vector<std::uint32_t> slot_of_port(f.num_ports(), kNone);
  begin.push_back(0);
  end_links.assign(node.size(), 0);
  for (std::uint32_t s = 0; s < node.size(); ++s) {
    for (const auto& p : f.ports_of(node[s])) {
      if (p.link == kNoLink) continue;
      const PortId pid{static_cast<std::uint32_t>(&p - f.ports().data())};
      Slot slot;
      slot.num = p.rec.number;
      slot.port = pid;
      slot.peer_port = f.peer_port(pid);
      const NodeId r = f.port(slot.peer_port).node;
      if (f.node(r).type == NodeType::kSwitch) {
        slot.peer = of_node[idx(r)];
      } else {
        ++end_links[s];
      }
      slot_of_port[idx(pid)] = static_cast<std::uint32_t>(slots.size());
      slots.push_back(slot);
    }
    begin.push_back(static_cast<std::uint32_t>(slots.size()));
  }
  for (auto& slot : slots) {
    if (slot.peer != kNone) slot.peer_slot = slot_of_port[idx(slot.peer_port)];
  }
  key_order.resize(node.size());
  for (std::uint32_t s = 0; s < node.size(); ++s) key_order[s] = s;
  // cl_qmap keys are network-order GUIDs compared as host (little-endian) integers.
  std::sort(key_order.begin(), key_order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return __builtin_bswap64(f.node(node[a]).guid) < __builtin_bswap64(f.node(node[b]).guid);
  });
}

void distances_from(const Graph& g, std::uint32_t t, std::vector<std::uint32_t>& dist,
                    std::vector<std::uint32_t>& queue) {
  dist.assign(g.size(), kNoHops);
  queue.clear();
  dist[t] = 0;
  queue.push_back(t);
  for (std::size_t i = 0; i < queue.size(); ++i) {
    const std::uint32_t u = queue[i];
    for (const Slot& q : g.slots_of(u)) {
      if (q.peer == kNone || dist[q.peer] != kNoHops) continue;
      dist[q.peer] = dist[u] + 1;
      queue.push_back(q.peer);
    }
  }
}

Result<Table> build_lfts(const Graph& g, const RowFn& row_of, std::string source) {
  const Fabric& f = g.f;
  auto table = Table::empty_for(f, std::move(source));
  if (!table) return table;
  const Ends& ends = table->ends();

  // Destination order (sort_ports_by_switch_load): switches in key order, stably sorted by
  // the number of ports to CAs, most first (glibc's qsort is a merge sort); the CAs of each,
  // in port order. Switch LIDs and CAs not cabled to a switch come after and never count.
  std::vector<std::uint32_t> order = g.key_order;
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return g.end_links[a] > g.end_links[b];
  });

  // One path counter per (switch, port), zeroed once (osm_switch_prepare_path_rebuild). Only
  // a switch's own routes touch its counters, so walking the destinations switch group by
  // switch group for all switches at once gives each switch its own sequence unchanged.
  std::vector<std::uint32_t> counter(g.slots.size(), 0);
  Row row;
  row.hops.assign(g.slots.size(), kNoHops);
  row.least.assign(g.size(), kNoHops);
  std::vector<std::uint32_t> cas, cand;

  // The entries of a batch of destination switches wait here (per destination switch, per
  // switch, its CAs' ports; 0: none) and go to the switch-major table switch by switch:
  // written destination by destination, each entry would land on another switch's row.
  constexpr std::size_t kBatch = 32;
  const std::size_t n = g.size();
  std::vector<PortNum> picks;
  std::vector<std::uint32_t> batch_ends;                   // the batch's CAs' end ports
  std::vector<std::pair<std::size_t, std::size_t>> batch;  // per destination: first CA, CAs
  const auto flush = [&] {
    for (std::uint32_t s = 0; s < n; ++s) {
      const std::span<PortNum> entries = table->row(g.node[s]);
      for (const auto& [first, count] : batch) {
        const PortNum* p = picks.data() + first * n + s * count;
        for (std::size_t k = 0; k < count; ++k)
          if (p[k] != 0 && batch_ends[first + k] != kNone) entries[batch_ends[first + k]] = p[k];
      }
    }
    batch.clear();
    batch_ends.clear();
  };
  for (const std::uint32_t t : order) {
    if (g.end_links[t] == 0) break;  // sorted: no switch after this one has a CA
    cas.clear();
    for (std::uint32_t q = g.begin[t]; q < g.begin[t + 1]; ++q) {
      if (g.slots[q].peer != kNone) continue;
      cas.push_back(q);
    }
    const std::size_t first = batch_ends.size();
    for (const std::uint32_t c : cas) batch_ends.push_back(ends.of_port(g.slots[c].peer_port));
    batch.emplace_back(first, cas.size());
    picks.resize(batch_ends.size() * n);
    PortNum* const out = picks.data() + first * n;  // [switch][CA]
    std::fill(out, out + cas.size() * n, PortNum{0});
    row_of(t, row);
    for (std::uint32_t s = 0; s < n; ++s) {
      PortNum* const to = out + std::size_t{s} * cas.size();
      if (s == t) {  // the CA is cabled to this switch: that port, counted
        for (std::size_t k = 0; k < cas.size(); ++k) {
          ++counter[cas[k]];
          to[k] = g.slots[cas[k]].num;
        }
        continue;
      }
      const std::uint32_t least = row.least[s];
      if (least == kNoHops) continue;  // unreachable: no entry
      // Candidates: ports 1..N-1 in ascending order whose count to T is the least (a port
      // with a count has a peer switch; every slot is linked).
      cand.clear();
      for (std::uint32_t q = g.begin[s]; q < g.begin[s + 1]; ++q)
        if (row.hops[q] == least) cand.push_back(q);
      if (cand.empty()) continue;
      // Each CA in turn takes the candidate with the fewest paths so far, the first (lowest
      // port) on a tie (the comparison is strict), and adds one to it. Those picks run level
      // by level: at level L every candidate that had at most L paths has exactly L, and they
      // are taken in port order (each then has L + 1, so none is taken twice in a level); so
      // one scan of the candidates per level gives opensm's picks in its order, where a scan
      // per CA did before.
      std::uint32_t level = counter[cand.front()];
      for (const std::uint32_t q : cand) level = std::min(level, counter[q]);
      std::size_t k = 0;
      while (k < cas.size()) {
        for (const std::uint32_t q : cand) {
          if (counter[q] != level) continue;
          ++counter[q];
          to[k] = g.slots[q].num;
          if (++k == cas.size()) break;
        }
        ++level;
      }
    }
    if (batch.size() == kBatch) flush();
  }
  flush();
  return table;
}

}  // namespace fabricplace::routes::osm
