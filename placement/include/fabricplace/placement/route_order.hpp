// SPDX-License-Identifier: GPL-2.0-or-later
// Route-aware ring order: with the fabric's static routes known, choose which host of each
// leaf opens and which closes its stretch of the ring, so the ring's inter-leaf edges leave
// and enter leaves over distinct uplinks and avoid links other jobs already load.
//
// Contract
// - The ring keeps its blocks (leaves) in the same cyclic order, or takes them in the
//   opposite direction when that is strictly better and splits no more TP groups (of
//   `group_nodes` consecutive hosts); each block's stretch keeps the same hosts, only their
//   order inside it changes. So the leaves used and the inter-leaf edge count are those of
//   the input.
// - Inter-leaf edges are chosen one boundary at a time, in ring order, each minimising (the
//   most loaded link of its path after adding it, relative to capacity; then the load summed
//   over the path), counting the edges already chosen; ties keep the input order. The
//   first stretch's opening host is chosen last, with the closing edge. The input ring is
//   itself a candidate and wins ties, so the result is never worse than the input by that
//   measure (the ring's most loaded inter-leaf link, then its load summed).
// - `load` holds the load other jobs put on each directed link (routes::DirLink, in
//   routes::Load units); empty means an idle fabric. Each candidate edge's load comes from
//   the route model in force (routes::Model), with `salt` the job's flow salt.
#pragma once

#include <span>
#include <vector>

#include "fabricplace/placement/placement.hpp"
#include "fabricplace/routes/model.hpp"

namespace fabricplace::placement {

std::vector<fabric::HostId> route_aware_ring(const Blocks& b, const routes::Model& routes,
                                             std::vector<fabric::HostId> ring,
                                             std::span<const routes::Load> load,
                                             std::uint32_t group_nodes = 1, std::uint64_t salt = 0);

}  // namespace fabricplace::placement
