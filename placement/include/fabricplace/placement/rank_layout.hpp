// SPDX-License-Identifier: GPL-2.0-or-later
// Rank layouts: which host runs which rank, for launchers that take an explicit order
// (Open MPI rankfile, ordered hostfiles, SLURM_HOSTFILE, torchrun static rendezvous, JSON).
//
// NCCL numbers nodes by their first appearance in rank order and chains node n to n + 1,
// so the host order here is the inter-node ring: the fabric-aware ring order of
// placement::ring_order (leaves contiguous, pods contiguous), each host's ranks contiguous,
// TP groups contiguous.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "fabricplace/common/error.hpp"
#include "fabricplace/placement/placement.hpp"

namespace fabricplace::placement {

struct RankLayout {
  std::vector<fabric::HostId> hosts;  ///< ring order; host i runs ranks [i K, (i + 1) K)
  JobShape shape;                     ///< the job's (nodes = hosts, K = shape.ranks_per_node)
  std::vector<std::string> leaves;    ///< blocks in ring order
  std::uint32_t inter_leaf_edges = 0;
  std::uint32_t tp_groups_split = 0;  ///< TP groups whose hosts span leaves
  std::vector<std::string> warnings;

  /// K: ranks per host.
  [[nodiscard]] std::uint32_t tasks_per_node() const { return shape.ranks_per_host(); }
  /// Ranks per TP group (consecutive ranks): JobShape::ranks_per_group().
  [[nodiscard]] std::uint32_t tp_ranks() const { return shape.ranks_per_group(); }
  [[nodiscard]] std::uint32_t ranks() const {
    return static_cast<std::uint32_t>(hosts.size()) * tasks_per_node();
  }
};

/// An HCA of a rail-optimised fabric as NCCL_IB_HCA names it with its rail and plane (NCCL
/// 2.30 reads `<hca>[:<port>[:<rail>[:<plane>]]]` and never crosses planes when it knows
/// both): `mlx5_2:1:2:0`.
struct HcaRail {
  std::string device;  ///< "mlx5_2"
  unsigned port = 1;   ///< its linked port
  unsigned rail = 0;   ///< Topology::rails index (device k of every host)
  unsigned plane = 0;  ///< the connected part (subnet) its leaves are in, from 0 in rail order
  [[nodiscard]] std::string nccl() const;  ///< "mlx5_2:1:2:0"
};
/// What a rank layout reads: the hosts' names and their blocks (leaves) and pods. Built
/// from a prepared Context, or loaded from the compact host map that `fabricplace fabric
/// export --format hostmap` writes (the SPANK plugin reads that at every step launch: a
/// fraction of the canonical JSON's size and parse time).
struct HostMap {
  std::vector<std::string> names;                        ///< per HostId
  std::unordered_map<std::string, std::uint32_t> index;  ///< name -> HostId, built with names
  Blocks blocks;                                         ///< of_host, hosts, name and pod are set
  std::string origin;                                    ///< where the fabric came from
  std::string generation;  ///< `slurm sync`'s file-set id ("# generation: G"); "" if none
  /// The fabric's rails (hca_rails; "# rails:"), for the plugin's NCCL_IB_HCA entries.
  std::vector<HcaRail> rails;
};
HostMap host_map(const Context& c);

/// The host map as text (format 1):
///   fabricplace-hostmap 1
///   # generation: G                  (written by `slurm sync` only; docs/operations.md)
///   # blocks: domain                 (blocks that are not leaves: rail-group, domain)
///   # rails: mlx5_0:1:0:0 ...        (a rail-optimised fabric's HCAs, HcaRail::nccl())
///   # from: ORIGIN
///   leaf NAME POD HOST HOST ...      (leaves in topology.conf order, hosts in ring order)
std::string to_host_map_text(const HostMap& m);
/// The same as a Lua table for slurmctld's job_submit.lua (`fabric export --format lua`):
///   return { version = 1, origin = "...", leaves = { { name = "leaf01", pod = 0,
///            hosts = { "node001", ... } }, ... } }
std::string to_lua_table(const HostMap& m);
/// Parses it back; errors name the file, the line and what was expected.
Result<HostMap> parse_host_map(std::string_view text, const std::string& file);
/// The HostIds of a Slurm hostlist; unknown hosts are an error naming them (up to 5).
Result<std::vector<fabric::HostId>> resolve_hosts(const HostMap& m, std::string_view expr,
                                                  std::string_view what);

/// Recomputes a layout's leaves (in ring order), inter-leaf edges and split TP groups from its
/// hosts and shape (after its hosts were re-ordered, e.g. route-aware): measure_ring().
void measure_layout(const HostMap& m, RankLayout& l);

/// Orders `hosts` (an allocation) for ranks: the ring order, with TP groups of the shape's
/// hosts_per_group() hosts kept inside leaves where the allocation allows. The shape comes
/// from JobShape::make() with the host count for nodes (its rules, worded for the caller's
/// options, are the only tiling checks). kUsage errors: no hosts, a host twice, a shape for
/// another number of nodes.
Result<RankLayout> rank_layout(const HostMap& m, std::vector<fabric::HostId> hosts,
                               const JobShape& shape);
inline Result<RankLayout> rank_layout(const Context& c, std::vector<fabric::HostId> hosts,
                                      const JobShape& shape) {
  return rank_layout(host_map(c), std::move(hosts), shape);
}

/// Cores of one node, for Open MPI `slot=`: rank with local rank k of K gets cores
/// [k C / K, (k + 1) C / K) (all of them shared when K > C: core k mod C).
struct CoreMap {
  std::uint32_t cores = 1;
};

/// What local rank k uses on every node, when the node's topology is known (hwloc: GPU k,
/// its nearest HCA, the cores near it). Nodes are assumed alike.
struct LocalRank {
  std::string slot;             ///< Open MPI rankfile slot list of logical cores, "0-5"
  std::optional<unsigned> gpu;  ///< CUDA device index (PCI bus id order)
  std::string hca;              ///< verbs device for NCCL_IB_HCA ("mlx5_0")
};

/// "0-3,8-11" from sorted core indices (an Open MPI rankfile slot list).
std::string core_list(const std::vector<unsigned>& cores);

/// The rails of a rail-optimised fabric's HCAs, in rail order; empty on other fabrics (NCCL's
/// own topology search then stands).
std::vector<HcaRail> hca_rails(const fabric::Fabric& f);
/// Whether two of these hosts share an NVLink domain (the job then talks over Multi-Node
/// NVLink inside it: NCCL_MNNVL_ENABLE).
bool shares_domain(const fabric::Fabric& f, const std::vector<fabric::HostId>& hosts);
/// The same from a host map whose blocks are NVLink domains (a host in none is a block of
/// its own, so two hosts in one block share a domain): what the plugin knows at launch.
bool shares_domain(const HostMap& m, const std::vector<fabric::HostId>& hosts);

enum class RankFormat : std::uint8_t { kOpenMpi, kHostfile, kMpich, kSlurm, kTorchrun, kJson };
std::optional<RankFormat> parse_rank_format(std::string_view name);
inline constexpr const char* kRankFormats = "openmpi, hostfile, mpich, slurm, torchrun, json";

struct RankFileOptions {
  CoreMap cores;                      ///< openmpi slots when `local` is empty
  std::vector<LocalRank> local;       ///< per local rank (tasks_per_node entries), or empty
  std::string node_source;            ///< where `local` came from, for the torchrun header
  std::uint32_t master_port = 29500;  ///< torchrun
  std::string origin;                 ///< provenance line for the comment headers
  /// The fabric's rails (hca_rails): NCCL_IB_HCA entries then carry rail and plane.
  std::vector<HcaRail> rails;
  /// Hosts of the job share an NVLink domain (shares_domain): NCCL_MNNVL_ENABLE=1, so that a
  /// domain that cannot do MNNVL (IMEX not running) is an error, not a silent fall back to
  /// the NICs.
  bool mnnvl = false;
};

std::string write_rank_file(const HostMap& m, const RankLayout& l, RankFormat f,
                            const RankFileOptions& o);
inline std::string write_rank_file(const Context& c, const RankLayout& l, RankFormat f,
                                   const RankFileOptions& o) {
  return write_rank_file(host_map(c), l, f, o);
}

}  // namespace fabricplace::placement
