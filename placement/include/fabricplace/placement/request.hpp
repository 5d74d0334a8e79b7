// SPDX-License-Identifier: GPL-2.0-or-later
// What a job asks for, and which hosts are free: the inputs of every placement policy.
#pragma once

#include <functional>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fabricplace/common/error.hpp"
#include "fabricplace/fabric/fabric.hpp"
#include "fabricplace/placement/job_shape.hpp"

namespace fabricplace::placement {

/// A job: its shape (job_shape.hpp: N nodes of G GPUs, TP groups of T GPUs, PP stages) and
/// the hosts it must not be placed on. Build the shape with JobShape::make(); a request
/// filled in member by member is checked with validate(), which applies the same rules.
struct JobRequest : JobShape {
  std::vector<fabric::HostId> exclude;  ///< never placed on (resolve_hosts)
  /// Tells this job's flows apart from other jobs' between the same hosts (ecmp hashes it;
  /// the simulator numbers its jobs).
  std::uint64_t salt = 0;
  /// The fabric policy also measures the runner-up (Placement::runner_up: --explain, --json).
  /// Callers that act on the choice alone (the plugin, the simulator) say false: it does not
  /// change the choice and saves a whole-ring evaluation.
  bool runner_up = true;
  /// Slurm's --segment (24.05+) for the slurm-block policy: the job is placed as groups of
  /// this many nodes, each inside one base block; 0 = no segment. Unset: the TP group's nodes
  /// when a group spans nodes (what the plugin asks Slurm 24.11 for, docs/slurm.md), else
  /// none. The other policies ignore it (`fabric` keeps its TP groups inside a block itself).
  std::optional<std::uint32_t> segment;
  /// The segment slurm-block places with: `segment`, else the TP group's nodes when a group
  /// spans nodes, else 0 (none).
  [[nodiscard]] std::uint32_t block_segment() const {
    return segment.value_or(group_nodes() > 1 ? group_nodes() : 0);
  }
};

/// A request of this shape, excluding no host.
inline JobRequest request(const JobShape& shape) {
  JobRequest r;
  static_cast<JobShape&>(r) = shape;
  return r;
}

/// JobShape::make()'s rules on a request filled in by hand (tp 0: gpus_per_node), worded for
/// `place`'s options ("--tp 12 with 8 GPUs per node: ...").
Result<void> validate(const JobRequest& job);

/// The state of one host as the scheduler sees it.
enum class HostState : std::uint8_t {
  kFree,     ///< idle: can be placed on
  kBusy,     ///< allocated, mixed, completing, reserved: taken now
  kDrained,  ///< drain, drng, maint
  kDown,     ///< down, fail, not responding, powered off, ...
  kUnknown,  ///< not reported
};
std::string_view to_string(HostState s);

/// One state per host of the fabric (indexed by HostId).
struct NodeStates {
  std::vector<HostState> state;
  std::vector<std::string> warnings;  ///< e.g. hosts the source reported but the fabric lacks

  [[nodiscard]] bool free(fabric::HostId h) const {
    return state[fabric::idx(h)] == HostState::kFree;
  }
  [[nodiscard]] std::size_t count(HostState s) const;
};

/// The hosts of a Slurm hostlist expression; kUsage errors name `what` ("--free") and the
/// hosts the fabric lacks.
Result<std::vector<fabric::HostId>> resolve_hosts(const fabric::Fabric& f, std::string_view expr,
                                                  std::string_view what);
/// The same over any name lookup (a Fabric, a HostMap): `find(name)` gives the host or
/// nothing.
Result<std::vector<fabric::HostId>> resolve_hosts(
    std::string_view expr, std::string_view what,
    const std::function<std::optional<fabric::HostId>(std::string_view)>& find);

/// Every host free.
NodeStates all_free(const fabric::Fabric& f);
/// Only these hosts free (a Slurm hostlist; empty: none); the others busy. Unknown hosts are
/// kUsage errors.
Result<NodeStates> free_hosts(const fabric::Fabric& f, std::string_view hostlist);
/// These hosts busy (empty: none); the others free.
Result<NodeStates> busy_hosts(const fabric::Fabric& f, std::string_view hostlist);
/// A JSON object host -> Slurm state ("idle", "alloc", "mix", "drain", "down*", ...).
/// Hosts of the fabric not named are kUnknown (with a warning); names not in the fabric
/// are warned about; an unknown state is a kUsage error naming the host.
Result<NodeStates> states_from_json(const fabric::Fabric& f, std::string_view text,
                                    const std::string& file);
/// The output of `sinfo -h -N -o '%N %t'` (one "host state" per line; a host may repeat,
/// once per partition).
Result<NodeStates> states_from_sinfo(const fabric::Fabric& f, std::string_view text,
                                     const std::string& source);
/// Maps a Slurm short state (sinfo %t, with its flag suffixes) to a HostState.
Result<HostState> parse_slurm_state(std::string_view s);

}  // namespace fabricplace::placement
