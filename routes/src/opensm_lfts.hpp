// SPDX-License-Identifier: GPL-2.0-or-later
// The part opensm's minhop and updn engines share (opensm/osm_ucast_mgr.c, osm_switch.c,
// 3.3.23): the switch graph in opensm's terms and the LFT builder that turns hop counts into
// forwarding tables (docs/opensm-engines.md). Internal to routes/.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "fabricplace/routes/table.hpp"

namespace fabricplace::routes::osm {

/// No hop count: opensm's OSM_NO_PATH. Counts are kept in 32 bits (opensm's are 8) so a
/// pathological chain of switches cannot wrap.
inline constexpr std::uint32_t kNoHops = 0xFFFFFFFFu;

/// A linked port of a switch (a "slot"), in port-number order per switch.
struct Slot {
  PortNum num = 0;                  ///< its port number
  std::uint32_t peer = kNone;       ///< switch index at the other end (kNone: a CA or router)
  std::uint32_t peer_slot = kNone;  ///< the other end's slot (switches only)
  PortId port{kNone};               ///< this port
  PortId peer_port{kNone};          ///< the port at the other end
};

/// The switches and their linked ports. Switch index = position in f.switches() (ascending
/// GUID); opensm's own order is `key_order`.
struct Graph {
  explicit Graph(const Fabric& f);

  const Fabric& f;
  std::vector<NodeId> node;            ///< switch index -> node
  std::vector<std::uint32_t> of_node;  ///< node -> switch index (kNone: not a switch)
  std::vector<std::uint32_t> begin;    ///< CSR: slots of switch s are [begin[s], begin[s+1])
  std::vector<Slot> slots;
  /// Switch indices in opensm's GUID-keyed map order: ascending byte-swapped GUID.
  std::vector<std::uint32_t> key_order;
  /// Per switch: how many of its slots lead to a CA or router (opensm's endport_links).
  std::vector<std::uint32_t> end_links;

  [[nodiscard]] std::size_t size() const { return node.size(); }
  [[nodiscard]] std::span<const Slot> slots_of(std::uint32_t s) const {
    return {slots.data() + begin[s], slots.data() + begin[s + 1]};
  }
};

/// The hop counts towards one destination switch T, as opensm's matrix holds them for T's
/// LID: per slot, the count through that port; per switch, the least count (0 at T).
struct Row {
  std::vector<std::uint32_t> hops;   ///< per slot
  std::vector<std::uint32_t> least;  ///< per switch
};

/// Fills `row` for destination switch `t` (rows are sized by the caller).
using RowFn = std::function<void(std::uint32_t t, Row& row)>;

/// opensm's ucast_mgr_build_lfts with the default options: every switch's entry for every
/// end port, from the hop rows `row_of` gives. `source` names the model.
Result<Table> build_lfts(const Graph& g, const RowFn& row_of, std::string source);

/// Switch distances from `t` over switch-to-switch links (breadth-first); kNoHops where
/// unreachable. What opensm's minhop propagation converges to.
void distances_from(const Graph& g, std::uint32_t t, std::vector<std::uint32_t>& dist,
                    std::vector<std::uint32_t>& queue);

}  // namespace fabricplace::routes::osm
