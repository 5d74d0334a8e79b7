// SPDX-License-Identifier: GPL-2.0-or-later
// Per-node GPU / InfiniBand HCA / CPU-core affinity, read through hwloc.
//
// Contract:
// - Sources: an hwloc XML file (any machine; nothing is bound and this machine is never
//   queried) or the live machine. Both give the same NodeTopology value; it holds no hwloc
//   handle, so it is cheap to copy and safe to share between threads.
// - Errors: load_* return Result<NodeTopology>; the Error names the file (or "hwloc live")
//   and what failed. A topology without GPUs or without HCAs is not an error.
// - Isolation: an XML file is untrusted input, and hwloc (with libxml2) can crash or hang on a
//   malformed one. load_hwloc_xml therefore parses it in a short-lived child process, under
//   memory, CPU and wall-clock limits; a crash, a hang or an exhausted limit there is an
//   Error here, never a crash of the caller (the CLI, or slurmstepd through the plugin).
//   load_hwloc_live stays in process: it reads this machine, not a file.
// - Indices: cores are hwloc logical indices of Core objects (dense, 0..cores-1, the numbering
//   Open MPI's rankfile `slot=` uses), not OS/physical ids.
// - No Slurm, no fabric: this library only knows one node.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fabricplace/common/error.hpp"

namespace fabricplace::node {

/// One GPU (one PCI device, whatever number of OS devices hwloc attached to it).
struct Gpu {
  /// hwloc OS device name: "cuda0" preferred, then "nvml0", "rsmi0", ...; the PCI bus id when
  /// hwloc reported the PCI device only.
  std::string name;
  std::string pci_bus_id;       ///< "0000:34:00.0"
  std::vector<unsigned> cores;  ///< logical Core indices of the GPU's locality (its package or
                                ///< NUMA group: the nearest non-I/O ancestor's cpuset), sorted
  std::string nearest_hca;      ///< e.g. "mlx5_0"; empty when the node has no HCA
  unsigned hops = 0;            ///< edges between the GPU's and that HCA's PCI devices in the
                                ///< hwloc tree (4 = same PCIe switch on a DGX-2); 0 if no HCA

  friend bool operator==(const Gpu&, const Gpu&) = default;
};

struct NodeTopology {
  std::string source;  ///< the XML path, or "hwloc live"
  /// Physical cores (hwloc Core objects; PUs when the topology has no Core level). Every
  /// core index in this value is < cores.
  unsigned cores = 0;
  /// In PCI bus id order, which is CUDA's order with CUDA_DEVICE_ORDER=PCI_BUS_ID (and
  /// nvidia-smi's): GPU k is CUDA device k.
  std::vector<Gpu> gpus;
  /// InfiniBand/RoCE verbs devices ("mlx5_N": hwloc OpenFabrics OS devices), in PCI bus id
  /// order. Without OS devices (a filtered XML): Mellanox class-0207 PCI devices, named by
  /// their PCI bus id, which NCCL_IB_HCA does not accept.
  std::vector<std::string> hcas;

  friend bool operator==(const NodeTopology&, const NodeTopology&) = default;
};

/// Largest hwloc XML file load_hwloc_xml accepts: 64 MiB. Real exports are a few hundred KB
/// (the DGX-2H of tests/data/hwloc with all its I/O devices: 52 KB), so anything this large is a
/// mistake or hostile.
inline constexpr std::uint64_t kMaxHwlocXmlBytes = std::uint64_t{64} << 20;

/// Bounds on one load_hwloc_xml call (docs/node-topology.md, "Malformed and hostile files").
/// The defaults suit every real node; tests and benchmarks lower them.
struct XmlLoadLimits {
  std::uint64_t max_bytes = kMaxHwlocXmlBytes;  ///< file size; larger files are refused unread
  std::chrono::milliseconds timeout{10'000};    ///< wall clock for the reader process
  unsigned cpu_seconds = 10;                    ///< its CPU time (RLIMIT_CPU)
  /// Address space the reader may add to what it inherits from the caller (RLIMIT_AS; not
  /// applied under AddressSanitizer, whose shadow memory needs terabytes of address space).
  std::uint64_t memory_bytes = std::uint64_t{1} << 30;
};

/// Reads an hwloc XML export (`lstopo file.xml`, `hwloc-gather-topology`); "-" reads standard
/// input. The file is read here (bounded by limits.max_bytes), checked cheaply, and handed to
/// hwloc in a child process (see Isolation above). Errors, all naming the file:
/// - kIo: it cannot be opened or read, or is not a regular file (a FIFO, a device, a
///   directory); the reader process cannot be started.
/// - kSyntax: not hwloc XML; hwloc rejected it; hwloc crashed on it ("hwloc crashed reading it
///   (signal 11, SIGSEGV); the file is malformed").
/// - kUnsupported: larger than limits.max_bytes; hwloc exceeded the time, CPU or memory limit;
///   an XML format newer than the linked hwloc (hwloc 3's format 3.0 under hwloc 2).
Result<NodeTopology> load_hwloc_xml(const std::string& path);
Result<NodeTopology> load_hwloc_xml(const std::string& path, const XmlLoadLimits& limits);

/// Discovers this machine (restricted to this process's allowed CPUs, as in a Slurm job).
Result<NodeTopology> load_hwloc_live();

namespace detail {
/// load_hwloc_xml without the child process: hwloc parses the file in this process, so a
/// malformed file can crash it. Only for benchmarks (the isolation's cost) and for tests that
/// check both paths agree; never for a file you did not make.
Result<NodeTopology> load_hwloc_xml_in_process(const std::string& path);
/// The checks load_hwloc_xml makes on the text before hwloc sees it (an XML start, no NUL, the
/// PU and NUMA node numbers: docs/node-topology.md): the first problem, or nothing. For the
/// benchmark of what they cost beside hwloc's own parse.
std::optional<Error> precheck_hwloc_xml(std::string_view text, const std::string& path);
}  // namespace detail

/// What one local rank should use.
struct LocalRankBinding {
  unsigned local_rank = 0;
  std::optional<unsigned> gpu;  ///< index into NodeTopology::gpus (CUDA_VISIBLE_DEVICES)
  std::string hca;              ///< NCCL_IB_HCA; empty without a GPU or without HCAs
  std::vector<unsigned> cores;  ///< logical Core indices (rankfile slot=), never empty
                                ///< when the topology has cores
};

/// Pairs local rank k with GPU k when k < gpus (other ranks get no GPU and no HCA) and with
/// that GPU's nearest HCA. Cores: the ranks drawing on the same core pool (a GPU's locality,
/// or all cores for ranks without a GPU) split it into contiguous, near-equal shares in rank
/// order; when they outnumber its cores, rank i of the pool gets core pool[i % size].
std::vector<LocalRankBinding> bind_local_ranks(const NodeTopology& topo, unsigned tasks_per_node);

}  // namespace fabricplace::node
