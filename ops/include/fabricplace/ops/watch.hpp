// SPDX-License-Identifier: GPL-2.0-or-later
// `fabricplace fabric watch`: one discovery against the accepted fabric (docs/operations.md).
//
// Each run compares the fabric now with the last accepted one (`fabric diff`), says every
// change on its own line, and says what a diff of two snapshots cannot see:
//   - a link that went down and came back up between two runs (its LinkDownedCounter rose,
//     read with --counters): "flapped";
//   - a link that changed state (removed, added, degraded, recovered) two or more times
//     within the last `flap_runs` runs: "flapping".
// The state between runs (run count, recent link events) is a small JSON file beside the
// accepted fabric, in a directory reached without following links and locked for the run
// (WatchDir).
//
// Cost: linear in the links of the two fabrics and in the events kept (each link's events are
// counted once, through a hash map), whatever changed; a link keeps at most kEventsPerLink
// events.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fabricplace/common/error.hpp"
#include "fabricplace/common/owned_dir.hpp"
#include "fabricplace/fabric/diff.hpp"
#include "fabricplace/fabric/fabric.hpp"

namespace fabricplace::ops {

/// The events a link keeps in the state: its newest ones; older ones are dropped (and counted,
/// WatchState::dropped) however large the flap window.
inline constexpr std::size_t kEventsPerLink = 16;
/// The largest state file: what WatchDir reads (or limits().input_bytes when lower) and the
/// most a run writes (the oldest events go first). About a million events: 16 for each of
/// 60,000 links, or the 32,768 of a 16,384-host re-cabling at each of 35 runs; read in about
/// 2 s (docs/performance.md, "fabric watch").
inline constexpr std::uint64_t kMaxStateBytes = std::uint64_t{64} << 20;
/// The largest run count (and dropped count) a state holds: a run a second for 31 million
/// years; far from overflowing when a window is added to it.
inline constexpr std::uint64_t kMaxRuns = 1'000'000'000'000'000;
/// The longest link text a state file may hold (two port names, each a node description and
/// a port).
inline constexpr std::size_t kMaxLinkTextBytes = 2048;

struct WatchState {
  std::uint64_t runs = 0;  ///< runs so far (this one included, once stepped)
  struct Event {
    std::uint64_t run = 0;
    std::string link;  ///< fabric::link_name / FabricDiff's link text
    std::string what;  ///< removed, added, degraded, recovered, flapped
  };
  std::vector<Event> events;  ///< of the last flap window, oldest first; kEventsPerLink per link
  /// Links whose oldest events in the window were dropped by kEventsPerLink: how many, and
  /// the run of the newest dropped (the entry goes when that run leaves the window).
  struct Dropped {
    std::string link;
    std::uint64_t count = 0;
    std::uint64_t last_run = 0;
  };
  std::vector<Dropped> dropped;
};

/// The state file's text (`file` for messages), read as JSON events, three levels deep at
/// most: memory in proportion to what it accepts, whatever its nesting. Errors name the file,
/// the line and what was expected.
Result<WatchState> read_watch_state(std::string_view text, const std::string& file);
std::string to_json(const WatchState& st);

struct WatchStep {
  fabric::FabricDiff diff;
  std::vector<std::string> changes;  ///< one line per change (fabric diff's lines)
  std::vector<std::string> flaps;    ///< "flapped ..." and "flapping ..." lines
  std::uint64_t change_count = 0;    ///< changes + flaps
  std::uint64_t flapping_links = 0;  ///< links in `flaps` (one may be both flapped and flapping)
};

/// One run: `now` against `accepted` (nullptr on the first run: nothing to compare). Adds
/// this run's link events to `st` (runs + 1), forgets those older than `flap_runs` runs and
/// keeps each link's newest kEventsPerLink.
WatchStep watch_step(const fabric::Fabric* accepted, const fabric::Fabric& now, WatchState& st,
                     unsigned flap_runs);

/// `now` with the links `accepted` had that are down now marked lost (and earlier marks
/// carried), for sources that do not mark them (re-imported dumps; live discovery does it
/// itself with --previous).
Result<fabric::Fabric> with_lost_links(const fabric::Fabric& now, const fabric::Fabric& accepted);

/// The watch's directory (--state): an OwnedDir (never reached through a link; created when
/// missing), locked for as long as this object lives, so that two runs on one state take
/// turns. Its files, by name: accepted.json (the last accepted fabric), watch.json (the
/// state), lock. A link at accepted.json or watch.json is not followed: it is read as no file
/// (said in notes()) and replaced when the run writes.
class WatchDir {
 public:
  /// How long a run waits for another run's lock before giving up.
  static constexpr int kLockWaitSeconds = 60;
  static Result<WatchDir> open(const std::string& path, int wait_s = kLockWaitSeconds);

  /// watch.json; none (or a link): a fresh state.
  [[nodiscard]] Result<WatchState> read_state() const;
  /// accepted.json; none (or a link): nullptr, a first run.
  [[nodiscard]] Result<std::unique_ptr<fabric::Fabric>> read_accepted() const;
  /// Writes `st`; when its file would be larger than read_state() accepts (kMaxStateBytes),
  /// its oldest events are dropped first (counted in `st.dropped`).
  [[nodiscard]] Result<void> write_state(WatchState& st) const;
  [[nodiscard]] Result<void> write_accepted(const fabric::Fabric& f) const;

  [[nodiscard]] const std::string& path() const { return dir_.path(); }
  /// What open() found worth saying (a link where a state file belongs).
  [[nodiscard]] const std::vector<std::string>& notes() const { return notes_; }

 private:
  WatchDir(OwnedDir dir, OwnedDir::Lock lock) : dir_(std::move(dir)), lock_(std::move(lock)) {}
  OwnedDir dir_;
  OwnedDir::Lock lock_;
  std::vector<std::string> notes_;
};

}  // namespace fabricplace::ops
