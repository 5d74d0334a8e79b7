// SPDX-License-Identifier: GPL-2.0-or-later
// What the plugin does at submission (sbatch, salloc: SPANK's allocator context), without
// Slurm: the job's shape as sbatch will see it, checked against the fabric.
//
// The node count is not a SPANK item in allocator context, and option callbacks run while
// sbatch is still parsing (environment, then #SBATCH lines, then the command line). So the
// plugin reads the shape itself from the same sources, in the same order: the script's
// #SBATCH lines, then the process's own command line (/proc/self/cmdline), the later
// overriding the earlier. sbatch has no environment variable for -N.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fabricplace/common/error.hpp"
#include "fabricplace/placement/rank_layout.hpp"
#include "launch.hpp"

namespace fabricplace::plugin {

struct SubmitShape {
  std::optional<std::uint32_t> nodes, ntasks, ntasks_per_node;
  bool nodelist = false;              ///< -w/--nodelist given: the user chose the hosts
  bool het = false;                   ///< a heterogeneous job (":" components)
  bool nodes_range = false;           ///< -N MIN-MAX: Slurm picks the count
  std::optional<std::string> script;  ///< sbatch's script path, when one was given
  /// The script's #SBATCH lines could not be read (a FIFO sbatch has drained, a device, a
  /// file over 4 MiB): its node count is unknown, not sbatch's default of one node.
  bool script_unread = false;
  /// The final --fabric-tp / --fabric-ep / --fabric-mode values (#SBATCH, then the command
  /// line), whatever order the option callbacks run in.
  std::optional<std::string> fabric_tp, fabric_ep, fabric_mode;
  /// The job's own --segment (topology/block, Slurm 24.05+): #SBATCH, then the command line.
  std::optional<std::uint32_t> segment;
  /// The node count: -N, else -n / --ntasks-per-node; nothing when it cannot be known
  /// (a script on stdin or unread, no count given).
  [[nodiscard]] std::optional<std::uint32_t> node_count() const;
};

/// The #SBATCH options of a batch script: the lines starting "#SBATCH" before the first
/// line that is neither a comment nor blank, split on white space.
std::vector<std::string> sbatch_directives(std::string_view script);

/// The shape from #SBATCH words (may be empty) and the command line (argv without argv[0]);
/// the command line wins.
SubmitShape submit_shape(const std::vector<std::string>& directives,
                         const std::vector<std::string>& args);

/// Checks a request of `nodes` nodes (nothing: unknown) of `gpus_per_node` GPUs with the
/// job's groups (--fabric-tp, --fabric-ep) against the fabric: a group size that does not
/// divide a node or span whole nodes, EP and TP that do not nest, a group larger than any
/// block (leaf, or NVLink domain) can hold, and with a known node count more nodes than the
/// fabric has hosts or groups that do not tile the job. kUsage errors, worded for the
/// options.
Result<void> validate_submission(const placement::HostMap& m, std::optional<std::uint32_t> nodes,
                                 std::uint32_t gpus_per_node, const Groups& g);

/// topology/block (plugstack.conf `topology=block`): the --segment that keeps each group (the
/// larger of TP and EP) of a job of `nodes` nodes inside one base block (a leaf, or an NVLink
/// domain), as topology/block (24.05+) honours it: the nodes of one group, when a group
/// spans nodes and the node count is known (a segment must divide it, or Slurm refuses the
/// job). Nothing otherwise, with the reason. Call it on a request validate_submission()
/// accepted (a group then fits the largest block, the base block size of `fabric export
/// --format slurm-block`).
struct BlockSegment {
  std::optional<std::uint32_t> nodes;  ///< the segment, in nodes
  std::string why_not;                 ///< when there is none
};
BlockSegment block_segment(std::optional<std::uint32_t> nodes, std::uint32_t gpus_per_node,
                           const Groups& g);

/// Whether every host of `hosts` (one per line) is in one block (leaf, NVLink domain) of the
/// host map: the only node list topology/block admits for every job size (a job must stay inside
/// one block of its size, within as few leaves as its size needs; docs/slurm.md).
bool in_one_block(const placement::HostMap& m, std::string_view hosts);

/// Exact mode: the nodes the placement engine chooses now for `nodes` nodes with the job's
/// groups, given the fabric JSON, the node states as `sinfo -h -N -o '%N %t'` text and
/// the running jobs as `squeue -h -t R -o '%i %N'` text (placement::running_from_lines).
/// Returns the SLURM_HOSTFILE contents (one host per line, ring order), or an Error whose
/// message says why not (an infeasible placement's reason included). Running jobs that do
/// not read are no reason to fail: the placement is made without them and a note says why.
struct ExactRequest {
  std::string fabric_path;
  std::string states;   ///< "host state" lines
  std::string running;  ///< "jobid hostlist" lines, one per running job
  std::uint32_t nodes = 1, gpus_per_node = 8;
  Groups groups;
  std::string policy = "fabric";
};
struct ExactPlacement {
  std::string hostfile;            ///< one host per line, ring order
  std::size_t running_jobs = 0;    ///< running jobs read (after the reader's checks)
  std::size_t running_hosts = 0;   ///< their hosts
  std::vector<std::string> notes;  ///< the running jobs' warnings, or why none were read
};
Result<ExactPlacement> exact_hostfile(const ExactRequest& r);

}  // namespace fabricplace::plugin
