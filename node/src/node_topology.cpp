#include "fabricplace/node/node_topology.hpp"

#include <hwloc.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <string_view>
#include <tuple>

#include "fabricplace/common/file_io.hpp"

namespace fabricplace::node {
namespace {

struct TopologyDeleter {
  void operator()(hwloc_topology_t t) const { hwloc_topology_destroy(t); }
};
using TopologyPtr = std::unique_ptr<hwloc_topology, TopologyDeleter>;

// PCI ids and classes (class_id is base class << 8 | subclass).
constexpr unsigned kVendorNvidia = 0x10de;
constexpr unsigned kVendorMellanox = 0x15b3;
constexpr unsigned kClassVga = 0x0300;
constexpr unsigned kClass3d = 0x0302;
constexpr unsigned kClassInfiniband = 0x0207;
constexpr unsigned kBaseDisplay = 0x03;
constexpr unsigned kBaseAccelerator = 0x12;

#ifdef HWLOC_VERSION
constexpr const char* kHwlocVersion = "hwloc " HWLOC_VERSION;
#else
constexpr const char* kHwlocVersion = "an older hwloc";
#endif

std::string errno_text(int err) {
  return err ? std::strerror(err) : "unknown error";
}

// hwloc 3 turned the OS device type into a bit set.
#if HWLOC_API_VERSION >= 0x00030000
bool osdev_is_gpu(hwloc_obj_t o) {
  return (o->attr->osdev.types & (HWLOC_OBJ_OSDEV_GPU | HWLOC_OBJ_OSDEV_COPROC)) != 0;
}
bool osdev_is_openfabrics(hwloc_obj_t o) {
  return (o->attr->osdev.types & HWLOC_OBJ_OSDEV_OPENFABRICS) != 0;
}
#else
bool osdev_is_gpu(hwloc_obj_t o) {
  return o->attr->osdev.type == HWLOC_OBJ_OSDEV_GPU ||
         o->attr->osdev.type == HWLOC_OBJ_OSDEV_COPROC;
}
bool osdev_is_openfabrics(hwloc_obj_t o) {
  return o->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS;
}
#endif

using PciKey = std::tuple<unsigned, unsigned, unsigned, unsigned>;
PciKey pci_key(hwloc_obj_t pci) {
  const auto& a = pci->attr->pcidev;
  return {a.domain, a.bus, a.dev, a.func};
}

std::string pci_bus_id(hwloc_obj_t pci) {
  const auto& a = pci->attr->pcidev;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", static_cast<unsigned>(a.domain),
                static_cast<unsigned>(a.bus), static_cast<unsigned>(a.dev),
                static_cast<unsigned>(a.func));
  return buf;
}

bool is_pci(hwloc_obj_t o) {
  return o && o->type == HWLOC_OBJ_PCI_DEVICE;
}

// Lower is preferred as the GPU's name: the CUDA device name is what users know.
int name_rank(std::string_view name) {
  constexpr std::string_view kPrefixes[] = {"cuda", "nvml", "rsmi", "opencl"};
  for (std::size_t i = 0; i < std::size(kPrefixes); ++i)
    if (name.starts_with(kPrefixes[i])) return static_cast<int>(i);
  return static_cast<int>(std::size(kPrefixes));
}

struct Device {
  hwloc_obj_t pci = nullptr;
  std::string name;
};

// GPUs: PCI display/accelerator devices with a GPU or co-processor OS device (CUDA, NVML,
// RSMI, OpenCL, ...; GL displays do not count). Without any such OS device, NVIDIA VGA/3D
// PCI devices.
std::vector<Device> find_gpus(hwloc_topology_t topo) {
  std::map<PciKey, Device> by_pci;
  for (hwloc_obj_t o = hwloc_get_next_osdev(topo, nullptr); o; o = hwloc_get_next_osdev(topo, o)) {
    if (!osdev_is_gpu(o) || !is_pci(o->parent) || !o->name) continue;
    if (o->subtype && std::string_view(o->subtype) == "Display") continue;
    const unsigned base = o->parent->attr->pcidev.class_id >> 8;
    if (base != kBaseDisplay && base != kBaseAccelerator) continue;
    auto& d = by_pci[pci_key(o->parent)];
    d.pci = o->parent;
    if (d.name.empty() || name_rank(o->name) < name_rank(d.name)) d.name = o->name;
  }
  if (by_pci.empty()) {
    for (hwloc_obj_t p = hwloc_get_next_pcidev(topo, nullptr); p;
         p = hwloc_get_next_pcidev(topo, p)) {
      const auto& a = p->attr->pcidev;
      if (a.vendor_id == kVendorNvidia && (a.class_id == kClass3d || a.class_id == kClassVga))
        by_pci[pci_key(p)] = Device{p, pci_bus_id(p)};
    }
  }
  std::vector<Device> out;
  for (auto& [key, d] : by_pci) out.push_back(std::move(d));
  return out;
}

// HCAs: OpenFabrics (verbs) OS devices on a PCI device; without any, Mellanox InfiniBand
// PCI devices named by bus id.
std::vector<Device> find_hcas(hwloc_topology_t topo) {
  std::vector<Device> out;
  for (hwloc_obj_t o = hwloc_get_next_osdev(topo, nullptr); o; o = hwloc_get_next_osdev(topo, o))
    if (osdev_is_openfabrics(o) && is_pci(o->parent) && o->name)
      out.push_back({o->parent, o->name});
  if (out.empty()) {
    for (hwloc_obj_t p = hwloc_get_next_pcidev(topo, nullptr); p;
         p = hwloc_get_next_pcidev(topo, p)) {
      const auto& a = p->attr->pcidev;
      if (a.vendor_id == kVendorMellanox && a.class_id == kClassInfiniband)
        out.push_back({p, pci_bus_id(p)});
    }
  }
  std::ranges::sort(out, [](const Device& a, const Device& b) {
    return std::forward_as_tuple(pci_key(a.pci), a.name) <
           std::forward_as_tuple(pci_key(b.pci), b.name);
  });
  return out;
}

// Object and its ancestors up to the root (Machine last).
std::vector<hwloc_obj_t> ancestry(hwloc_obj_t o) {
  std::vector<hwloc_obj_t> chain;
  for (; o; o = o->parent) chain.push_back(o);
  return chain;
}

struct Distance {
  std::size_t shared_depth = 0;  ///< depth of the deepest common ancestor (root = 0)
  unsigned hops = 0;             ///< edges from one device up to it and down to the other
};

Distance pci_distance(hwloc_obj_t a, hwloc_obj_t b) {
  const auto up_a = ancestry(a);
  const auto up_b = ancestry(b);
  for (std::size_t i = 0; i < up_a.size(); ++i) {
    const auto it = std::ranges::find(up_b, up_a[i]);
    if (it != up_b.end()) {
      const auto j = static_cast<std::size_t>(it - up_b.begin());
      return {up_a.size() - 1 - i, static_cast<unsigned>(i + j)};
    }
  }
  return {0, static_cast<unsigned>(up_a.size() + up_b.size())};  // unreachable in one tree
}

// The core level: Core objects, or PUs when the topology has none (e.g. "pack:2 pu:4").
hwloc_obj_type_t core_type(hwloc_topology_t topo) {
  return hwloc_get_type_depth(topo, HWLOC_OBJ_CORE) == HWLOC_TYPE_DEPTH_UNKNOWN ? HWLOC_OBJ_PU
                                                                                : HWLOC_OBJ_CORE;
}

std::vector<unsigned> cores_near(hwloc_topology_t topo, hwloc_obj_t pci) {
  std::vector<unsigned> cores;
  const hwloc_obj_t local = hwloc_get_non_io_ancestor_obj(topo, pci);
  if (!local || !local->cpuset) return cores;
  const auto type = core_type(topo);
  for (hwloc_obj_t c = hwloc_get_next_obj_inside_cpuset_by_type(topo, local->cpuset, type, nullptr);
       c; c = hwloc_get_next_obj_inside_cpuset_by_type(topo, local->cpuset, type, c))
    cores.push_back(c->logical_index);
  std::ranges::sort(cores);
  return cores;
}

NodeTopology extract(hwloc_topology_t topo, std::string source) {
  NodeTopology out;
  out.source = std::move(source);
  const int n = hwloc_get_nbobjs_by_type(topo, core_type(topo));
  out.cores = n > 0 ? static_cast<unsigned>(n) : 0;

  const auto hcas = find_hcas(topo);
  for (const auto& h : hcas) out.hcas.push_back(h.name);

  for (const auto& g : find_gpus(topo)) {
    Gpu gpu;
    gpu.name = g.name;
    gpu.pci_bus_id = pci_bus_id(g.pci);
    gpu.cores = cores_near(topo, g.pci);
    // Nearest HCA: 1. deepest common ancestor (same PCIe switch, then same root complex,
    // then same package, then anywhere), 2. fewer hops, 3. HCA order.
    std::optional<std::size_t> best;
    Distance best_d;
    for (std::size_t i = 0; i < hcas.size(); ++i) {
      const auto d = pci_distance(g.pci, hcas[i].pci);
      if (!best || d.shared_depth > best_d.shared_depth ||
          (d.shared_depth == best_d.shared_depth && d.hops < best_d.hops)) {
        best = i;
        best_d = d;
      }
    }
    if (best) {
      gpu.nearest_hca = hcas[*best].name;
      gpu.hops = best_d.hops;
    }
    out.gpus.push_back(std::move(gpu));
  }
  return out;
}

Result<TopologyPtr> init_topology(hwloc_type_filter_e io_filter, const std::string& source) {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0)
    return fail(ErrorCode::kIo, "hwloc_topology_init failed: " + errno_text(errno), source);
  TopologyPtr topo(raw);
  // No HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM: an XML of another machine must never be bound to.
  if (hwloc_topology_set_flags(topo.get(), 0) != 0 ||
      hwloc_topology_set_io_types_filter(topo.get(), io_filter) != 0)
    return fail(ErrorCode::kIo, "cannot configure hwloc: " + errno_text(errno), source);
  return topo;
}

