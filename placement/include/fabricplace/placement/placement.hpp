// SPDX-License-Identifier: GPL-2.0-or-later
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
#include "fabricplace/placement/traffic.hpp"

namespace fabricplace::placement {

/// The weights of the objective (etc/fabricplace/policy.conf, docs/placement.md "The
/// objective"). One unit of cost: one node of a job communicating at double time is 1000.
struct Weights {
  // Bandwidth, per node and unit of predicted communication slowdown above 1.
  double slowdown = 1000;    ///< the job's own (its ring's worst link share)
  double contention = 1000;  ///< what its flows add to the running jobs sharing its links
  // Locality, what decides when bandwidth ties (an idle, non-blocking fabric).
  double leaves = 100;         ///< per block (leaf, rail group) used
  double pods = 50;            ///< per pod used
  double ring_crossings = 10;  ///< per ring edge between two blocks
  // Fragmentation.
  double leftover = 1;      ///< per free host left behind in the blocks used (best fit)
  double fresh_block = 20;  ///< per wholly free block the job breaks into without filling it
  // What only the baselines can do (a host on a bad host link enters through that link's
  // capacity, as every link does).
  double tp_split = 10000;  ///< per TP group spanning blocks
  /// Not a weight: the fraction of its rate a link whose error counters passed their
  /// thresholds counts at (0 < x <= 1). A bad link enters only through its capacity.
  double unhealthy_capacity = 0.5;
};

/// Parses a policy config ("name = value" lines, '#' comments); names not given keep their
/// defaults. Errors name the file, the line and what was expected.
Result<Weights> parse_weights(std::string_view text, const std::string& file);

/// The slowdown a ring is counted at when one of its edges has no route at all (a leaf
/// without uplinks, separate parts of the fabric): it would not run.
inline constexpr double kNoRoute = 1000;

/// The unit a TP (EP) group must not leave: a leaf, or on rail-optimised fabrics a rail group
/// (scalable unit, one leaf per rail), exactly the leaves of the topology.conf export; on a
/// fabric with NVLink domains, each domain (and, per leaf block, its hosts in no domain):
/// prepare() documents how.
struct Blocks {
  std::vector<std::uint32_t> of_host;  ///< per host: block index, fabric::kNone if none
  /// Per block: its hosts, index order (a domain's: leaf block by leaf block, index order in
  /// each).
  std::vector<std::vector<fabric::HostId>> hosts;
  std::vector<std::string> name;         ///< as in topology.conf; a domain's name
  std::vector<std::uint32_t> pod;        ///< per block: its spine group (Slurm tree parent)
  std::vector<std::uint32_t> component;  ///< per block: connected part of the fabric
  std::vector<std::vector<fabric::NodeId>> leaves;  ///< per block: its leaf switches
  /// What every block is (a leaf's hosts, a rail group, an NVLink domain): how messages name
  /// them (fabric::block_noun).
  fabric::BlockKind kind = fabric::BlockKind::kLeaf;
  [[nodiscard]] std::size_t size() const { return name.size(); }
};

/// Everything a decision reads, prepared once per fabric, weights and route model.
struct Context {
  const fabric::Fabric* fabric = nullptr;
  fabric::SlurmTree tree;
  Blocks blocks;
  Weights weights;
  /// The route model in force (nullptr: bandwidth is not measured, every ring counts at
  /// s = 1; only for tests of the other measures).
  const routes::Model* routes = nullptr;
  Capacity capacity;
  /// Per block: the directed links between its leaves and the switches above them, leaving
  /// (up) and entering (down); empty when the block has no uplink (it then cannot take part
  /// in a placement that spans blocks).
  std::vector<std::vector<routes::DirLink>> block_up, block_down;
  /// Per block: index into tier2_up / tier2_down, its pod's links to the tier above the
  /// pod (3-level fabrics), kNone when there is no such tier.
  std::vector<std::uint32_t> block_tier2;
  std::vector<std::vector<routes::DirLink>> tier2_up, tier2_down;
  /// Per directed link: the block whose uplinks it is (block_up / block_down), and the
  /// tier-2 group whose links it is (tier2_up / tier2_down); kNone for other links.
  std::vector<std::uint32_t> link_block, link_tier2;
  /// Per block: what is wrong with its uplinks, for --explain ("4.41:1 oversubscribed,
  /// 1 degraded uplink"; "no uplink").
  std::vector<std::string> uplink_why;
  /// Per block: its degraded, unhealthy and lost uplinks (what breaks a tie between sets).
  std::vector<std::uint32_t> uplink_faults;
  /// Per pod (Blocks::pod): how thin its links to the tier above are, its leaves' uplink
  /// bandwidth over its own uplink bandwidth, at least 1 (1 on 2-level fabrics). A ring
  /// across pods counts each pod it uses this many times in the pods term (score_of).
  std::vector<double> pod_scarcity;
  /// Per pod: its pod_scarcity rests on link figures its source assumed (a tiers CSV or
  /// topology.conf without rates or counts: fabric::Assumed), which --explain says.
  std::vector<std::uint8_t> pod_assumed;
  /// Per host: its own links are sound (not degraded, not unhealthy, none lost, every rail).
  std::vector<std::uint8_t> healthy;
  /// Per block: its hosts are one ascending run of consecutive ids (usable_hosts() then
  /// tests them eight at a time). A domain's block may not be: leaf by leaf, in any cabling.
  std::vector<std::uint8_t> block_run;
  /// The link groups the fabric policy's estimate reads (traffic.hpp): every block's uplinks
  /// up, then down, then every tier-2 group's links up, then down (block_group, tier2_group).
  /// A Traffic made with them keeps their values current.
  LinkGroups groups;

