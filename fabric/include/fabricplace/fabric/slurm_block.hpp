// SPDX-License-Identifier: GPL-2.0-or-later
// Slurm's topology/block view of a Fabric (Slurm 23.11+): base blocks, BlockSizes, and the
// topology.conf that states them.
//
// A base block is a leaf of the Slurm tree (slurm_tree.hpp): a leaf switch, or on a
// rail-optimised fabric a rail group; on a fabric with NVLink domains, a domain (placed in
// the pod of its first host; a leaf's hosts in no domain stay a block of that leaf). Slurm
// aggregates base blocks into higher-level blocks strictly by their position in topology.conf (a
// block of 2^k base blocks is positions [j * 2^k, (j + 1) * 2^k)), so the order and the gaps matter
// (docs/slurm.md, "topology/block"):
//  - Base blocks come pod by pod (a pod = the leaves under one spine group, when the tree
//    has a level above the spines; otherwise the whole fabric is one pod), each pod at a
//    position that is a multiple of S, the smallest power of two that holds the largest pod.
//  - A pod with fewer leaves is padded with placeholder blocks up to S, so a missing leaf
//    never shifts the pods after it. Slurm 24.11 wants at least the base size of defined
//    nodes in every block, so a placeholder holds that many nodes that slurm.conf must
//    declare State=FUTURE (never scheduled): to_slurm_block_nodes() writes those lines.
//  - BlockSizes = the base size (the most hosts of any base block; a shorter one is filled up
//    with State=FUTURE nodes, as 24.11 refuses a block with fewer nodes than the first size)
//    and, when there are several pods, base * S: a job that needs more than one base block
//    stays inside one pod when one pod can hold it.
//
// The slurm-block placement policy runs on exactly this structure.
#pragma once

#include <string>
#include <vector>

#include "fabricplace/common/error.hpp"
#include "fabricplace/fabric/fabric.hpp"
#include "fabricplace/fabric/slurm_tree.hpp"

namespace fabricplace::fabric {

struct SlurmBlock {
  std::string name;
  std::vector<HostId> hosts;             ///< natural order; empty for a placeholder
  std::vector<std::string> placeholder;  ///< a placeholder's State=FUTURE node names
  std::uint32_t pod = 0;                 ///< position / pod_slots
};

struct SlurmBlocks {
  std::vector<SlurmBlock> blocks;    ///< base blocks in topology.conf order
  std::uint32_t base_size = 0;       ///< BlockSizes' first value (nodes)
  std::uint32_t pod_slots = 1;       ///< S: base blocks per pod position (a power of two)
  std::vector<std::uint32_t> sizes;  ///< BlockSizes, in nodes
  std::uint32_t pods = 0;
  bool virtual_leaves = false;        ///< rail-optimised: base blocks are rail groups
  bool domains = false;               ///< base blocks are NVLink domains
  std::vector<std::string> warnings;  ///< the tree's (hosts left out, ...)
  /// What the base blocks are (block_noun names them).
  [[nodiscard]] BlockKind kind() const {
    return domains ? BlockKind::kDomain : virtual_leaves ? BlockKind::kRailGroup : BlockKind::kLeaf;
  }
};

SlurmBlocks slurm_blocks(const Fabric& fabric, const SlurmTree& tree);
/// topology.conf for TopologyPlugin=topology/block: BlockName= lines, then BlockSizes=.
std::string to_slurm_block(const Fabric& fabric, const SlurmBlocks& blocks);
/// topology.yaml (Slurm 25.05+: when it exists, topology.conf is ignored): two topologies of
/// the same fabric, `tree` (cluster_default, the tree export's switches) and `block` (the
/// blocks above, placeholders included, and block_sizes); a partition picks one with
/// `Topology=` in slurm.conf. Strings are double-quoted (JSON escapes, valid YAML); a switch
/// name longer than Slurm's 64 characters is an error.
Result<std::string> to_slurm_yaml(const Fabric& fabric, const SlurmTree& tree,
                                  const SlurmBlocks& blocks);
/// The slurm.conf lines that declare the placeholders' nodes (`NodeName=... State=FUTURE`);
/// only comments when there is no placeholder.
std::string to_slurm_block_nodes(const SlurmBlocks& blocks);

}  // namespace fabricplace::fabric
