// SPDX-License-Identifier: GPL-2.0-or-later
// What the plugin does once a job's nodes are known (srun's local context, slurmstepd's
// remote context), without Slurm: the ring over the job's hosts from the compact host map,
// the SLURM_HOSTFILE for srun, the rank files user_init writes, and each task's place in
// the ring. Every failure is an Error the caller turns into one message and Slurm's own
// order (the launch goes on).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "fabricplace/common/error.hpp"
#include "fabricplace/placement/rank_layout.hpp"
#include "options.hpp"

namespace fabricplace::plugin {

/// The host map at `path`, parsed once per process and kept (a slurmstepd serves one step).
Result<const placement::HostMap*> load_host_map(const std::string& path);
/// The same, with the fabric JSON (plugstack `fabric=`) to fall back on: a host map that is
/// missing, unreadable, or of another `slurm sync` generation than the JSON (a stale copy)
/// is derived from the JSON instead (a full parse: slower). `note` gets one line saying
/// which and why; empty when the host map was used as it is. Kept under `path`.
Result<const placement::HostMap*> load_host_map(const std::string& path,
                                                const std::string& fabric_path, std::string& note);
/// The generation a `slurm sync` stamped on a fabric JSON, read from its first bytes (it is
/// the fourth line); "" when there is none or the file cannot be read.
std::string fabric_json_generation(const std::string& fabric_path);

/// Which version of a host map a process read: FNV-1a 64 of its text, 16 hex digits. srun
/// passes its own to the step (FABRICPLACE_HOSTMAP_ID) so that a node that read another
/// version (the file was replaced during the launch) sets no ring variables from it.
std::string host_map_id(std::string_view text);
/// The id of the host map load_host_map(path) loaded in this process; "" if none.
std::string loaded_host_map_id(const std::string& path);

/// The host map next to a fabric JSON: "/etc/slurm/fabric.json" -> "/etc/slurm/fabric.hostmap".
std::string default_host_map_path(const std::string& fabric_path);

/// How the plugin's shape messages name their inputs (JobShape::make): "--fabric-tp 3 with 8
/// GPUs per node: ...".
inline constexpr placement::ShapeNames kShapeNames{.nodes = "the job's node count",
                                                   .gpus_per_node = "gpus_per_node",
                                                   .tp = "--fabric-tp",
                                                   .ep = "--fabric-ep",
                                                   .pp = "the pipeline stages",
                                                   .ranks_per_node = "tasks per node",
                                                   .ranks = "tasks"};

/// The shape's numbers for the job's groups (--fabric-tp, --fabric-ep) on nodes of
/// `gpus_per_node` GPUs; nodes and ranks per node are the caller's to set.
placement::ShapeSpec shape_spec(const Groups& g, std::uint32_t gpus_per_node);

/// The groups in ranks, with K ranks per node on nodes of G GPUs: TP groups of
/// JobShape::ranks_per_group() ranks (T x K / G, or 1 when each rank holds whole groups: TP 4
/// with 1 rank per 8-GPU node), EP groups of JobShape::ranks_per_ep_group() (0: none).
struct GroupRanks {
  std::uint32_t tp = 1;
  std::uint32_t ep = 0;
};
/// The shape JobShape::make() builds without a node count; its error when a group is not
/// whole ranks (TP 4 with 3 ranks per 8-GPU node), does not fit the node, or EP and TP do
/// not nest.
Result<GroupRanks> group_ranks(const Groups& g, std::uint32_t gpus_per_node,
                               std::uint32_t tasks_per_node);

/// The ring over `nodelist` (a Slurm hostlist) with K ranks per host and the job's groups on
/// nodes of `gpus_per_node`: the shape JobShape::make() builds for the hosts, laid out by
/// placement::rank_layout (the larger of TP and EP groups kept inside blocks).
Result<placement::RankLayout> plan_launch(const placement::HostMap& m, std::string_view nodelist,
                                          const Groups& g, std::uint32_t gpus_per_node,
                                          std::uint32_t tasks_per_node);

/// A task's place in the ring: rank = ring position of its host x K + its local id.
struct TaskPlace {
  std::uint32_t ring_rank = 0;
  std::uint32_t tp_group = 0;
  std::uint32_t tp_rank = 0;
  std::optional<std::uint32_t> ep_group, ep_rank;  ///< with EP groups only
};
std::optional<TaskPlace> task_place(const placement::HostMap& m, const placement::RankLayout& l,
                                    std::string_view host, std::uint32_t local_id);
/// A task's place when srun already ran the tasks in ring order (the plugin's hostfile):
/// its task id is its ring rank, groups of `r` consecutive ranks. Needs no host map, so it
/// agrees with the order srun chose even if the map changed since.
TaskPlace place_in_order(std::uint32_t task_id, const GroupRanks& r);

/// The files of a job's rank-file set, PREFIX + each suffix, in the order they are written:
/// PREFIX.rankfile (Open MPI), PREFIX.hosts (SLURM_HOSTFILE, one line per task),
/// PREFIX.torchrun.env and PREFIX.json.
inline constexpr const char* kLaunchFileSuffixes[] = {".rankfile", ".hosts", ".torchrun.env",
                                                      ".json"};

/// One file of a set: where it goes and what it holds.
struct FileContent {
  std::string path;
  std::string text;
};

/// Writes `files` all or none. Each is written to a temporary file next to it (same
/// directory, so the rename is atomic); only when every one is written are they renamed into
/// place, in order. On any failure every temporary is removed, and so is every target path
/// of the set (those renamed in this call and a stale file an earlier run left at one of
/// them), so a reader finds the whole new set or none of it, never a mix. The error names
/// the file and the reason ("PATH: write failed: No space left on device; no rank files were
/// written").
/// Links at the paths: kFollow (a user's own --fabric-rankfile, as write_file_atomic does: the
/// file a link points to is replaced) or kReplace (the names fabricplace chose itself in the
/// job's directory: a link planted there is replaced, never followed nor removed through).
enum class LinkPolicy { kFollow, kReplace };
Result<std::vector<std::string>> write_file_set(const std::vector<FileContent>& files,
                                                LinkPolicy links = LinkPolicy::kFollow);

/// The rank files for a job or step (kLaunchFileSuffixes), written all or none through
/// write_file_set(). Returns the paths written.
Result<std::vector<std::string>> write_launch_files(const placement::HostMap& m,
                                                    const placement::RankLayout& l,
                                                    const std::string& prefix,
                                                    const placement::RankFileOptions& o,
                                                    LinkPolicy links = LinkPolicy::kFollow);
/// The same with the renderer given (tests): each file's contents are render(format) for
/// .rankfile (kOpenMpi), .hosts (kSlurm), .torchrun.env (kTorchrun), .json (kJson). An
/// exception from the renderer (std::bad_alloc included) is an Error naming the file, and
/// nothing is written.
Result<std::vector<std::string>> write_launch_files(
    const std::string& prefix, const std::function<std::string(placement::RankFormat)>& render,
    LinkPolicy links = LinkPolicy::kFollow);

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
  std::optional<std::string> fabric_tp, fabric_ep, fabric_mode;  ///< this plugin's own options
  std::optional<std::uint32_t> segment;                          ///< --segment (Slurm 24.05+)
};
SrunCounts parse_srun_args(const std::vector<std::string>& args);

/// Appends `n` bytes to the plugstack `log=` file at `path` in one write() (concurrent steps do
/// not interleave); false when nothing was written. Opened non-blocking (a FIFO without a
/// reader fails at once instead of hanging a launch), close-on-exec, never through a link;
/// then only a regular file with one name is written and, when this process runs as root,
/// one root owns or one in a root-owned directory nobody else may write (logrotate's `create
/// 0640 slurm slurm`): slurmstepd appends as root, so a hard link planted at the log's name
/// (where fs.protected_hardlinks is off) or a file a user created in a shared directory in
/// advance must not collect root's lines. Created with mode 0666 minus the umask, as any log
/// file. Never throws.
bool append_log_line(const std::string& path, const char* line, std::size_t n) noexcept;

}  // namespace fabricplace::plugin
