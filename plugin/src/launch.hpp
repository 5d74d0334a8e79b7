// What the plugin does once a job's nodes are known (srun's local context, slurmstepd's
// remote context), without Slurm: the ring over the job's hosts from the compact host map,
// the SLURM_HOSTFILE for srun, the rank files user_init writes, and each task's place in
// the ring. Every failure is an Error the caller turns into one message and Slurm's own
// order (the launch goes on).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fabricplace/common/error.hpp"
#include "fabricplace/placement/rank_layout.hpp"

namespace fabricplace::plugin {

/// The host map at `path`, parsed once per process and kept (a slurmstepd serves one step).
Result<const placement::HostMap*> load_host_map(const std::string& path);

/// The host map next to a fabric JSON: "/etc/slurm/fabric.json" -> "/etc/slurm/fabric.hostmap".
std::string default_host_map_path(const std::string& fabric_path);

/// A TP group of `tp_gpus` GPUs in ranks, with K ranks per node on nodes of G GPUs: tp x K / G,
/// or 1 when each rank holds whole groups (TP 4 with 1 rank per 8-GPU node). An error when
/// neither is whole (TP 4 with 3 ranks per 8-GPU node).
Result<std::uint32_t> tp_in_ranks(std::uint32_t tp_gpus, std::uint32_t gpus_per_node,
                                  std::uint32_t tasks_per_node);

/// The ring over `nodelist` (a Slurm hostlist) with K ranks per host and TP groups of
/// `tp_ranks` ranks.
Result<placement::RankLayout> plan_launch(const placement::HostMap& m, std::string_view nodelist,
                                          std::uint32_t tasks_per_node, std::uint32_t tp_ranks);

/// A task's place in the ring: rank = ring position of its host x K + its local id.
struct TaskPlace {
  std::uint32_t ring_rank = 0;
  std::uint32_t tp_group = 0;
  std::uint32_t tp_rank = 0;
};
std::optional<TaskPlace> task_place(const placement::HostMap& m, const placement::RankLayout& l,
                                    std::string_view host, std::uint32_t local_id);

/// The rank files for a job or step, written atomically (temporary file, then rename):
/// PREFIX.rankfile (Open MPI), PREFIX.hosts (SLURM_HOSTFILE, one line per task),
/// PREFIX.torchrun.env and PREFIX.json. Returns the paths written.
Result<std::vector<std::string>> write_launch_files(const placement::HostMap& m,
                                                    const placement::RankLayout& l,
                                                    const std::string& prefix,
                                                    const placement::RankFileOptions& o);

/// srun's own command line (argv without argv[0]): the task and node counts given there,
/// which override the job's environment. Scanning stops at the command srun is to run.
struct SrunCounts {
  std::optional<std::uint32_t> ntasks, nodes, ntasks_per_node;
  bool nodelist = false;  ///< -w/--nodelist/--nodefile/-F given: the user chose the hosts
  std::optional<std::size_t> command;  ///< index of the first non-option word (the command,
                                       ///< or sbatch's script)
  bool distribution = false;           ///< -m/--distribution given: the user chose the task layout
  bool het = false;                    ///< ":" components: a heterogeneous job
  bool nodes_range = false;            ///< -N MIN-MAX (nodes holds MIN)
  std::optional<std::string> fabric_tp, fabric_mode;  ///< this plugin's own options
};
SrunCounts parse_srun_args(const std::vector<std::string>& args);

}  // namespace fabricplace::plugin
