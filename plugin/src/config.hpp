// plugstack.conf arguments of the SPANK plugin, parsed without Slurm so they can be tested:
//   optional fabricplace.so fabric=/etc/slurm/fabric.json [hostmap=/etc/slurm/fabric.hostmap]
//            policy=fabric mode=constrain
//            gpus_per_node=8 log=/var/log/fabricplace.log [topology=block]
#pragma once

#include <span>
#include <string>
#include <vector>

#include "fabricplace/common/error.hpp"

namespace fabricplace::plugin {

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

/// Parses key=value arguments. Errors name the argument and what was expected.
Result<PluginConfig> parse_plugin_args(const std::vector<std::string>& args);

/// The plugstack.conf arguments as fabricplace-spank(8) documents them (and the error for an
/// unknown one lists them): one table.
struct ArgDoc {
  const char* key;
  const char* value;
  const char* usage;
};
std::span<const ArgDoc> plugstack_arg_docs();

/// fabricplace-spank(8), in roff: the job options (option_docs()) and plugstack.conf
/// arguments (plugstack_arg_docs()), written at build time (plugin/src/man_main.cpp).
std::string spank_man_page(const std::string& version, const std::string& slurm_series);

}  // namespace fabricplace::plugin
