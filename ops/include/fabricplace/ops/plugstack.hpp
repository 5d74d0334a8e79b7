// SPDX-License-Identifier: GPL-2.0-or-later
// The SPANK plugin's line in plugstack.conf, read the way Slurm reads it and the way the
// plugin reads its arguments: one place for both, so that `slurm sync` and `fabric watch`
// write only a line the plugin will read as intended (docs/operations.md, "The plugin's
// line").
//
//   optional /usr/lib/.../fabricplace.so fabric=/etc/slurm/fabric.json
//            [hostmap=/etc/slurm/fabric.hostmap] policy=fabric mode=constrain
//            gpus_per_node=8 log=/var/log/fabricplace.log [topology=block]
//
// How Slurm splits a plugstack.conf line (src/common/plugstack.c, every series we support):
// it reads the file with fgets() into a 4,096-byte buffer, so a longer line is cut there and
// its rest read as another line; a '#' anywhere ends the line (there is no quoting); the
// words are split at blanks, tabs and the newline; the first word is `required`, `optional`
// or `include`, the second the plugin, the rest its arguments (argv of every SPANK callback).
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fabricplace/common/error.hpp"

namespace fabricplace::ops {

struct PluginConfig {
  std::string fabric_path;         ///< canonical JSON written by `fabricplace fabric import`
  std::string host_map_path;       ///< `fabric export --format hostmap`; default: fabric_path's
                                   ///< name with .hostmap for its extension
  std::string policy = "fabric";   ///< placement policy name
  std::string mode = "constrain";  ///< default --fabric-mode: constrain | exact | off
  int gpus_per_node = 8;
  /// The cluster's TopologyPlugin: "tree" (topology/tree, or none) or "block"
  /// (topology/block, Slurm 23.11+), which keeps a job inside one block: per-leaf counts
  /// are refused there, and a TP group's --segment does their work (docs/slurm.md).
  std::string topology = "tree";
  std::string log_path;   ///< empty: Slurm's log only
  std::string hwloc_xml;  ///< the nodes' hwloc topology: GPU k <-> nearest HCA per local rank
};

/// Parses the plugin's key=value arguments (what Slurm hands every SPANK callback). Errors
/// name the argument and what was expected.
Result<PluginConfig> parse_plugin_args(const std::vector<std::string>& args);

/// The plugstack.conf arguments as fabricplace-spank(8) documents them (and the error for an
/// unknown one lists them): one table.
struct ArgDoc {
  const char* key;
  const char* value;
  const char* usage;
};
std::span<const ArgDoc> plugstack_arg_docs();

/// The longest line Slurm reads whole: its buffer is 4,096 bytes with the newline and the NUL.
inline constexpr std::size_t kPlugstackLineMax = 4094;

/// One plugstack.conf line as Slurm splits it (see above); nullopt for a line with no words
/// (blank, or a comment).
struct PlugstackLine {
  std::string kind;  ///< required, optional or include
  std::string plugin;
  std::vector<std::string> args;
};
std::optional<PlugstackLine> split_plugstack_line(std::string_view line);

/// The plugin's line for `plugin` with `args`, checked the way it will be read: it must be
/// one line Slurm reads whole (no line break, at most kPlugstackLineMax), no word may hold a
/// '#' (Slurm would end the line there), no argument may be empty or split apart at a blank or
/// a tab, the line Slurm splits must give back exactly this plugin and these arguments, and
/// the plugin must accept them (parse_plugin_args). Errors say which argument and why.
Result<std::string> plugstack_line(const std::string& plugin, const std::vector<std::string>& args);

}  // namespace fabricplace::ops
