// SPDX-License-Identifier: GPL-2.0-or-later
// fuzz_slurm_env: the Slurm job environment rules of placement/slurm_env.hpp (shared by
// `rankfile --from-slurm-job` and the SPANK plugin). The input is an environment, one
// NAME=VALUE per line (an empty value is unset, as the getter's contract says);
// slurm_job_nodes(), slurm_tasks_per_node() and task_counts() of every value run on it (the
// node list's expansion is fuzz_hostlist's: here it would only cost time).
#include <map>

#include "fabricplace/common/strings.hpp"
#include "fabricplace/placement/slurm_env.hpp"
#include "fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fabricplace;
  std::map<std::string, std::string, std::less<>> vars;
  for (auto line : str::lines(fuzz::text_of(data, size))) {
    const auto eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    const auto value = line.substr(eq + 1);
    vars.insert_or_assign(std::string(line.substr(0, eq)), std::string(value));
    (void)placement::task_counts(value);
  }
  const placement::EnvFn env = [&vars](const char* name) -> std::optional<std::string> {
    auto it = vars.find(std::string_view(name));
    if (it == vars.end() || it->second.empty()) return std::nullopt;
    return it->second;
  };
  if (auto nodes = placement::slurm_job_nodes(env)) {
    fuzz::require(!nodes->second.empty(), "slurm_job_nodes gave an empty node list");
  } else {
    fuzz::check_error(nodes.error());
  }
  if (auto k = placement::slurm_tasks_per_node(env)) {
    fuzz::require(k->first > 0, "slurm_tasks_per_node gave 0 tasks");
  } else {
    fuzz::check_error(k.error());
  }
  return 0;
}
