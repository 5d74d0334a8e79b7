// SPDX-License-Identifier: GPL-2.0-or-later
// The placement policies: `fabric` (ours), the baselines `slurm-tree` and `slurm-block`
// (faithful reimplementations of Slurm 22.05's topology/tree and Slurm 24.11's topology/block
// selection, the latter with --segment) and `first-fit` (node index order).
//
// Contract
// - A Planner is built once per fabric (and policy weights) and is then read-only: place()
//   may run concurrently from several threads.
// - Every policy returns a Placement measured by placement::evaluate(), so their results
//   compare on equal terms; an infeasible request is a result with a reason.
// - `fabric` holds the hard constraints of docs/placement.md (every TP group under one leaf
//   or rail group, no drained, down, excluded or unhealthy host) and minimises the
//   objective (bandwidth on the route model in force, with the running jobs' load; then
//   locality and fragmentation) among the sets it considers. The baselines do what their
//   originals do and no more: they know neither TP groups, link health nor load; their
//   placements are measured by the same objective.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "fabricplace/fabric/slurm_block.hpp"
#include "fabricplace/placement/placement.hpp"

namespace fabricplace::policies {

enum class Policy : std::uint8_t { kFabric, kSlurmTree, kSlurmBlock, kFirstFit };
inline constexpr std::array kPolicies{Policy::kFabric, Policy::kSlurmTree, Policy::kSlurmBlock,
                                      Policy::kFirstFit};
std::string_view to_string(Policy p);  ///< "fabric", "slurm-tree", "slurm-block", "first-fit"
std::optional<Policy> parse_policy(std::string_view name);
/// "fabric, slurm-tree, slurm-block or first-fit": what a message says parse_policy accepts.
std::string policy_choices();

/// Slurm's view of the topology.conf export: per switch (in file order) its level (leaf 0),
/// parent (Slurm's, including its quirks), hop distances and the hosts under each leaf.
struct SlurmTables {
  std::vector<int> level;
  std::vector<std::uint32_t> parent;
  std::vector<std::vector<std::uint32_t>> children;
  std::vector<std::uint32_t> dist;  ///< n x n hop counts, kInfinite when unconnected
  std::uint32_t n = 0;
  static constexpr std::uint32_t kInfinite = 0xFFFFFFFF;
  [[nodiscard]] std::uint32_t d(std::uint32_t a, std::uint32_t b) const { return dist[a * n + b]; }
};
SlurmTables slurm_tables(const fabric::SlurmTree& tree);

/// Which Slurm's topology/tree selection `slurm-tree` reproduces. 24.11 (eval_nodes_tree.c)
/// differs from 22.05 (job_test.c) in two steps: a nearer leaf wins only when it holds the
/// rest of the job (22.05: unless a farther one compares better), and every switch above a
/// used leaf loses that leaf's nodes from its count (22.05 never lowers them). Both are held
/// to a live slurmctld of their version (tests/slurm, differential_tree).
enum class SlurmSeries : std::uint8_t { k2205, k2411 };
std::string_view to_string(SlurmSeries s);  ///< "22.05", "24.11"
/// "22.05" or "24.11", optionally with ".MICRO" (digits); nothing else.
std::optional<SlurmSeries> parse_slurm_series(std::string_view version);
/// The variant a Slurm major.minor runs: 24.11's from 24.05 on (where eval_nodes_tree.c
/// arrived), 22.05's before. Only 22.05 and 24.11 are held to a live slurmctld.
SlurmSeries slurm_series_of(unsigned major, unsigned minor);

placement::Placement first_fit(const placement::Context& c, const placement::JobRequest& job,
                               const placement::NodeStates& states,
                               const placement::Traffic* traffic = nullptr);
placement::Placement slurm_tree(const placement::Context& c, const SlurmTables& t,
                                const placement::JobRequest& job,
                                const placement::NodeStates& states,
                                const placement::Traffic* traffic = nullptr,
                                SlurmSeries series = SlurmSeries::k2205);
/// Slurm 24.11's topology/block selection (eval_nodes_block) on our slurm-block export, with
/// the job's --segment (JobRequest::segment).
placement::Placement slurm_block(const placement::Context& c, const fabric::SlurmBlocks& blocks,
                                 const placement::JobRequest& job,
                                 const placement::NodeStates& states,
                                 const placement::Traffic* traffic = nullptr);
placement::Placement fabric_aware(const placement::Context& c, const placement::JobRequest& job,
                                  const placement::NodeStates& states,
                                  const placement::Traffic* traffic = nullptr);

class Planner {
 public:
  /// `routes`: the route model in force (it must outlive the planner); nullptr: the planner
  /// builds the one `--routes auto` would (routes::make_model).
  /// `tree_series`: the Slurm whose topology/tree `slurm-tree` reproduces.
  explicit Planner(const fabric::Fabric& f, const placement::Weights& w = {},
                   const routes::Model* routes = nullptr,
                   SlurmSeries tree_series = SlurmSeries::k2205);
  /// `traffic`: the running jobs' load (on the same route model); nullptr: an idle fabric.
  [[nodiscard]] placement::Placement place(const placement::JobRequest& job,
                                           const placement::NodeStates& states, Policy policy,
                                           const placement::Traffic* traffic = nullptr) const;
  [[nodiscard]] const placement::Context& context() const { return ctx_; }
  [[nodiscard]] const routes::Model& routes() const { return *ctx_.routes; }

 private:
  std::unique_ptr<const routes::Model> own_routes_;
  placement::Context ctx_;
  SlurmTables slurm_;
  SlurmSeries tree_series_;
  fabric::SlurmBlocks blocks_;
};

}  // namespace fabricplace::policies
