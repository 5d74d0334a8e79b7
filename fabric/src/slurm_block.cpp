#include "fabricplace/fabric/slurm_block.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "fabricplace/common/hostlist.hpp"

namespace fabricplace::fabric {

SlurmBlocks slurm_blocks(const Fabric& f, const SlurmTree& tree) {
  SlurmBlocks b;
  b.virtual_leaves = tree.virtual_leaves;
  b.warnings = tree.warnings;
  // Pods: a leaf's spine group when that group has a parent (a level above the spines);
  // otherwise one pod. In order of their first leaf in the tree's (topology.conf) order.
  std::map<std::uint32_t, std::uint32_t> pod_of;  // spine group (kNone: the one pod) -> pod
  std::vector<std::vector<std::uint32_t>> pods;
  for (std::uint32_t s = 0; s < tree.switches.size(); ++s) {
    const auto& sw = tree.switches[s];
    if (sw.level != 1 || sw.hosts.empty()) continue;
    const auto p = sw.parent;
    const bool split = p != kNone && tree.switches[p].parent != kNone;
    const auto [it, added] =
        pod_of.try_emplace(split ? p : kNone, static_cast<std::uint32_t>(pods.size()));
    if (added) pods.emplace_back();
    pods[it->second].push_back(s);
  }
  b.pods = static_cast<std::uint32_t>(pods.size());
  if (pods.empty()) return b;
  std::size_t largest = 0;
  b.base_size = ~0U;
  for (const auto& pod : pods) {
    largest = std::max(largest, pod.size());
    for (auto s : pod)
      b.base_size =
          std::min(b.base_size, static_cast<std::uint32_t>(tree.switches[s].hosts.size()));
  }
  if (pods.size() > 1)
    while (b.pod_slots < largest) b.pod_slots *= 2;

  std::set<std::string> names;
  for (std::uint32_t h = 0; h < f.num_hosts(); ++h) names.insert(f.host(HostId{h}).name);
  for (const auto& s : tree.switches) names.insert(s.name);
  std::uint32_t pads = 0;
  for (std::uint32_t p = 0; p < pods.size(); ++p) {
    for (auto s : pods[p])
      b.blocks.push_back({tree.switches[s].name, tree.switches[s].hosts, {}, p});
    for (auto k = pods[p].size(); pods.size() > 1 && k < b.pod_slots; ++k) {
      SlurmBlock pad;
      char stem[40];
      do {  // a name no host or switch has
        std::snprintf(stem, sizeof stem, "fabricplace-pad%02u", ++pads);
      } while (names.contains(stem));
      pad.name = stem;
      pad.pod = p;
      for (std::uint32_t i = 1; i <= b.base_size; ++i)
        pad.placeholder.push_back(pad.name + "-" + std::to_string(i));
      b.blocks.push_back(std::move(pad));
    }
  }
  b.sizes.push_back(b.base_size);
  if (b.pod_slots > 1) b.sizes.push_back(b.base_size * b.pod_slots);
  return b;
}

std::string to_slurm_block(const Fabric& f, const SlurmBlocks& b) {
  std::string out;
  out += "# Slurm topology.conf (TopologyPlugin=topology/block, Slurm 23.11+), written by\n";
  out += "# fabricplace from: " + f.origin() + "\n";
  out += "# Base blocks are " +
         std::string(b.virtual_leaves ? "rail groups (a rail-optimised fabric)" : "leaf switches") +
         ", pod by pod. Slurm groups them into larger\n# blocks by position, so each pod starts "
         "at a multiple of " +
         std::to_string(b.pod_slots) +
         " blocks and a pod with fewer leaves is\n"
         "# padded with placeholders.\n";
  std::size_t placeholders = 0;
  for (const auto& blk : b.blocks) placeholders += !blk.placeholder.empty();
  if (placeholders > 0)
    out += "# " + std::to_string(placeholders) +
           " placeholder block(s): their nodes must be in slurm.conf as State=FUTURE\n"
           "# (fabricplace fabric export --format slurm-block-nodes).\n";
  for (const auto& m : f.topology().incomplete)
    out += "# WARNING: INCOMPLETE fabric (a partial discovery), so this file lacks: " + m + "\n";
  for (const auto& w : b.warnings) out += "# warning: " + w + "\n";
  std::uint32_t pod = ~0U;
  for (const auto& blk : b.blocks) {
    if (blk.pod != pod) {
      pod = blk.pod;
      out += "\n# pod " + std::to_string(pod + 1) + "\n";
    }
    std::vector<std::string> names = blk.placeholder;
    for (HostId h : blk.hosts) names.push_back(f.host(h).name);
    out += "BlockName=" + blk.name + " Nodes=" + hostlist::compress(names) + "\n";
  }
  if (!b.sizes.empty()) {
    out += "\nBlockSizes=";
    for (std::size_t i = 0; i < b.sizes.size(); ++i)
      out += (i ? "," : "") + std::to_string(b.sizes[i]);
    out += "\n";
  }
  return out;
}

std::string to_slurm_block_nodes(const SlurmBlocks& b) {
  std::string out;
  out += "# slurm.conf lines for the placeholder blocks of fabricplace's topology/block export:\n";
  out += "# nodes that hold a pod's positions and are never scheduled (State=FUTURE).\n";
  for (const auto& blk : b.blocks)
    if (!blk.placeholder.empty())
      out += "NodeName=" + hostlist::compress(blk.placeholder) + " State=FUTURE\n";
  return out;
}

}  // namespace fabricplace::fabric
