// SPDX-License-Identifier: GPL-2.0-or-later
// What `fabricplace fabric show` prints: the classification of a fabric, for humans (text)
// and for tools (JSON, documented in docs/fabric-json.md#show).
#pragma once

#include <string>
#include <vector>

#include "fabricplace/fabric/fabric.hpp"

namespace fabricplace::fabric {

/// Hosts whose traffic crosses a link: the hosts below its lower end.
std::vector<HostId> hosts_behind(const Fabric& fabric, LinkId link);
/// Hosts below a node: a CA's own host, or every host under a switch (walking down levels).
std::vector<HostId> hosts_below(const Fabric& fabric, NodeId node);

/// A tier's name from the levels it joins: "host-leaf", "leaf-spine", "spine-core",
/// "leaf-router".
std::string tier_name(int lower, int upper);

std::string show_text(const Fabric& fabric);
std::string show_json(const Fabric& fabric);

}  // namespace fabricplace::fabric
