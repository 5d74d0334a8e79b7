// SPDX-License-Identifier: GPL-2.0-or-later
#include "fabricplace/placement/slurm_env.hpp"

#include "fabricplace/common/strings.hpp"

namespace fabricplace::placement {

Result<std::pair<std::string, std::string>> slurm_job_nodes(const EnvFn& env) {
  for (const char* name : {"SLURM_JOB_NODELIST", "SLURM_NODELIST", "SLURM_STEP_NODELIST"})
    if (auto v = env(name)) return std::pair<std::string, std::string>{name, *v};
  return fail(ErrorCode::kUsage,
              "--from-slurm-job: SLURM_JOB_NODELIST is not set (run inside a Slurm job: sbatch, "
              "salloc or srun), or give --hosts");
}

std::optional<std::set<std::uint64_t>> task_counts(std::string_view v) {
  std::set<std::uint64_t> counts;
  for (const auto& part : str::split(v, ',')) {
    const auto p = part.find('(');
    auto n = str::parse_uint(part.substr(0, p), 1u << 16);
    if (!n || *n == 0) return std::nullopt;
    if (p != std::string_view::npos) {
      const auto rep = part.substr(p);  // "(x4)"
      if (rep.size() < 4 || rep.substr(0, 2) != "(x" || rep.back() != ')' ||
          !str::parse_uint(rep.substr(2, rep.size() - 3), 1u << 24))
        return std::nullopt;
    }
    counts.insert(*n);
  }
  return counts;
}

Result<std::pair<std::uint32_t, std::string>> slurm_tasks_per_node(const EnvFn& env) {
  using R = std::pair<std::uint32_t, std::string>;
  // An srun step rewrites SLURM_TASKS_PER_NODE (= SLURM_STEP_TASKS_PER_NODE); salloc's shell
  // as an interactive step (LaunchParameters=use_interactive_step) keeps the job's.
  const auto step = env("SLURM_STEP_NODELIST");
  const auto job = env("SLURM_JOB_NODELIST");
  const auto step_tasks = env("SLURM_STEP_TASKS_PER_NODE");
  const auto tasks = env("SLURM_TASKS_PER_NODE");
  const bool step_counts = !step_tasks || !tasks || *step_tasks == *tasks;
  const auto step_id = env("SLURM_STEP_ID");
  const bool interactive_step = step_id && *step_id == "4294967290";
  if (step && job && *step != *job && step_counts && !interactive_step)
    return fail(ErrorCode::kUsage,
                "inside an srun step on " + str::excerpt(*step) + ", fewer nodes than the job's " +
                    str::excerpt(*job) +
                    ": Slurm's task counts here are the step's; pass --tasks-per-node");
  if (auto v = env("SLURM_NTASKS_PER_NODE")) {
    auto n = str::parse_uint(*v, 1u << 16);
    if (!n || *n == 0)
      return fail(ErrorCode::kUsage, "SLURM_NTASKS_PER_NODE=" + str::quoted(*v) +
                                         ": expected a positive count; pass --tasks-per-node");
    return R{static_cast<std::uint32_t>(*n), "SLURM_NTASKS_PER_NODE"};
  }
  if (!tasks || !env("SLURM_NTASKS"))
    return R{1, "no task count asked of Slurm (-n, --ntasks-per-node): one per node"};
  const auto counts = task_counts(*tasks);
  if (!counts)
    return fail(ErrorCode::kUsage, "SLURM_TASKS_PER_NODE=" + str::quoted(*tasks) +
                                       ": expected counts like 8(x4) or 8,8; pass "
                                       "--tasks-per-node");
  if (counts->size() != 1)
    return fail(ErrorCode::kUsage, "SLURM_TASKS_PER_NODE=" + str::quoted(*tasks) +
                                       ": the job's tasks per node are uneven, and a rank file "
                                       "gives every host the same number of ranks; pass "
                                       "--tasks-per-node (or ask Slurm for --ntasks-per-node)");
  return R{static_cast<std::uint32_t>(*counts->begin()), "SLURM_TASKS_PER_NODE"};
}

}  // namespace fabricplace::placement
