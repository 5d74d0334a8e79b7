// SPDX-License-Identifier: GPL-2.0-or-later
// Synthetic fabrics from short spec strings, in the spirit of hwloc's synthetic topologies:
//
//   fat2:leaves=8,down=20,up=20,speed=HDR          2-level fat-tree
//   fat2:leaves=20,down=32,up=8                     4:1 oversubscribed
//   fat3:pods=4,leaves=8,down=16,up=16,spines=16    3-level (leaves, spines per pod)
//   rail:sus=4,hosts=20,rails=8                     rail-optimised multi-rail
//   ...,degrade=leaf01:21:w=1                       a degraded link (repeatable)
//   ...,cut=leaf01:21                               a link that is down (repeatable)
//
// Every key, its meaning and its default are in docs/synthetic-specs.md (and spec_help()).
// Naming follows real fabrics: hosts node%0Wd (W = max(3, digits of the host count)),
// numbered leaf by leaf; HCAs "nodeNNN mlx5_K"; switches "MF0;leaf01:MQM8700/U1".
// GUIDs and port numbers are assigned exactly as ibsim assigns them when it loads the net
// file that `fabric export --format ibsim-net` writes for the fabric, so a generated fabric,
// its ibsim twin and the discovery of that twin all agree.
#pragma once

#include <string>
#include <string_view>

#include "fabricplace/common/error.hpp"
#include "fabricplace/fabric/fabric.hpp"

namespace fabricplace::fabric {

/// True when `s` looks like a spec ("fat2:", "fat3:", "rail:" prefix), not a file name.
bool looks_like_spec(std::string_view s);
/// Builds the fabric a spec describes. Errors use file "spec" and name the key at fault.
Result<Fabric> generate(std::string_view spec);
/// One line per kind and key, with defaults.
std::string spec_help();

}  // namespace fabricplace::fabric
