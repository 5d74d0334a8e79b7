// `fabricplace fabric watch`: one discovery against the accepted fabric (docs/operations.md).
//
// Each run compares the fabric now with the last accepted one (`fabric diff`), says every
// change on its own line, and says what a diff of two snapshots cannot see:
//   - a link that went down and came back up between two runs (its LinkDownedCounter rose,
//     read with --counters): "flapped";
//   - a link that changed state (removed, added, degraded, recovered) two or more times
//     within the last `flap_runs` runs: "flapping".
// The state between runs (run count, recent link events) is a small JSON file beside the
// accepted fabric.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fabricplace/common/error.hpp"
#include "fabricplace/fabric/diff.hpp"
#include "fabricplace/fabric/fabric.hpp"

namespace fabricplace::ops {

struct WatchState {
  std::uint64_t runs = 0;  ///< runs so far (this one included, once stepped)
  struct Event {
    std::uint64_t run = 0;
    std::string link;  ///< fabric::link_name / FabricDiff's link text
    std::string what;  ///< removed, added, degraded, recovered, flapped
  };
  std::vector<Event> events;  ///< of the last flap window, oldest first
};

/// The state file; a missing file is a fresh state. Errors name the file and what was
/// expected.
Result<WatchState> read_watch_state(const std::string& path);
std::string to_json(const WatchState& st);

struct WatchStep {
  fabric::FabricDiff diff;
  std::vector<std::string> changes;  ///< one line per change (fabric diff's lines)
  std::vector<std::string> flaps;    ///< "flapped ..." and "flapping ..." lines
  std::uint64_t change_count = 0;    ///< changes + flaps
  std::uint64_t flapping_links = 0;  ///< links in `flaps` (one may be both flapped and flapping)
};

/// One run: `now` against `accepted` (nullptr on the first run: nothing to compare). Adds
/// this run's link events to `st` (runs + 1) and forgets those older than `flap_runs` runs.
WatchStep watch_step(const fabric::Fabric* accepted, const fabric::Fabric& now, WatchState& st,
                     unsigned flap_runs);

/// `now` with the links `accepted` had that are down now marked lost (and earlier marks
/// carried), for sources that do not mark them (re-imported dumps; live discovery does it
/// itself with --previous).
Result<fabric::Fabric> with_lost_links(const fabric::Fabric& now, const fabric::Fabric& accepted);

}  // namespace fabricplace::ops
