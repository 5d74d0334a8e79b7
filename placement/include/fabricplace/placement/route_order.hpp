// Route-aware ring order: with the fabric's static routes known, choose which host of each
// leaf opens and which closes its stretch of the ring, so the ring's inter-leaf edges leave
// and enter leaves over distinct uplinks and avoid links other jobs already load.
//
// Contract
// - The ring keeps its blocks (leaves) in the same order, and each block's stretch keeps
//   the same hosts: only the order inside a stretch changes. So the leaves used, the
//   inter-leaf edges and which TP groups straddle leaves are exactly those of the input.
// - Inter-leaf edges are chosen one boundary at a time, in ring order, each minimising (the
//   most loaded link of its path after adding it, relative to capacity; then the load summed
//   over the path), counting the edges already chosen; ties keep the input order. The
//   first stretch's opening host is chosen last, with the closing edge.
// - `flows` holds the flows other jobs put on each directed link (fabric::DirLink); empty
//   means an idle fabric.
#pragma once

#include <span>
#include <vector>

#include "fabricplace/fabric/routes.hpp"
#include "fabricplace/placement/placement.hpp"

namespace fabricplace::placement {

std::vector<fabric::HostId> route_aware_ring(const Blocks& b, const fabric::Routes& routes,
                                             std::vector<fabric::HostId> ring,
                                             std::span<const std::uint32_t> flows);

}  // namespace fabricplace::placement