// "3.0" from `<topology version="3.0">`, or nothing.
std::optional<std::pair<unsigned, unsigned>> xml_version(std::string_view text) {
  constexpr std::string_view kTag = "<topology version=\"";
  const auto at = text.find(kTag);
  if (at == std::string_view::npos) return std::nullopt;
  unsigned major = 0;
  unsigned minor = 0;
  if (std::sscanf(std::string(text.substr(at + kTag.size(), 16)).c_str(), "%u.%u", &major,
                  &minor) != 2)
    return std::nullopt;
  return std::pair{major, minor};
}

// Why hwloc rejected an XML buffer, as far as we can tell without its (stderr-only) messages.
Error explain_xml_failure(std::string_view text, const std::string& path, int err) {
  const unsigned hwloc_major = hwloc_get_api_version() >> 16;
  if (text.find("<topology") == std::string_view::npos)
    return Error{ErrorCode::kSyntax, "not an hwloc XML topology (no <topology> element)", path};
  if (const auto v = xml_version(text); v && v->first > hwloc_major) {
    return Error{ErrorCode::kUnsupported,
                 "hwloc XML format " + std::to_string(v->first) + "." + std::to_string(v->second) +
                     " needs hwloc " + std::to_string(v->first) + " or later; this build uses " +
                     kHwlocVersion + " (export with hwloc 3's `lstopo --export-xml-flags v2`)",
                 path};
  }
  return Error{ErrorCode::kSyntax,
               "hwloc could not load this XML (" + errno_text(err) +
                   "); `HWLOC_XML_VERBOSE=1 lstopo --input FILE` shows hwloc's reasons",
               path};
}

}  // namespace

