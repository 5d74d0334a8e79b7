// SPDX-License-Identifier: GPL-2.0-or-later
// Link health beyond rates: port error counters judged against thresholds, and links lost
// since a previous discovery. Degraded rates are part of classification (fabric.hpp).
//
// Thresholds come from a small config file (etc/fabricplace/health.conf):
//
//   # counter name (as perfquery prints it) = the highest value that is still healthy
//   LinkDownedCounter = 0
//   SymbolErrorCounter = 100
//
// A counter above its threshold is a problem of that port, and so of its link. Counters
// without a threshold are read and kept but not judged.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fabricplace/common/error.hpp"
#include "fabricplace/fabric/builder.hpp"
#include "fabricplace/fabric/fabric.hpp"

namespace fabricplace::fabric {

struct HealthThresholds {
  /// Per counter: the highest healthy value; nullopt = not judged.
  std::array<std::optional<std::uint64_t>, kNumCounters> max{};

  /// The built-in defaults, the same as etc/fabricplace/health.conf.
  static HealthThresholds defaults();
};

/// Parses a thresholds file. Errors name file, line and what was expected. Counters not
/// named in the file keep no threshold (the file replaces the defaults as a whole).
Result<HealthThresholds> parse_health_config(std::string_view text, const std::string& file);
/// The same from a file (read bounded, as every input): --health-config of `fabric discover`
/// and `fabric watch`.
Result<HealthThresholds> load_health_config(const std::string& path);

/// The problems of one port's counters ("LinkDownedCounter 3 > 0"), in counter order.
std::vector<std::string> judge(const std::array<std::uint64_t, kNumCounters>& counters,
                               const HealthThresholds& thresholds);

/// Marks, in `builder`, every port that was linked in `previous` and is present but not
/// linked now: a lost link (a cable out, a port disabled, the host at the other end powered
/// off). The old peer need not be present. Ports `previous` already marked as lost stay marked
/// while they stay down. Returns how many ports were marked or kept.
std::size_t note_lost_links(FabricBuilder& builder, const Fabric& previous);

}  // namespace fabricplace::fabric
