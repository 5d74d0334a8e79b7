// SPDX-License-Identifier: GPL-2.0-or-later
#include "fabricplace/fabric/slurm_block.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "fabricplace/common/hostlist.hpp"
#include "fabricplace/common/strings.hpp"

namespace fabricplace::fabric {
namespace {

// A Slurm node list: `extra` names (a block's State=FUTURE nodes) and the hosts' names.
std::string node_list(const Fabric& f, const std::vector<HostId>& hosts,
                      std::vector<std::string> extra = {}) {
  for (HostId h : hosts) extra.push_back(f.host(h).name);
  return hostlist::compress(extra);
}

}  // namespace

SlurmBlocks slurm_blocks(const Fabric& f, const SlurmTree& tree) {
  SlurmBlocks b;
  b.virtual_leaves = tree.virtual_leaves;
  b.domains = f.has_domains();
  b.warnings = tree.warnings;
  // Pods: a leaf's spine group when that group has a parent (a level above the spines);
  // otherwise one pod. In order of their first leaf in the tree's (topology.conf) order.
  // The units that become base blocks: leaves, or on a fabric with NVLink domains the
  // domains (and, per leaf, its hosts in no domain under the leaf's name). A domain belongs
  // to the pod of its first host in leaf order; its hosts come leaf by leaf.
  struct Unit {
    std::string name;
    std::vector<HostId> hosts;
  };
  std::map<std::uint32_t, std::uint32_t> pod_of;  // spine group (kNone: the one pod) -> pod
  std::vector<std::vector<Unit>> pods;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> unit_of_domain(f.domains().size(),
                                                                      {kNone, kNone});
  for (std::uint32_t s = 0; s < tree.switches.size(); ++s) {
    const auto& sw = tree.switches[s];
    if (sw.level != 1 || sw.hosts.empty()) continue;
    const auto p = sw.parent;
    const bool split = p != kNone && tree.switches[p].parent != kNone;
    const auto [it, added] =
        pod_of.try_emplace(split ? p : kNone, static_cast<std::uint32_t>(pods.size()));
    if (added) pods.emplace_back();
    auto& units = pods[it->second];
    if (!f.has_domains()) {
      units.push_back(Unit{sw.name, sw.hosts});
      continue;
    }
    std::uint32_t rest = kNone;
    for (HostId h : sw.hosts) {
      const auto d = f.domain_of(h);
      if (d == kNone) {
        if (rest == kNone) {
          rest = static_cast<std::uint32_t>(units.size());
          units.push_back(Unit{sw.name, {}});
        }
        units[rest].hosts.push_back(h);
        continue;
      }
      auto& at = unit_of_domain[d];
      if (at.first == kNone) {
        at = {it->second, static_cast<std::uint32_t>(units.size())};
        units.push_back(Unit{f.domains()[d].name, {}});
      }
      pods[at.first][at.second].hosts.push_back(h);
    }
  }
  b.pods = static_cast<std::uint32_t>(pods.size());
  if (pods.empty()) return b;
  std::size_t largest = 0;
  for (const auto& pod : pods) {
    largest = std::max(largest, pod.size());
    for (const auto& u : pod)
      b.base_size = std::max(b.base_size, static_cast<std::uint32_t>(u.hosts.size()));
  }
  if (pods.size() > 1)
    while (b.pod_slots < largest) b.pod_slots *= 2;

  std::set<std::string> names;
  for (std::uint32_t h = 0; h < f.num_hosts(); ++h) names.insert(f.host(HostId{h}).name);
  for (const auto& s : tree.switches) names.insert(s.name);
  for (const auto& d : f.domains()) names.insert(d.name);
  std::uint32_t stems = 0;
  const auto stem = [&] {  // a name no host or switch has
    char buf[40];
    do std::snprintf(buf, sizeof buf, "fabricplace-pad%02u", ++stems);
    while (names.contains(buf));
    return std::string(buf);
  };
  const auto future = [&](SlurmBlock& blk, std::size_t n) {  // n State=FUTURE nodes
    if (n == 0) return;
    const std::string st = blk.hosts.empty() ? blk.name : stem();
    for (std::size_t i = 1; i <= n; ++i) blk.placeholder.push_back(st + "-" + std::to_string(i));
  };
  for (std::uint32_t p = 0; p < pods.size(); ++p) {
    for (auto& u : pods[p]) {
      SlurmBlock blk{u.name, std::move(u.hosts), {}, p};
      future(blk, b.base_size - blk.hosts.size());  // a short leaf, filled up to the base
      b.blocks.push_back(std::move(blk));
    }
    for (auto k = pods[p].size(); pods.size() > 1 && k < b.pod_slots; ++k) {
      SlurmBlock pad{stem(), {}, {}, p};
      future(pad, b.base_size);
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
         std::string(b.domains          ? "NVLink domains (and blocks of a leaf's hosts in none)"
                     : b.virtual_leaves ? "rail groups (a rail-optimised fabric)"
                                        : "leaf switches") +
         (b.pod_slots > 1
              ? ", pod by pod. Slurm groups them into larger\n# blocks by position, so each pod "
                "starts at a multiple of " +
                    std::to_string(b.pod_slots) + " blocks and a pod with fewer " +
                    std::string(block_noun(b.kind(), true)) +
                    " is\n"
                    "# padded with placeholders.\n"
              : std::string(b.pods > 1 ? ", in order; no pod holds more than one, so one block "
                                         "size: a job\n# larger than a base block may use any "
                                         "of them.\n"
                                       : ", in order; one pod, so one block size: a job larger "
                                         "than a\n# base block may use any of them.\n"));
  std::size_t placeholders = 0, short_leaves = 0;
  for (const auto& blk : b.blocks) {
    placeholders += blk.hosts.empty();
    short_leaves += !blk.hosts.empty() && !blk.placeholder.empty();
  }
  if (placeholders + short_leaves > 0)
    out += "# " + std::to_string(placeholders) + " placeholder block(s) and " +
           std::to_string(short_leaves) + (b.domains ? " domain(s)" : " leaf/leaves") +
           " filled up to the base size: their fabricplace-pad* nodes must be in\n"
           "# slurm.conf as State=FUTURE\n"
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
    out += "BlockName=" + blk.name + " Nodes=" + node_list(f, blk.hosts, blk.placeholder) + "\n";
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
  out += "# slurm.conf lines for the placeholders of fabricplace's topology/block export: nodes\n";
  out += "# that hold a pod's positions or fill a short leaf up to the base block size, and are\n";
  out += "# never scheduled (State=FUTURE).\n";
  for (const auto& blk : b.blocks)
    if (!blk.placeholder.empty())
      out += "NodeName=" + hostlist::compress(blk.placeholder) + " State=FUTURE\n";
  return out;
}

Result<std::string> to_slurm_yaml(const Fabric& f, const SlurmTree& tree, const SlurmBlocks& b) {
  const auto q = [](std::string_view v) { return str::json_quote(v); };
  std::string out;
  out +=
      "# Slurm topology.yaml (Slurm 25.05+; when it exists, topology.conf is ignored), written\n";
  out += "# by fabricplace from: " + str::sanitize(f.origin()) + "\n";
  out += "# Two views of one fabric: `tree` (topology/tree, the cluster default) and `block`\n";
  out += "# (topology/block); a partition takes one with Topology=tree|block in slurm.conf.\n";
  if (std::any_of(b.blocks.begin(), b.blocks.end(), [](auto& x) { return !x.placeholder.empty(); }))
    out +=
        "# Placeholder blocks' nodes must be in slurm.conf as State=FUTURE\n"
        "# (fabricplace fabric export --format slurm-block-nodes).\n";
  for (const auto& m : f.topology().incomplete)
    out += "# WARNING: INCOMPLETE fabric (a partial discovery), so this file lacks: " +
           str::sanitize(m) + "\n";
  out += "---\n";
  out += "- topology: \"tree\"\n  cluster_default: true\n  tree:\n    switches:\n";
  for (const auto& s : tree.switches) {
    if (s.name.size() > 64)
      return fail(ErrorCode::kUnsupported,
                  "switch name " + str::quoted(s.name) +
                      " is longer than the 64 characters "
                      "topology.yaml allows (rename the switch, or use --format slurm-topology)");
    out += "      - switch: " + q(s.name) + "\n";
    if (!s.children.empty()) {
      std::vector<std::string> kids;
      for (auto c : s.children) kids.push_back(tree.switches[c].name);
      out += "        children: " + q(hostlist::compress(kids)) + "\n";
    }
    if (!s.hosts.empty()) out += "        nodes: " + q(node_list(f, s.hosts)) + "\n";
  }
  out += "- topology: \"block\"\n  cluster_default: false\n  block:\n    block_sizes:\n";
  for (auto size : b.sizes) out += "      - " + std::to_string(size) + "\n";
  out += "    blocks:\n";
  for (const auto& blk : b.blocks)
    out += "      - block: " + q(blk.name) +
           "\n        nodes: " + q(node_list(f, blk.hosts, blk.placeholder)) + "\n";
  return out;
}

}  // namespace fabricplace::fabric
