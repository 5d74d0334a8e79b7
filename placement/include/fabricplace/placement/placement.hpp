// A placement: the hosts chosen for a job, in rank order, with its TP groups and the
// measures every policy is judged by (docs/placement.md).
//
// Contract
// - A Context is prepared once per fabric and weights; deciding a placement reads it only,
//   so one Context serves any number of decisions, from several threads.
// - evaluate() measures any ranked host set the same way, whoever chose it, so policies
//   compare on equal terms (`place --compare`, the simulator).
// - An infeasible placement is a result, not an error: `feasible` false and `reason` saying
//   exactly what is missing.
#pragma once

#include <limits>
#include <span>
#include <string>
#include <vector>

#include "fabricplace/fabric/fabric.hpp"
#include "fabricplace/fabric/slurm_tree.hpp"
#include "fabricplace/placement/request.hpp"

namespace fabricplace::placement {

/// The weights of the score and of the uplink quality (etc/fabricplace/policy.conf).
struct Weights {
  // Score terms (lower is better), per unit of each measure.
  double leaves = 1000;           ///< per leaf (block) used
  double pods = 500;              ///< per pod used
  double ring_crossings = 10;     ///< per ring edge between two leaves
  double uplink = 1;              ///< per unit of uplink penalty (criterion 4)
  double leftover = 1;            ///< per free host left behind in the leaves used (best fit)
  double tp_split = 10000;        ///< per TP group spanning leaves (baselines only)
  double unhealthy_host = 10000;  ///< per host on a degraded or unhealthy host link
  // Uplink quality of a leaf: what one ring edge crossing its uplinks pays.
  double oversubscription = 20;  ///< per unit of oversubscription above 1:1
  double degraded_uplink = 40;   ///< per uplink below nominal width or speed
  double unhealthy_uplink = 60;  ///< per uplink with error counters past their thresholds
  double lost_uplink = 40;       ///< per uplink lost since the previous discovery
};

/// Parses a policy config ("name = value" lines, '#' comments); names not given keep their
/// defaults. Errors name the file, the line and what was expected.
Result<Weights> parse_weights(std::string_view text, const std::string& file);

/// The uplink penalty of a leaf with no uplink at all: it cannot take part in a placement
/// that spans leaves.
inline constexpr double kNoUplink = 1e6;

/// The unit a TP group must not leave: a leaf, or on rail-optimised fabrics a rail group
/// (scalable unit, one leaf per rail), exactly the leaves of the topology.conf export.
struct Blocks {
  std::vector<std::uint32_t> of_host;              ///< per host: block index, fabric::kNone if none
  std::vector<std::vector<fabric::HostId>> hosts;  ///< per block: its hosts, index order
  std::vector<std::string> name;                   ///< as in topology.conf
  std::vector<std::uint32_t> pod;        ///< per block: its spine group (Slurm tree parent)
  std::vector<std::uint32_t> component;  ///< per block: connected part of the fabric
  std::vector<std::vector<fabric::NodeId>> leaves;  ///< per block: its leaf switches
  [[nodiscard]] std::size_t size() const { return name.size(); }
};

/// Everything a decision reads, prepared once per fabric.
struct Context {
  const fabric::Fabric* fabric = nullptr;
  fabric::SlurmTree tree;
  Blocks blocks;
  Weights weights;
  /// Per block: the uplink penalty one ring edge pays for leaving or entering it
  /// (docs/placement.md, criterion 4); kNoUplink when it has no uplink.
  std::vector<double> uplink;
  /// Per block: why its uplinks are penalised ("4.41:1 oversubscribed, 1 degraded uplink").
  std::vector<std::string> uplink_why;
  /// Per host: its own links are sound (not degraded, not unhealthy, none lost, every rail).
  std::vector<std::uint8_t> healthy;
};
Context prepare(const fabric::Fabric& f, const Weights& w = {});

/// The measures of a placement, for every policy alike (docs/placement.md).
struct Measures {
  std::uint32_t leaves = 0;           ///< blocks used (leaves; rail groups on rail fabrics)
  std::uint32_t pods = 0;             ///< pods used
  std::uint32_t ring_inter_leaf = 0;  ///< ring edges (rank i -> i+1, wrapping) between blocks
  std::uint32_t ring_inter_pod = 0;   ///< ring edges between pods (spine-to-core crossings)
  std::uint32_t tp_groups_split = 0;  ///< TP groups spanning more than one block
  double uplink_penalty = 0;          ///< sum over inter-block ring edges of both ends' uplink
  std::uint32_t leftover = 0;         ///< free hosts left behind in the blocks used
  std::uint32_t unhealthy_hosts = 0;  ///< hosts on degraded, unhealthy or lost host links
};

struct Placement {
  std::string policy;
  bool feasible = false;
  std::string reason;                 ///< why not, when not feasible
  std::vector<fabric::HostId> hosts;  ///< in rank (ring) order
  /// Hosts of each TP group, in rank order; a TP group smaller than a node appears once
  /// per group (gpus_per_node / tp entries per host).
  std::vector<std::vector<fabric::HostId>> tp_groups;
  std::vector<std::string> leaves;  ///< blocks used, in ring order (topology.conf names)
  Measures measures;
  double score = 0;  ///< weighted sum of the measures (lower is better)

  /// The runner-up the policy considered (fabric policy only): its leaves and measures.
  bool has_runner_up = false;
  std::vector<std::string> runner_up_leaves;
  Measures runner_up;
  double runner_up_score = 0;
};

/// What a ring measures on the blocks: the ring is the hosts in rank order, rank i's host to
/// rank i + 1's, wrapping. The one count of leaves, pods, inter-leaf and inter-pod edges and
/// split TP groups, for evaluate(), rank layouts (`rankfile`, the plugin), route-aware rings
/// and the simulator.
struct RingMeasures {
  /// Blocks in order of first appearance; fabric::kNone stands for hosts in no block.
  std::vector<std::uint32_t> blocks;
  std::uint32_t leaves = 0;      ///< blocks used (kNone not counted)
  std::uint32_t pods = 0;        ///< pods of the blocks used
  std::uint32_t inter_leaf = 0;  ///< edges between two blocks (a host in no block included)
  std::uint32_t inter_pod = 0;   ///< edges between blocks of two pods
  /// Runs of `group_nodes` consecutive hosts (the last may be short) spanning blocks.
  std::uint32_t tp_groups_split = 0;
  /// With `uplink` given (per block): the sum over edges between two blocks of both ends'.
  double uplink_penalty = 0;
};
RingMeasures measure_ring(const Blocks& b, std::span<const fabric::HostId> ring,
                          std::uint32_t group_nodes, std::span<const double> uplink = {});

/// Hosts a job may use: free, not excluded and (when `healthy_only`) on sound host links.
std::vector<std::uint8_t> usable_hosts(const Context& c, const JobRequest& job,
                                       const NodeStates& states, bool healthy_only);

/// Measures a ranked host set and fills tp_groups, leaves, measures and score (feasible).
Placement evaluate(const Context& c, const JobRequest& job, const NodeStates& states,
                   std::vector<fabric::HostId> ranked, std::string policy);
double score_of(const Weights& w, const Measures& m);

/// The fabric-aware ring order: blocks contiguous, ordered by pod then block index; hosts in
/// index order inside a block. A ring over L > 1 blocks then has exactly L inter-block edges
/// and TP groups (consecutive group_nodes() hosts) never leave a block that holds whole
/// groups.
std::vector<fabric::HostId> ring_order(const Blocks& b, std::vector<fabric::HostId> hosts);

}  // namespace fabricplace::placement
