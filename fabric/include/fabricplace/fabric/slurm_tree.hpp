// SPDX-License-Identifier: GPL-2.0-or-later
// The one-parent switch tree that Slurm's topology/tree plugin works on, derived from a
// Fabric, and its topology.conf form.
//
// Slurm keeps one parent per switch (_find_child_switches in topology_tree.c overwrites it
// for every listing), so parallel switches become one Slurm switch, as NVIDIA topograph does:
// at each level above the leaves, switches that share a child are merged (the spines of a
// pod, the cores of all planes). Leaf, spine and core levels stay distinct and every host
// sits under its real leaf. On rail-optimised fabrics, where a host hangs under one leaf
// per rail (Slurm 22.05 would warn and keep one), each rail group becomes one virtual leaf
// holding its hosts.
//
// Order matters: Slurm breaks ties by the order of switches in topology.conf, so leaves come
// in the fabric's deterministic order (ascending GUID of their first member), then each
// upper level in the order of its first member. The slurm-tree placement policy runs on
// exactly this structure.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fabricplace/common/error.hpp"
#include "fabricplace/fabric/fabric.hpp"

namespace fabricplace::fabric {

struct SlurmSwitch {
  std::string name;                     ///< unique, Slurm-safe
  std::uint8_t level = 1;               ///< 1 = leaf
  std::vector<NodeId> members;          ///< fabric switches merged into this one
  std::vector<std::uint32_t> children;  ///< child Slurm switches (upper levels)
  std::vector<HostId> hosts;            ///< hosts (leaves only), natural order
  std::uint32_t parent = kNone;
};

struct SlurmTree {
  std::vector<SlurmSwitch> switches;  ///< in topology.conf order
  bool virtual_leaves = false;        ///< rail-optimised: one leaf per rail group
  std::vector<std::string> warnings;  ///< e.g. hosts left out (no leaf)
};

SlurmTree slurm_tree(const Fabric& fabric);

/// What a block (a base block of the Slurm exports, a zone placement keeps groups in) is,
/// and the one place that names it: a leaf switch's hosts, a rail group (a rail-optimised
/// fabric's virtual leaf), or an NVLink domain (a fabric with domains: they are the blocks).
enum class BlockKind : std::uint8_t { kLeaf, kRailGroup, kDomain };
/// Domains first (they replace the leaves), then rail groups, else leaves.
BlockKind block_kind(const Fabric& fabric, const SlurmTree& tree);
/// "leaf" / "leaves", "rail group" / "rail groups", "NVLink domain" / "NVLink domains".
std::string_view block_noun(BlockKind k, bool plural = false);
/// The word in compounds and in files ("inter-leaf", "inter-rail-group", "inter-domain";
/// the host map's "# blocks:" line): "leaf", "rail-group", "domain".
std::string_view block_tag(BlockKind k);
/// block_tag() read back.
std::optional<BlockKind> parse_block_tag(std::string_view tag);
/// Whether Slurm's topology files can be written from `tree`: at least one leaf with hosts.
/// Without one, topology.conf (tree or block) and topology.yaml would name no switch and no
/// block, leaving every node outside the topology, and slurmctld 25.11 stops on such a file:
/// an error, so that nothing empty is ever written.
Result<void> check_slurm_topology(const SlurmTree& tree);
/// `with_link_speed` false leaves out LinkSpeed= (Slurm ignores it): `slurm sync`'s
/// topology.conf, which link health then never changes.
std::string to_slurm_topology(const Fabric& fabric, const SlurmTree& tree,
                              bool with_link_speed = true);
/// Per-leaf node features for slurm.conf: `NodeName=HOSTS Features=LEAF[,SPINEGROUP...]`,
/// one line per leaf (the names up to, not including, the root switch).
std::string to_slurm_features(const Fabric& fabric, const SlurmTree& tree);

}  // namespace fabricplace::fabric
