// SPDX-License-Identifier: GPL-2.0-or-later
// `fabricplace slurm sync`: every Slurm-side file from one fabric, written as one set
// (docs/operations.md).
//
// The set: fabric.json (the plugin's exact mode), fabric.hostmap (the plugin at launch),
// fabric.lua (job_submit.lua), topology.conf (topology/tree or topology/block) or
// topology.yaml (25.05+), fabricplace-nodes.conf (a slurm.conf include: the hosts'
// NodeName= lines with their leaf features, and topology/block's placeholder nodes) and
// plugstack.conf.d/fabricplace.conf (the plugin's line).
//
// Generation: every file carries one id, the FNV-1a 64 of the Slurm-visible structure (the
// host map, the Lua table, the topology and node files, before they are stamped; not
// fabric.json, not the plugin's line). Files of one generation agree on hosts,
// leaves, pods and switches. A change of link health alone (a degraded or unhealthy link)
// rewrites fabric.json only and keeps the generation; readers that find two generations
// (the plugin: host map vs fabric.json; job_submit.lua: its loaded table vs the file) know
// one file is stale.
//
// On disk (SyncStore): DIR/.fabricplace/snapshot.NNNNNN/ holds each generation's files,
// DIR/.fabricplace/current is a symlink to the live snapshot, and DIR/NAME are fixed
// symlinks to .fabricplace/current/NAME. A sync writes a new snapshot beside the live one
// and switches `current` with one rename(2): killed at any point, readers see the previous
// set whole or the new one whole, never a mix.
#pragma once

#include <string>
#include <vector>

#include "fabricplace/common/error.hpp"
#include "fabricplace/fabric/fabric.hpp"

namespace fabricplace::ops {

enum class SlurmTopology { kTree, kBlock, kYaml };

struct SyncOptions {
  SlurmTopology topology = SlurmTopology::kTree;
  std::string dir;          ///< where the files will be read from (paths in the plugstack line)
  std::string plugin;       ///< fabricplace.so, for the plugstack line
  std::string plugin_args;  ///< further plugstack arguments: "policy=fabric gpus_per_node=8"
  std::string node_params;  ///< appended to every NodeName= line ("CPUs=64 Gres=gpu:8")
};

struct SlurmFile {
  std::string name;  ///< relative to the directory: "topology.conf", "plugstack.conf.d/..."
  std::string text;
  bool structural = true;  ///< stamped with the generation (every file but fabric.json)
};

struct SlurmFileSet {
  std::string generation;  ///< 16 hex digits
  std::vector<SlurmFile> files;
  std::vector<std::string> warnings;  ///< from the exporters (say them)
  bool topology_block = false;        ///< the plugin line needs topology=block
};

/// The plugin's line in the set: DIR/plugstack.conf.d/fabricplace.conf.
inline constexpr const char* kPlugstackFile = "plugstack.conf.d/fabricplace.conf";

/// The file set of `f`, validated: a topology without a host under a leaf, an incomplete
/// fabric, a host map that does not read back are errors (nothing is written from them).
Result<SlurmFileSet> slurm_files(const fabric::Fabric& f, const SyncOptions& o);

/// What a sync would change, file by file.
struct FileChange {
  enum class Kind { kAdded, kChanged, kUnchanged, kRemoved };
  std::string name;
  Kind kind = Kind::kUnchanged;
};
struct SyncPlan {
  std::string old_generation;   ///< "" for a directory never synced
  std::string old_snapshot;     ///< "snapshot.000003"; "" if none
  std::string old_fabric_json;  ///< the live set's fabric.json ("" if none)
  std::vector<FileChange> files;
  std::vector<std::string> links_to_fix;  ///< DIR/NAME not (yet) linked to current/NAME
  std::vector<std::string> conflicts;     ///< of those, what sync did not write (--replace)
  /// Files kept as they are, with why: a plugstack.conf.d/fabricplace.conf that is not
  /// sync's (the package's conffile, an admin's) but loads the plugin with this directory's
  /// fabric.json.
  std::vector<std::pair<std::string, std::string>> kept;
  [[nodiscard]] bool changed() const;  ///< a file to write, or a link to fix
  [[nodiscard]] bool changed(const std::string& name) const;
};

/// Compares `set` with what DIR holds (reads only). DIR must be absolute (the plugin lines
/// name files by absolute path).
Result<SyncPlan> plan_sync(const std::string& dir, const SlurmFileSet& set);

/// Plans again and writes, under an exclusive lock on DIR/.fabricplace/lock (a second sync
/// waits at most `lock_wait_s`); returns the plan it carried out (nothing written when
/// !changed()). A DIR/NAME that exists and is not sync's link (a file written by hand, a
/// package's) is an error naming it unless `replace`: then it is moved to
/// DIR/.fabricplace/replaced/, never deleted. Keeps the previous snapshot (rollback: point
/// `current` at it) and removes older ones and what killed syncs left behind.
Result<SyncPlan> commit_sync(const std::string& dir, const SlurmFileSet& set, bool replace,
                             int lock_wait_s = 60);

const char* to_string(FileChange::Kind k);

/// What slurmctld reads of the live set (topology.conf or topology.yaml, and
/// fabricplace-nodes.conf) as one id; "" when DIR holds no set.
std::string slurmctld_digest(const std::string& dir);
/// The digest `scontrol reconfigure` last succeeded on (DIR/.fabricplace/reconfigured; ""
/// if never), and recording it: `--reconfigure` runs until slurmctld has read the live set,
/// so a reconfigure that failed is tried again by the next sync.
std::string reconfigured_digest(const std::string& dir);
Result<void> record_reconfigured(const std::string& dir, const std::string& digest);

}  // namespace fabricplace::ops
