// SPDX-License-Identifier: GPL-2.0-or-later
// What a Slurm job's environment says about its hosts and tasks, read through a getter so
// that the CLI (getenv) and the SPANK plugin (spank_getenv in a slurmstepd) share the rules.
// Pure string handling: no Slurm library.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "fabricplace/common/error.hpp"

namespace fabricplace::placement {

/// Returns a variable's value, nothing when unset or empty.
using EnvFn = std::function<std::optional<std::string>(const char*)>;

/// The allocation's node list and the variable it came from: SLURM_JOB_NODELIST (the job's:
/// the batch script and salloc's shell see it), else SLURM_NODELIST, else SLURM_STEP_NODELIST.
Result<std::pair<std::string, std::string>> slurm_job_nodes(const EnvFn& env);

/// "8(x4),4" -> {8, 4}; nothing when it does not parse.
std::optional<std::set<std::uint64_t>> task_counts(std::string_view v);

/// Ranks per host and where that came from. Slurm's variables describe tasks only when
/// tasks were asked for: SLURM_NTASKS_PER_NODE (--ntasks-per-node), else
/// SLURM_TASKS_PER_NODE when SLURM_NTASKS is set (-n); without either (`salloc -N4`)
/// SLURM_TASKS_PER_NODE holds the CPU count and srun starts one task per node, so 1.
/// Errors (kUsage): inside an srun step on fewer nodes than the job (the variables are the
/// step's; salloc's shell as an interactive step keeps the job's), uneven counts ("3,2"
/// from -n 5 -N 2: a rank file gives every host the same number), values that do not parse.
Result<std::pair<std::uint32_t, std::string>> slurm_tasks_per_node(const EnvFn& env);

}  // namespace fabricplace::placement
