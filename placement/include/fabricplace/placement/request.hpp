// What a job asks for, and which hosts are free: the inputs of every placement policy.
#pragma once

#include <functional>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fabricplace/common/error.hpp"
#include "fabricplace/fabric/fabric.hpp"

namespace fabricplace::placement {

/// A job: N nodes of G GPUs, tensor-parallel groups of T GPUs (optionally PP stages).
///
/// A TP group spans T/G nodes when T > G (T must then be a multiple of G) and sits inside
/// one node when T <= G (G must then be a multiple of T, so groups do not straddle nodes).
/// T must tile the job: the node count must be a multiple of the nodes per group. Without
/// --tp, T = G: every node is its own group.
struct JobRequest {
  std::uint32_t nodes = 0;
  std::uint32_t gpus_per_node = 8;
  std::uint32_t tp = 0;  ///< 0 = gpus_per_node
  std::uint32_t pp = 1;  ///< pipeline stages (informational: stages follow rank order)
  std::vector<fabric::HostId> exclude;  ///< never placed on (resolve_hosts)
  /// Tells this job's flows apart from other jobs' between the same hosts (ecmp hashes it;
  /// the simulator numbers its jobs).
  std::uint64_t salt = 0;

  [[nodiscard]] std::uint32_t tp_size() const { return tp ? tp : gpus_per_node; }
  /// Nodes per TP group (1 when the group fits in a node).
  [[nodiscard]] std::uint32_t group_nodes() const {
    return tp_size() > gpus_per_node ? tp_size() / gpus_per_node : 1;
  }
  [[nodiscard]] std::uint32_t groups() const { return nodes / group_nodes(); }
};

/// kUsage errors for requests that cannot tile ("--tp 12 with 8 GPUs per node: ...").
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