Result<NodeTopology> load_hwloc_xml(const std::string& path) {
  auto text = read_file(path);
  if (!text) return std::unexpected(text.error());
  if (text->size() > static_cast<std::size_t>(INT_MAX))
    return fail(ErrorCode::kUnsupported, "larger than 2 GiB, hwloc cannot read it", path);
  auto topo = init_topology(HWLOC_TYPE_FILTER_KEEP_ALL, path);
  if (!topo) return std::unexpected(topo.error());
  // A buffer rather than the path: one read, and the bytes we diagnose are the bytes hwloc saw.
  // hwloc 2 parses the buffer here already; either call may reject it.
  errno = 0;
  if (hwloc_topology_set_xmlbuffer(topo->get(), text->data(), static_cast<int>(text->size())) !=
          0 ||
      hwloc_topology_load(topo->get()) != 0) {
    const int err = errno;
    if (err == ENOSYS)
      return fail(ErrorCode::kUnsupported, "this hwloc was built without XML support", path);
    return std::unexpected(explain_xml_failure(*text, path, err));
  }
  return extract(topo->get(), path);
}

Result<NodeTopology> load_hwloc_live() {
  const std::string source = "hwloc live";
  auto topo = init_topology(HWLOC_TYPE_FILTER_KEEP_IMPORTANT, source);
  if (!topo) return std::unexpected(topo.error());
  errno = 0;
  if (hwloc_topology_load(topo->get()) != 0)
    return fail(ErrorCode::kIo, "hwloc could not discover this machine: " + errno_text(errno),
                source);
  return extract(topo->get(), source);
}

std::vector<LocalRankBinding> bind_local_ranks(const NodeTopology& topo, unsigned tasks_per_node) {
  std::vector<LocalRankBinding> out(tasks_per_node);
  std::vector<unsigned> all(topo.cores);
  std::iota(all.begin(), all.end(), 0u);

  // Ranks grouped by the core pool they draw on, in rank order.
  std::map<std::vector<unsigned>, std::vector<unsigned>> pools;
  for (unsigned k = 0; k < tasks_per_node; ++k) {
    auto& b = out[k];
    b.local_rank = k;
    std::vector<unsigned> pool = all;
    if (k < topo.gpus.size()) {
      const auto& gpu = topo.gpus[k];
      b.gpu = k;
      b.hca = gpu.nearest_hca;
      pool.clear();
      for (unsigned c : gpu.cores)
        if (c < topo.cores) pool.push_back(c);  // a hand-built NodeTopology may disagree
      if (pool.empty()) pool = all;
    }
    pools[std::move(pool)].push_back(k);
  }

  for (const auto& [pool, ranks] : pools) {
    const std::size_t n = pool.size();
    const std::size_t m = ranks.size();
    if (n == 0) continue;
    if (m > n) {
      for (std::size_t j = 0; j < m; ++j) out[ranks[j]].cores = {pool[j % n]};
      continue;
    }
    // Contiguous shares; the first n % m ranks get one core more.
    std::size_t first = 0;
    for (std::size_t j = 0; j < m; ++j) {
      const std::size_t size = n / m + (j < n % m ? 1 : 0);
      out[ranks[j]].cores.assign(pool.begin() + static_cast<std::ptrdiff_t>(first),
                                 pool.begin() + static_cast<std::ptrdiff_t>(first + size));
      first += size;
    }
  }
  return out;
}

}  // namespace fabricplace::node
