// SPDX-License-Identifier: GPL-2.0-or-later
// The job's shape: nodes, GPUs per node, the tensor-parallel (TP) and expert-parallel (EP)
// group sizes in GPUs, pipeline stages and ranks per node, and what follows from them (the
// group a placement keeps together, its hosts, groups per host, ranks per TP group).
// docs/placement.md, "Job shape".
//
// Contract
// - JobShape::make() is the one builder, and first_broken_rule() the one statement of the
//   rules; `place`, `rankfile`, the SPANK plugin, the trace readers and the simulator all
//   build their shapes through them. make() returns a kUsage Error that names the rule broken
//   and its numbers, worded with the options the caller's user typed (ShapeNames).
// - `--tp` counts GPUs everywhere. A TP group of T GPUs on nodes of G GPUs sits inside one
//   node when T <= G (G must then be a multiple of T) and spans T / G whole nodes when T > G
//   (T must then be a multiple of G); the job's N x G GPUs must be a multiple of T, and of
//   T x PP with pipeline stages of N / PP whole nodes.
// - Ranks: with K ranks per node each rank drives G / K GPUs, and a TP group is T x K / G
//   ranks. When that is below one rank (K ranks each holding whole groups: G a multiple of
//   T x K) a TP group is one rank; when it is not whole otherwise, the shape is refused.
// - `--ep` counts GPUs too: an expert-parallel group of E GPUs is E consecutive GPUs in rank
//   order whose MoE all-to-all runs among them. The same node rules as T hold for E, one of
//   T and E divides the other (groups nest), and N x G must be a multiple of E x PP. The
//   group a placement keeps inside one zone (a leaf, a rail group, an NVLink domain) is the
//   larger of the two: group_gpus() = max(T, E).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "fabricplace/common/error.hpp"

namespace fabricplace::placement {

/// The most ranks per node a shape (and a rank file) may have.
inline constexpr std::uint32_t kMaxRanksPerNode = 4096;

/// A shape's numbers as given: a command line, a plugin option, a trace row.
struct ShapeSpec {
  /// Nodes (hosts). None: not known yet (a submission whose node count Slurm decides): the
  /// rules that need it are not checked, and the shape has nodes 0.
  std::optional<std::uint32_t> nodes = std::nullopt;
  std::uint32_t gpus_per_node = 8;
  std::optional<std::uint32_t> tp = std::nullopt;  ///< GPUs per TP group; none: G (a node each)
  std::optional<std::uint32_t> ep = std::nullopt;  ///< GPUs per EP group; none: no EP groups
  std::uint32_t pp = 1;                            ///< pipeline stages
  std::optional<std::uint32_t> ranks_per_node = std::nullopt;  ///< none: G (one rank per GPU)
};

/// How make()'s messages name the inputs: the options (or settings) the user typed.
struct ShapeNames {
  std::string_view nodes = "--nodes";
  std::string_view gpus_per_node = "--gpus-per-node";
  std::string_view tp = "--tp";
  std::string_view ep = "--ep";
  std::string_view pp = "--pp";
  std::string_view ranks_per_node = "--tasks-per-node";
  std::string_view ranks = "tasks";  ///< what a rank is called, plural ("tasks per node")
};

/// The rules, in the order make() checks them.
enum class ShapeRule : std::uint8_t {
  kOk,
  kNoNodes,          ///< nodes 0
  kNoGpus,           ///< gpus_per_node 0
  kNoTp,             ///< tp given as 0
  kNoPp,             ///< pp 0
  kNoRanks,          ///< ranks_per_node given as 0
  kTooManyRanks,     ///< ranks_per_node above kMaxRanksPerNode
  kTpPartialNodes,   ///< T > G and T not a multiple of G
  kTpSplitsNode,     ///< T <= G and G not a multiple of T
  kTpDoesNotTile,    ///< N x G not a multiple of T
  kPpDoesNotTile,    ///< N x G not a multiple of T x PP
  kPpSplitsNodes,    ///< N not a multiple of PP
  kTpNotWholeRanks,  ///< T x K / G not whole, and a rank does not hold whole groups
  kNoEp,             ///< ep given as 0
  kEpPartialNodes,   ///< E > G and E not a multiple of G
  kEpSplitsNode,     ///< E <= G and G not a multiple of E
  kEpNotNested,      ///< neither of T and E divides the other
  kEpDoesNotTile,    ///< N x G not a multiple of E (x PP)
  kEpNotWholeRanks,  ///< E x K / G not whole, and a rank does not hold whole EP groups
};

/// The first rule `spec` breaks (kOk: none). Allocates nothing: the trace readers try
/// candidate TP sizes with it.
ShapeRule first_broken_rule(const ShapeSpec& spec);

/// A job's shape. Built by make(), which resolves every default (tp and ranks_per_node are
/// then never 0). The members stay public and writable so that a JobRequest (a JobShape and
/// the hosts it excludes) reads as before (`job.nodes`, `job.tp`); a shape filled in by hand
/// is checked with make() too (placement::validate).
struct JobShape {
  std::uint32_t nodes = 0;           ///< hosts; 0 only when built without a node count
  std::uint32_t gpus_per_node = 8;   ///< G
  std::uint32_t tp = 0;              ///< T, GPUs per TP group; 0 = gpus_per_node
  std::uint32_t ep = 0;              ///< E, GPUs per EP group; 0 = no EP groups
  std::uint32_t pp = 1;              ///< pipeline stages (stages follow rank order)
  std::uint32_t ranks_per_node = 0;  ///< K; 0 = gpus_per_node (one rank per GPU)

