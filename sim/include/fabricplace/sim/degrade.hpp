// SPDX-License-Identifier: GPL-2.0-or-later
// Seeded link faults for what-if runs: the same fabric with some switch-to-switch links
// degraded (trained at 1x width), as a discovery would find them. The placement policies
// see them through the fabric's link health, the simulator through the links' capacity.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fabricplace/common/error.hpp"
#include "fabricplace/fabric/fabric.hpp"

namespace fabricplace::sim {

struct Degraded {
  fabric::Fabric fabric;
  std::vector<std::string> links;  ///< "leaf03[22] <-> spine02[11]", in choice order
};

/// `count` distinct switch-to-switch links chosen with a seeded mt19937_64 (the same seed
/// gives the same links on every platform), each set to 1x width at its speed.
Result<Degraded> degrade_random_links(const fabric::Fabric& f, std::uint32_t count,
                                      std::uint64_t seed);

}  // namespace fabricplace::sim