  [[nodiscard]] bool uplinked(std::size_t block) const { return !block_up[block].empty(); }
  /// The index in `groups` of a block's uplinks and of a tier-2 group's links (up or down).
  [[nodiscard]] std::size_t block_group(std::size_t block, bool down) const {
    return (down ? block_up.size() : 0) + block;
  }
  [[nodiscard]] std::size_t tier2_group(std::size_t t, bool down) const {
    return 2 * block_up.size() + (down ? tier2_up.size() : 0) + t;
  }
};
Context prepare(const fabric::Fabric& f, const Weights& w = {},
                const routes::Model* routes = nullptr);

/// The fabric's thinnest switch tier: the leaves' uplinks (1) or the pods' links to the tier
/// above them (2, 3-level fabrics), whichever carries the least of what the hosts beneath
/// can send (its up links' capacity over the hosts' line rate, summed over the tier; the
/// lower tier on a tie). A ring edge between blocks crosses tier 1, between pods tier 2.
struct ThinTier {
  int tier = 1;
  double ratio = 0;  ///< capacity / host line rate beneath (1 = non-blocking); 0: no uplinks
};
ThinTier thinnest_tier(const Context& c);

/// The pods of these blocks (any order, repeats and kNone allowed), each once, ascending.
std::vector<std::uint32_t> pods_of(const Context& c, std::span<const std::uint32_t> blocks);
/// Measures::thin_core of a placement over these pods (each once), and whether a pod counted
/// there has an assumed scarcity (Measures::core_assumed).
double thin_core_of_pods(const Context& c, std::span<const std::uint32_t> pods);
bool core_assumed_of_pods(const Context& c, std::span<const std::uint32_t> pods);

/// The measures of a placement, for every policy alike (docs/placement.md).
struct Measures {
  std::uint32_t hosts = 0;            ///< hosts placed
  std::uint32_t leaves = 0;           ///< blocks used (leaves; rail groups on rail fabrics)
  std::uint32_t pods = 0;             ///< pods used
  std::uint32_t ring_inter_leaf = 0;  ///< ring edges (rank i -> i+1, wrapping) between blocks
  std::uint32_t ring_inter_pod = 0;   ///< ring edges between pods (spine-to-core crossings)
  /// Pipeline stages (--pp P > 1): edges of the job's traffic (job_edges) between blocks, and
  /// stages whose nodes all lie in one block (their data-parallel ring crosses no uplink).
  std::uint32_t pp_inter_leaf = 0;
  std::uint32_t stages_in_block = 0;
  std::uint32_t tp_groups_split = 0;  ///< TP groups spanning more than one block
  std::uint32_t leftover = 0;         ///< free hosts left behind in the blocks used
  std::uint32_t fresh_blocks = 0;     ///< wholly free blocks broken into, not filled
  std::uint32_t unhealthy_hosts = 0;  ///< hosts on degraded, unhealthy or lost host links
  /// When the ring crosses pods: the sum over its pods of Context::pod_scarcity - 1, what
  /// crossing thin links to the core adds to the pods term; 0 on one pod.
  double thin_core = 0;
  /// Some pod counted in thin_core has an assumed core scarcity (Context::pod_assumed).
  bool core_assumed = false;
  /// Bandwidth: the ring's predicted slowdown, bottleneck and what it adds to others
  /// (kNoRoute as the slowdown when some edge has no route).
  Forecast bandwidth;
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
};
RingMeasures measure_ring(const Blocks& b, std::span<const fabric::HostId> ring,
                          std::uint32_t group_nodes = 1);

/// Per block: its hosts a job may use, and its free hosts (usable or not).
struct BlockCounts {
  std::vector<std::uint32_t> usable, free;
};

/// Hosts a job may use: free, not excluded and (when `healthy_only`) on sound host links.
std::vector<std::uint8_t> usable_hosts(const Context& c, const JobRequest& job,
                                       const NodeStates& states, bool healthy_only);
/// The same, and counted per block in the same pass.
std::vector<std::uint8_t> usable_hosts(const Context& c, const JobRequest& job,
                                       const NodeStates& states, bool healthy_only,
                                       BlockCounts& counts);

/// Measures a ranked host set and fills tp_groups, leaves, measures and score (feasible):
/// its bandwidth over `traffic`'s running jobs (nullptr: an idle fabric) on the route model
/// of the context.
Placement evaluate(const Context& c, const JobRequest& job, const NodeStates& states,
                   std::vector<fabric::HostId> ranked, std::string policy,
                   const Traffic* traffic = nullptr);
double score_of(const Weights& w, const Measures& m);

/// The inter-node traffic of a job, as directed host pairs, hosts in rank order. One stage
/// (pp 1): the ring, rank i -> i + 1, wrapping. P stages (Megatron's TP-DP-PP rank order:
/// stage s is the N / P consecutive nodes from s x N / P): each stage's own ring (its
/// data-parallel AllReduce), and node i of each stage to node i of the next and back (the
/// activations forward, the gradients back: point-to-point between neighbours).
std::vector<std::pair<fabric::HostId, fabric::HostId>> job_edges(
    std::span<const fabric::HostId> ranked, std::uint32_t pp);

/// The fabric-aware ring order: blocks contiguous, ordered by pod then block index; hosts in
/// index order inside a block. A ring over L > 1 blocks then has exactly L inter-block edges
/// and TP groups (consecutive group_nodes() hosts) never leave a block that holds whole
/// groups.
std::vector<fabric::HostId> ring_order(const Blocks& b, std::vector<fabric::HostId> hosts);

}  // namespace fabricplace::placement