  /// The one builder: checks every rule (first_broken_rule's order) and says which failed,
  /// with the numbers, in `names`' words ("--tp 16 does not tile the job: 3 nodes x 8 GPUs
  /// per node = 24 GPUs, not a multiple of 16"). kUsage errors.
  static Result<JobShape> make(const ShapeSpec& spec, const ShapeNames& names = {});

  /// T: GPUs per TP group.
  [[nodiscard]] std::uint32_t tp_size() const { return tp ? tp : gpus_per_node; }
  /// The group a placement keeps inside one zone: max(T, E) GPUs (the EP group when it is
  /// the larger, else the TP group).
  [[nodiscard]] std::uint32_t group_gpus() const { return ep > tp_size() ? ep : tp_size(); }
  /// Hosts per group (group_gpus()): its GPUs / G when a group spans nodes, else 1.
  [[nodiscard]] std::uint32_t hosts_per_group() const {
    return group_gpus() > gpus_per_node ? group_gpus() / gpus_per_node : 1;
  }
  /// The same (the name the policies use).
  [[nodiscard]] std::uint32_t group_nodes() const { return hosts_per_group(); }
  /// Groups (group_gpus()) per host: G / their GPUs when a group fits in a node, else 1 (a
  /// host is in one group).
  [[nodiscard]] std::uint32_t groups_per_host() const {
    return group_gpus() < gpus_per_node ? gpus_per_node / group_gpus() : 1;
  }
  /// Groups of hosts a placement must keep whole: nodes / hosts_per_group().
  [[nodiscard]] std::uint32_t groups() const { return nodes / group_nodes(); }
  /// K: ranks per node.
  [[nodiscard]] std::uint32_t ranks_per_host() const {
    return ranks_per_node ? ranks_per_node : gpus_per_node;
  }
  /// Ranks per TP group in rank order: T x K / G, or 1 when a rank holds whole groups.
  [[nodiscard]] std::uint32_t ranks_per_group() const {
    const std::uint64_t tk = std::uint64_t{tp_size()} * ranks_per_host();
    return tk <= gpus_per_node ? 1u : static_cast<std::uint32_t>(tk / gpus_per_node);
  }
  /// Ranks per EP group in rank order: E x K / G, or 1 when a rank holds whole EP groups;
  /// 0 without EP groups.
  [[nodiscard]] std::uint32_t ranks_per_ep_group() const {
    if (!ep) return 0;
    const std::uint64_t ek = std::uint64_t{ep} * ranks_per_host();
    return ek <= gpus_per_node ? 1u : static_cast<std::uint32_t>(ek / gpus_per_node);
  }
  /// N x G.
  [[nodiscard]] std::uint64_t gpus() const { return std::uint64_t{nodes} * gpus_per_node; }

  /// The spec that builds this shape again (what validate() checks a hand-made shape by).
  [[nodiscard]] ShapeSpec spec() const;
};

}  // namespace fabricplace::placement
