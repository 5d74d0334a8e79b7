// SPDX-License-Identifier: GPL-2.0-or-later
// The fabric's health as Prometheus metrics, in the text format node_exporter's textfile
// collector reads (docs/metrics.md): links degraded (width, speed), links with error
// counters over their thresholds, links lost since the accepted fabric, oversubscription per
// leaf, switch and pod, and, from `fabric watch`, the last discovery's time and duration and
// the changes it saw.
//
// Port series carry `guid` and `port` labelled as the InfiniBand exporters label theirs
// (treydock/infiniband_exporter's infiniband_switch_port_*{guid,port}: the port GUID as
// ibnetdiscover prints it, "0x" and 16 lower-case hex digits, the port number in decimal),
// so that PromQL joins them: `... * on(guid, port) group_left(node) fabricplace_port_degraded`.
// No sample has a timestamp (the textfile collector drops a file that has one), each family
// has one HELP and one TYPE line, and series are sorted: the same fabric gives the same
// bytes. `promtool check metrics` passes every file the tests write.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "fabricplace/fabric/fabric.hpp"

namespace fabricplace::fabric {

/// What a caller measured around the fabric (fabric watch); absent values are not written.
struct MetricsRun {
  std::optional<double> discovery_time;      ///< Unix time the discovery ended (seconds)
  std::optional<double> discovery_duration;  ///< its length (seconds)
  std::optional<std::uint64_t> changes;  ///< changes `fabric diff` saw against the accepted fabric
  std::optional<std::uint64_t> runs;     ///< discoveries since the watch started
  std::optional<bool> accepted;          ///< whether this discovery became the accepted fabric
  std::optional<std::uint64_t> flapping;  ///< links that flapped or keep changing (watch)
};

/// The metrics text of `fabric` (and `run`).
std::string to_prometheus(const Fabric& fabric, const MetricsRun& run = {});

/// A GUID as the InfiniBand exporters label it: "0x" and 16 lower-case hex digits.
std::string guid_label(Guid guid);

}  // namespace fabricplace::fabric
