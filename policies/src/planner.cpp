// SPDX-License-Identifier: GPL-2.0-or-later
#include <string>

#include "fabricplace/policies/policies.hpp"

namespace fabricplace::policies {

std::string_view to_string(Policy p) {
  switch (p) {
    case Policy::kFabric:
      return "fabric";
    case Policy::kSlurmTree:
      return "slurm-tree";
    case Policy::kSlurmBlock:
      return "slurm-block";
    case Policy::kFirstFit:
      return "first-fit";
  }
  return "?";
}

std::string policy_choices() {
  std::string out;
  for (std::size_t i = 0; i < kPolicies.size(); ++i)
    out += (i == 0                      ? ""
            : i + 1 == kPolicies.size() ? " or "
                                        : ", ") +
           std::string(to_string(kPolicies[i]));
  return out;
}

std::optional<Policy> parse_policy(std::string_view name) {
  for (Policy p : kPolicies)
    if (name == to_string(p)) return p;
  return std::nullopt;
}

std::string_view to_string(SlurmSeries s) {
  return s == SlurmSeries::k2411 ? "24.11" : "22.05";
}

std::optional<SlurmSeries> parse_slurm_series(std::string_view v) {
  for (auto s : {SlurmSeries::k2205, SlurmSeries::k2411}) {
    const auto name = to_string(s);
    if (v == name) return s;
    if (!v.starts_with(name) || v.size() < name.size() + 2 || v[name.size()] != '.') continue;
    const auto micro = v.substr(name.size() + 1);
    if (micro.size() <= 3 && micro.find_first_not_of("0123456789") == std::string_view::npos)
      return s;
  }
  return std::nullopt;
}

SlurmSeries slurm_series_of(unsigned major, unsigned minor) {
  return major > 24 || (major == 24 && minor >= 5) ? SlurmSeries::k2411 : SlurmSeries::k2205;
}

namespace {
// The model `--routes auto` chooses; every fabric gets one (ecmp needs no table).
std::unique_ptr<const routes::Model> auto_routes(const fabric::Fabric& f) {
  if (auto m = routes::make_model(f, routes::Spec{})) return std::move(*m);
  routes::Spec ecmp;
  ecmp.automatic = false;
  ecmp.kind = routes::Kind::kEcmp;
  auto m = routes::make_model(f, ecmp);
  return m ? std::move(*m) : nullptr;
}
}  // namespace

Planner::Planner(const fabric::Fabric& f, const placement::Weights& w, const routes::Model* routes,
                 SlurmSeries tree_series)
    : own_routes_(routes ? nullptr : auto_routes(f)),
      ctx_(placement::prepare(f, w, routes ? routes : own_routes_.get())),
      slurm_(slurm_tables(ctx_.tree)),
      tree_series_(tree_series),
      blocks_(fabric::slurm_blocks(f, ctx_.tree)) {}

placement::Placement Planner::place(const placement::JobRequest& job,
                                    const placement::NodeStates& states, Policy policy,
                                    const placement::Traffic* traffic) const {
  switch (policy) {
    case Policy::kFabric:
      return fabric_aware(ctx_, job, states, traffic);
    case Policy::kSlurmTree:
      return slurm_tree(ctx_, slurm_, job, states, traffic, tree_series_);
    case Policy::kSlurmBlock:
      return slurm_block(ctx_, blocks_, job, states, traffic);
    case Policy::kFirstFit:
      return first_fit(ctx_, job, states, traffic);
  }
  return {};
}

// first-fit: the first N usable hosts in index order (slurm.conf order), ranked so.
placement::Placement first_fit(const placement::Context& c, const placement::JobRequest& job,
                               const placement::NodeStates& states,
                               const placement::Traffic* traffic) {
  const auto ok = placement::usable_hosts(c, job, states, /*healthy_only=*/false);
  std::vector<fabric::HostId> chosen;
  for (std::uint32_t h = 0; h < ok.size() && chosen.size() < job.nodes; ++h)
    if (ok[h]) chosen.push_back(fabric::HostId{h});
  if (chosen.size() < job.nodes) {
    placement::Placement p;
    p.policy = "first-fit";
    p.reason = "job needs " + std::to_string(job.nodes) + (job.nodes == 1 ? " host" : " hosts") +
               "; only " + std::to_string(chosen.size()) +
               (job.exclude.empty() ? " are free" : " are free and not excluded");
    return p;
  }
  return placement::evaluate(c, job, states, std::move(chosen), "first-fit", traffic);
}

}  // namespace fabricplace::policies
