// SPDX-License-Identifier: GPL-2.0-or-later
// Placements for people and programs: the text of `fabricplace place`, its --explain and
// --compare forms, and the JSON document (docs/placement.md, "Output").
#pragma once

#include <string>
#include <vector>

#include "fabricplace/placement/placement.hpp"

namespace fabricplace::placement {

/// The hosts of a ring, segment by segment: "leaf02 node[033-052] -> leaf03 node[053-072]".
std::string ring_text(const Context& c, const std::vector<fabric::HostId>& ranked);

std::string placement_text(const Context& c, const JobRequest& job, const Placement& p,
                           bool explain);
std::string placement_json(const Context& c, const JobRequest& job, const Placement& p);
/// Several policies' placements of one request, side by side.
std::string compare_text(const Context& c, const JobRequest& job, const std::vector<Placement>& ps);
/// {"policy", "feasible", "reason" (of `selected`, the --policy one), "job", "placements"}.
std::string compare_json(const Context& c, const JobRequest& job, const std::vector<Placement>& ps,
                         const Placement& selected);

}  // namespace fabricplace::placement
