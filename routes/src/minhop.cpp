// SPDX-License-Identifier: GPL-2.0-or-later
// opensm's minhop engine (`-R minhop`; osm_ucast_mgr.c, 3.3.23): least hops, then the port
// with the fewest routes so far (docs/opensm-engines.md).
#include "opensm_lfts.hpp"

namespace fabricplace::routes {

Result<Table> minhop_routes(const Fabric& f) {
  const osm::Graph g(f);
  // opensm relaxes hop counts until nothing changes (osm_ucast_mgr_build_lid_matrices); the
  // fixed point is the plain distance: through a port to switch R, 1 + dist(R, T).
  std::vector<std::uint32_t> dist, queue;
  const auto row = [&](std::uint32_t t, osm::Row& r) {
    osm::distances_from(g, t, dist, queue);
    for (std::uint32_t s = 0; s < g.size(); ++s) {
      r.least[s] = dist[s];
      for (std::uint32_t q = g.begin[s]; q < g.begin[s + 1]; ++q) {
        const auto peer = g.slots[q].peer;
        // A cable from a switch to itself carries no hop count (ucast_mgr_process_neighbors).
        r.hops[q] = peer == kNone || peer == s || dist[peer] == osm::kNoHops ? osm::kNoHops
                                                                             : dist[peer] + 1;
      }
    }
  };
  return osm::build_lfts(g, row, "opensm's minhop engine, modelled");
}

}  // namespace fabricplace::routes
