// The placement policies: `fabric` (ours), `slurm-tree` (a faithful reimplementation of
// Slurm 22.05's topology/tree selection, the baseline) and `first-fit` (node index order).
//
// Contract
// - A Planner is built once per fabric (and policy weights) and is then read-only: place()
//   may run concurrently from several threads.
// - Every policy returns a Placement measured by placement::evaluate(), so their results
//   compare on equal terms; an infeasible request is a result with a reason.
// - `fabric` holds the hard constraints of docs/placement.md (every TP group under one leaf
//   or rail group, no drained, down, excluded or unhealthy host, the fewest leaves possible)
//   and minimises the score among the sets it considers. The baselines do what their
//   originals do and no more: they know neither TP groups nor link health.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "fabricplace/placement/placement.hpp"

namespace fabricplace::policies {

enum class Policy : std::uint8_t { kFabric, kSlurmTree, kFirstFit };
inline constexpr std::array kPolicies{Policy::kFabric, Policy::kSlurmTree, Policy::kFirstFit};
std::string_view to_string(Policy p);  ///< "fabric", "slurm-tree", "first-fit"
std::optional<Policy> parse_policy(std::string_view name);

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

placement::Placement first_fit(const placement::Context& c, const placement::JobRequest& job,
                               const placement::NodeStates& states);
placement::Placement slurm_tree(const placement::Context& c, const SlurmTables& t,
                                const placement::JobRequest& job,
                                const placement::NodeStates& states);
placement::Placement fabric_aware(const placement::Context& c, const placement::JobRequest& job,
                                  const placement::NodeStates& states);

class Planner {
 public:
  explicit Planner(const fabric::Fabric& f, const placement::Weights& w = {});
  [[nodiscard]] placement::Placement place(const placement::JobRequest& job,
                                           const placement::NodeStates& states,
                                           Policy policy) const;
  [[nodiscard]] const placement::Context& context() const { return ctx_; }

 private:
  placement::Context ctx_;
  SlurmTables slurm_;
};

}  // namespace fabricplace::policies
