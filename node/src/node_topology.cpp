// SPDX-License-Identifier: GPL-2.0-or-later
#include "fabricplace/node/node_topology.hpp"

#include <fcntl.h>
#include <hwloc.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define FABRICPLACE_NODE_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define FABRICPLACE_NODE_SANITIZED 1
#endif
#endif
#ifdef FABRICPLACE_NODE_SANITIZED
#include <sanitizer/common_interface_defs.h>
#endif
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <numeric>
#include <optional>
#include <regex>
#include <string_view>
#include <tuple>

#include "fabricplace/common/file_io.hpp"
#include "fabricplace/common/strings.hpp"

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
Error explain_xml_failure(std::string_view text, const std::string& path, int err,
                          const std::string& memory_note) {
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
  if (err == ENOMEM)
    return Error{
        ErrorCode::kUnsupported,
        "hwloc ran out of memory reading it" + memory_note + "; the file is malformed or hostile",
        path};
  return Error{ErrorCode::kSyntax,
               "hwloc could not load this XML (" + errno_text(err) +
                   "); `HWLOC_XML_VERBOSE=1 lstopo --input FILE` shows hwloc's reasons",
               path};
}

// ---- Reading the file (in the caller's process) ----

std::string size_text(std::uint64_t bytes) {
  if (bytes >= (1u << 30) && bytes % (1u << 30) == 0) return std::to_string(bytes >> 30) + " GiB";
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes) + " bytes";
}

const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

Error too_large(const std::string& path, std::uint64_t max) {
  return Error{ErrorCode::kUnsupported,
               "larger than " + size_text(max) +
                   ", the limit for an hwloc XML file (real ones are a few hundred KB)",
               path};
}

// The whole file, at most `max` bytes; only regular files (and "-", standard input). The open
// does not block on a FIFO (O_NONBLOCK), and fstat on the open descriptor decides, so the
// file cannot be swapped between the check and the read.
Result<std::string> read_bounded(const std::string& path, std::uint64_t max) {
  if (path.empty()) return fail(ErrorCode::kUsage, "empty file name");
  Fd own;
  int fd = 0;
  if (path != "-") {
    own.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (own.fd < 0) return fail(ErrorCode::kIo, "cannot open: " + errno_text(errno), path);
    fd = own.fd;
    struct stat st {};
    if (::fstat(fd, &st) != 0)
      return fail(ErrorCode::kIo, "cannot stat: " + errno_text(errno), path);
    if (!S_ISREG(st.st_mode))
      return fail(ErrorCode::kIo,
                  std::string("is ") + file_kind(st.st_mode) + ", expected an hwloc XML file",
                  path);
    if (static_cast<std::uint64_t>(st.st_size) > max) return std::unexpected(too_large(path, max));
  }
  std::string data;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(ErrorCode::kIo, "read error: " + errno_text(errno), path);
    }
    if (n == 0) break;
    if (data.size() + static_cast<std::size_t>(n) > max)
      return std::unexpected(too_large(path, max));
    data.append(buf, static_cast<std::size_t>(n));
  }
  if (data.starts_with("\xEF\xBB\xBF")) data.erase(0, 3);  // a UTF-8 byte order mark
  return data;
}

// ---- PU and NUMA node numbers (before hwloc sees them) ----
//
// hwloc sizes topology-wide bitmaps by the largest PU and NUMA node os_index it meets. One PU
// or NUMA node without os_index (hwloc takes "unknown", 2^32 - 1) or with a huge one makes it
// allocate and sweep 512 MiB bitmaps: seconds of work and most of the reader's memory for a
// 3 KB file. Linux numbers at most 8192 CPUs and 1024 NUMA nodes, so we refuse indexes from
// kOsIndexLimit on. The scan reads every start tag whose local name is "object" the way an XML
// parser does (comments, CDATA sections and processing instructions skipped, attributes quoted
// with ' or "); a tag it cannot read, or a type or os_index written with a character
// reference, is refused: hwloc's exports never contain one, and the check must not be a
// weaker reader than libxml2.
constexpr unsigned long kOsIndexLimit = 1ul << 20;

bool xml_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// Where a comment, CDATA section or processing instruction starting at `i` ends (npos when it
// does not), or nothing when none starts there.
std::optional<std::size_t> markup_end(std::string_view text, std::size_t i) {
  for (const auto& [open, close] :
       {std::pair{std::string_view("<!--"), std::string_view("-->")},
        std::pair{std::string_view("<![CDATA["), std::string_view("]]>")},
        std::pair{std::string_view("<?"), std::string_view("?>")}}) {
    if (!text.substr(i).starts_with(open)) continue;
    const auto end = text.find(close, i + open.size());
    return end == std::string_view::npos ? end : end + close.size();
  }
  return std::nullopt;
}

std::optional<Error> check_object_indexes(std::string_view text, const std::string& path) {
  constexpr auto npos = std::string_view::npos;
  const auto refuse = [&](std::size_t at, const std::string& what) {
    return Error{ErrorCode::kSyntax, what, path, str::line_at(text, at)};
  };
  // The bytes are read as UTF-8 (ASCII for the markup): a file declaring another encoding
  // (UTF-7 writes "<" as "+ADw-") would show libxml2 tags this scan cannot see.
  if (const auto start = text.find_first_not_of(" \t\r\n");
      start != npos && text.substr(start).starts_with("<?xml")) {
    const auto end = text.find("?>", start);
    if (end == npos) return std::nullopt;
    static const std::regex kEncoding(R"(encoding[ \t\r\n]*=[ \t\r\n]*["']([^"']*)["'])");
    const std::string decl(text.substr(start, end - start));
    if (std::smatch m; std::regex_search(decl, m, kEncoding)) {
      std::string enc = m[1].str();
      std::ranges::transform(enc, enc.begin(), [](unsigned char c) { return std::toupper(c); });
      if (enc != "UTF-8" && enc != "UTF8" && enc != "US-ASCII" && enc != "ASCII")
        return refuse(start, "declares encoding " + str::quoted(m[1].str(), 32) +
                                 "; hwloc's XML is UTF-8");
    }
  }
  std::size_t i = 0;
  while ((i = text.find('<', i)) != npos) {
    // Markup that holds no element is skipped whole; an unterminated one ends the scan (hwloc
    // rejects the file).
    if (const auto skip = markup_end(text, i)) {
      if (*skip == npos) return std::nullopt;
      i = *skip;
      continue;
    }
    if (text.substr(i).starts_with("<!DOCTYPE")) {
      // Only the one hwloc writes: an internal subset, or a literal holding "<!--" or "<?",
      // would hide what follows from this scan and not from libxml2.
      const auto end = text.find('>', i);
      if (end == npos) return std::nullopt;
      static const std::regex kDoctype(
          R"(<!DOCTYPE[ \t\r\n]+topology([ \t\r\n]+SYSTEM[ \t\r\n]+"[A-Za-z0-9._-]+\.dtd")?[ \t\r\n]*>)");
      if (!std::regex_match(text.begin() + static_cast<std::ptrdiff_t>(i),
                            text.begin() + static_cast<std::ptrdiff_t>(end) + 1, kDoctype))
        return refuse(i, "a DOCTYPE hwloc's exports never have (expected <!DOCTYPE topology "
                         "SYSTEM \"hwloc2.dtd\">, or none)");
      i = end + 1;
      continue;
    }
    {
      // The element name, and its local part (after a namespace prefix).
      std::size_t p = i + 1;
      while (p < text.size() && !xml_space(text[p]) && text[p] != '>' && text[p] != '/') ++p;
      std::string_view name = text.substr(i + 1, p - i - 1);
      if (const auto colon = name.rfind(':'); colon != npos) name.remove_prefix(colon + 1);
      if (name != "object") {
        i = p;
        continue;
      }
      const std::size_t tag = i;
      std::optional<std::string_view> type;
      std::optional<std::string_view> os_index;
      for (;;) {
        while (p < text.size() && xml_space(text[p])) ++p;
        if (p >= text.size()) return std::nullopt;  // truncated: hwloc rejects it
        if (text[p] == '>' || text.substr(p).starts_with("/>")) break;
        const std::size_t at = p;
        while (p < text.size() && !xml_space(text[p]) && text[p] != '=' && text[p] != '>' &&
               text[p] != '/')
          ++p;
        const std::string_view attr = text.substr(at, p - at);
        while (p < text.size() && xml_space(text[p])) ++p;
        if (p >= text.size()) return std::nullopt;  // truncated: hwloc rejects it
        if (attr.empty() || text[p] != '=')
          return refuse(tag, "an <object> tag hwloc's XML never has (expected name=\"value\" "
                             "attributes)");
        ++p;
        while (p < text.size() && xml_space(text[p])) ++p;
        if (p >= text.size()) return std::nullopt;
        const char quote = text[p];
        const bool quoted = quote == '"' || quote == '\'';
        const auto end = quoted ? text.find(quote, p + 1) : npos;
        if (quoted && end == npos) return std::nullopt;  // the rest is one value: hwloc rejects it
        if (end == npos)
          return refuse(tag, "an <object> tag hwloc's XML never has (attribute " +
                                 str::quoted(attr) + " has no quoted value)");
        const std::string_view value = text.substr(p + 1, end - p - 1);
        p = end + 1;
        // hwloc's libxml2 importer reads an attribute by its local name ("h:os_index" is
        // os_index), the last one winning: compare local names, and refuse two.
        std::string_view local = attr;
        if (const auto colon = local.rfind(':'); colon != npos && !attr.starts_with("xmlns"))
          local.remove_prefix(colon + 1);
        if (local != "type" && local != "os_index") continue;
        if (value.find('&') != npos)
          return refuse(tag, "<object> attribute " + str::quoted(attr) +
                                 " written with a character reference; hwloc writes it plainly");
        if ((local == "type" ? type : os_index).has_value())
          return refuse(tag, "<object> has attribute " + str::quoted(local) + " twice");
        (local == "type" ? type : os_index) = value;
      }
      if (!type) return refuse(tag, "an <object> without a type attribute");
      // The type as hwloc reads it (case-insensitive, prefixes: "pu", "node", "numa" ...).
      hwloc_obj_type_t t{};
      if (hwloc_type_sscanf(std::string(*type).c_str(), &t, nullptr, 0) == 0 &&
          (t == HWLOC_OBJ_PU || t == HWLOC_OBJ_NUMANODE)) {
        const std::string kind = t == HWLOC_OBJ_PU ? "a PU" : "a NUMA node";
        if (!os_index)
          return refuse(tag, kind + " without os_index (hwloc would size its CPU and NUMA "
                                    "bitmaps for index 2^32-1)");
        unsigned long n = 0;
        const bool digits = !os_index->empty() && os_index->size() <= 10 &&
                            os_index->find_first_not_of("0123456789") == npos;
        if (digits) n = std::stoul(std::string(*os_index));
        if (!digits || n >= kOsIndexLimit)
          return refuse(tag, kind + " with os_index=" + str::quoted(*os_index, 32) +
                                 "; expected a decimal number below " +
                                 std::to_string(kOsIndexLimit) +
                                 " (Linux numbers at most 8192 CPUs and 1024 NUMA nodes)");
      }
      i = p;
    }
  }
  return std::nullopt;
}

// Cheap checks before any process is started: clearer messages, and the PU and NUMA node
// numbers hwloc would otherwise size its bitmaps by (check_object_indexes). A file that passes
// them and still breaks hwloc is what the reader process contains.
std::optional<Error> precheck(std::string_view text, const std::string& path) {
  if (text.find("<topology") == std::string_view::npos)
    return Error{ErrorCode::kSyntax, "not an hwloc XML topology (no <topology> element)", path};
  const auto start = text.find_first_not_of(" \t\r\n");
  const auto head = text.substr(start == std::string_view::npos ? text.size() : start);
  if (!head.starts_with("<?xml") && !head.starts_with("<!DOCTYPE") && !head.starts_with("<!--") &&
      !head.starts_with("<topology"))
    return Error{ErrorCode::kSyntax,
                 "not an hwloc XML topology (it must begin with an XML declaration or "
                 "<topology>)",
                 path};
  if (const auto nul = text.find('\0'); nul != std::string_view::npos)
    return Error{ErrorCode::kSyntax,
                 "not an hwloc XML topology (a NUL byte at offset " + std::to_string(nul) + ")",
                 path};
  return check_object_indexes(text, path);
}

// hwloc itself, in whatever process calls this. memory_note says what limit applies.
Result<NodeTopology> parse_with_hwloc(std::string_view text, const std::string& path,
                                      const std::string& memory_note = {}) {
  if (text.size() > static_cast<std::size_t>(INT_MAX))
    return fail(ErrorCode::kUnsupported, "larger than 2 GiB, hwloc cannot read it", path);
  auto topo = init_topology(HWLOC_TYPE_FILTER_KEEP_ALL, path);
  if (!topo) return std::unexpected(topo.error());
  // A buffer rather than the path: one read, and the bytes we diagnose are the bytes hwloc saw.
  // hwloc 2 parses the buffer here already; either call may reject it.
  errno = 0;
  if (hwloc_topology_set_xmlbuffer(topo->get(), text.data(), static_cast<int>(text.size())) != 0 ||
      hwloc_topology_load(topo->get()) != 0) {
    const int err = errno;
    if (err == ENOSYS)
      return fail(ErrorCode::kUnsupported, "this hwloc was built without XML support", path);
    return std::unexpected(explain_xml_failure(text, path, err, memory_note));
  }
  return extract(topo->get(), path);
}

// ---- The reader process ----
//
// The child gets the file's bytes (already in memory: fork copies them), runs hwloc on them and
// sends back the NodeTopology or hwloc's Error as one frame over a pipe:
//   u32 length of the rest, u8 kind ('T' topology, 'E' error), then for 'T':
//   u32 cores, u32 #hcas, hcas as strings, u32 #gpus, per GPU: name, pci_bus_id, u32 #cores,
//   cores, nearest_hca, u32 hops; for 'E': u32 code, message. A string is u32 length + bytes.
// Same machine, same build: host byte order. The parent checks every length against what it
// received; the frame's length, not EOF, says when it is complete (another thread of the
// caller may fork and hold the pipe's write end for a while).

constexpr std::uint32_t kMaxFrameBytes = 64u << 20;

class Writer {
 public:
  void u8(std::uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void u32(std::uint32_t v) { out_.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void str(std::string_view v) {
    u32(static_cast<std::uint32_t>(v.size()));
    out_.append(v);
  }
  /// The frame: length prefix + body.
  std::string frame() const {
    std::string f(sizeof(std::uint32_t), '\0');
    const auto n = static_cast<std::uint32_t>(out_.size());
    std::memcpy(f.data(), &n, sizeof n);
    return f + out_;
  }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  bool ok() const { return ok_; }
  bool at_end() const { return in_.empty(); }
  std::uint8_t u8() {
    if (in_.empty()) return bad();
    const auto v = static_cast<std::uint8_t>(in_[0]);
    in_.remove_prefix(1);
    return v;
  }
  std::uint32_t u32() {
    std::uint32_t v = 0;
    if (in_.size() < sizeof v) return bad();
    std::memcpy(&v, in_.data(), sizeof v);
    in_.remove_prefix(sizeof v);
    return v;
  }
  std::string str() {
    const auto n = u32();
    if (!ok_ || n > in_.size()) {
      bad();
      return {};
    }
    std::string v(in_.substr(0, n));
    in_.remove_prefix(n);
    return v;
  }
  /// A count of items of at least `min_item` bytes each: bounded by what is left.
  std::uint32_t count(std::size_t min_item) {
    const auto n = u32();
    if (ok_ && n > in_.size() / min_item) return bad();
    return n;
  }

 private:
  std::uint8_t bad() {
    ok_ = false;
    in_ = {};
    return 0;
  }
  std::string_view in_;
  bool ok_ = true;
};

std::string encode(const Result<NodeTopology>& r) {
  Writer w;
  if (!r) {
    w.u8('E');
    w.u32(static_cast<std::uint32_t>(r.error().code));
    w.str(r.error().message);
    return w.frame();
  }
  w.u8('T');
  w.u32(r->cores);
  w.u32(static_cast<std::uint32_t>(r->hcas.size()));
  for (const auto& h : r->hcas) w.str(h);
  w.u32(static_cast<std::uint32_t>(r->gpus.size()));
  for (const auto& g : r->gpus) {
    w.str(g.name);
    w.str(g.pci_bus_id);
    w.u32(static_cast<std::uint32_t>(g.cores.size()));
    for (unsigned c : g.cores) w.u32(c);
    w.str(g.nearest_hca);
    w.u32(g.hops);
  }
  return w.frame();
}

// The frame's body back into a result; nullopt when it is not a well-formed frame.
std::optional<Result<NodeTopology>> decode(std::string_view body, const std::string& path) {
  Reader r(body);
  const auto kind = r.u8();
  if (kind == 'E') {
    const auto code = r.u32();
    auto message = r.str();
    if (!r.ok() || !r.at_end() || code > static_cast<std::uint32_t>(ErrorCode::kUsage))
      return std::nullopt;
    return Result<NodeTopology>(
        std::unexpected(Error{static_cast<ErrorCode>(code), std::move(message), path}));
  }
  if (kind != 'T') return std::nullopt;
  NodeTopology t;
  t.source = path;
  t.cores = r.u32();
  const auto hcas = r.count(4);
  for (std::uint32_t i = 0; i < hcas && r.ok(); ++i) t.hcas.push_back(r.str());
  const auto gpus = r.count(24);  // 4 strings and 2 u32
  for (std::uint32_t i = 0; i < gpus && r.ok(); ++i) {
    Gpu g;
    g.name = r.str();
    g.pci_bus_id = r.str();
    const auto cores = r.count(4);
    for (std::uint32_t k = 0; k < cores && r.ok(); ++k) g.cores.push_back(r.u32());
    g.nearest_hca = r.str();
    g.hops = r.u32();
    t.gpus.push_back(std::move(g));
  }
  if (!r.ok() || !r.at_end()) return std::nullopt;
  return Result<NodeTopology>(std::move(t));
}

// Shared with the child (MAP_SHARED): the fatal signal it caught, so the parent learns of a
// crash even when it cannot get the child's wait status (SIGCHLD ignored, or another part of
// the caller reaping every child).
struct SharedState {
  std::atomic<int> fatal_signal{0};
};
static_assert(std::atomic<int>::is_always_lock_free);

SharedState* g_child_shared = nullptr;  // set in the child only

void record_fatal_signal(int sig) {
  if (g_child_shared) g_child_shared->fatal_signal.store(sig, std::memory_order_relaxed);
  // SA_RESETHAND made the action the default again; SA_NODEFER lets it hit at once.
  ::raise(sig);
}

// Exit statuses of the child when it could not send a frame.
constexpr int kExitWriteFailed = 3;
constexpr int kExitNoMemory = 4;
constexpr int kExitException = 5;

struct ChildPlan {
  int out_fd = -1;             ///< the pipe's write end
  int in_fd = -1;              ///< its read end (the parent's)
  std::uint64_t vm_bytes = 0;  ///< the caller's address space size (0: unknown)
  std::uint64_t memory_bytes = 0;
  unsigned cpu_seconds = 0;
  unsigned alarm_seconds = 0;
  long max_fd = 1024;  ///< for closing descriptors without close_range
  SharedState* shared = nullptr;
};

#ifdef FABRICPLACE_NODE_SANITIZED
constexpr bool kSanitizerShadowMemory = true;

// Under a sanitizer, hwloc's allocations go through the sanitizer's allocator, which turns
// e.g. hwloc's double free on malformed-crash.xml into a report and exit(1) where a plain build
// gets SIGSEGV. The reader reports such a death as a crash with SIGSEGV, so that sanitizer
// builds give the errors (and CLI outputs) plain ones give; the report goes to the sanitizer's
// log_path when one is set (ASAN_OPTIONS=log_path=/tmp/asan), else nowhere.
void sanitizer_died() {
  if (g_child_shared) g_child_shared->fatal_signal.store(SIGSEGV, std::memory_order_relaxed);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  ::sigaction(SIGSEGV, &dfl, nullptr);
  sigset_t segv;
  sigemptyset(&segv);
  sigaddset(&segv, SIGSEGV);
  ::sigprocmask(SIG_UNBLOCK, &segv, nullptr);
  ::raise(SIGSEGV);
}
void quiet_sanitizer_in_child() {
  if (const char* log = __sanitizer_get_report_path(); !log || !*log)
    if (const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC); null >= 0)
      __sanitizer_set_report_fd(reinterpret_cast<void*>(static_cast<std::intptr_t>(null)));
  __sanitizer_set_death_callback(sanitizer_died);
}
#else
constexpr bool kSanitizerShadowMemory = false;
void quiet_sanitizer_in_child() {}
#endif

void lower_limit(int resource, rlim_t soft, rlim_t hard) {
  struct rlimit old {};
  if (::getrlimit(resource, &old) != 0) return;
  struct rlimit now = old;
  if (old.rlim_max == RLIM_INFINITY || hard < old.rlim_max) now.rlim_max = hard;
  if (old.rlim_cur == RLIM_INFINITY || soft < old.rlim_cur) now.rlim_cur = soft;
  if (now.rlim_cur > now.rlim_max) now.rlim_cur = now.rlim_max;
  ::setrlimit(resource, &now);
}

std::string memory_note(std::uint64_t memory_bytes) {
  if (kSanitizerShadowMemory) return {};
  return " (the reader may use " + size_text(memory_bytes) + " more than its caller)";
}

// The child, right after fork(). It never returns into the caller's code and never runs its
// atexit handlers or flushes its stdio buffers: every way out is _exit or a signal. Before
// hwloc runs it uses async-signal-safe calls only (the caller may be multi-threaded, and only
// the forking thread exists here); hwloc and our extraction then need malloc, which glibc
// makes safe after fork.
[[noreturn]] void reader_child(std::string_view text, const std::string& path,
                               const ChildPlan& plan) noexcept {
  // Signals: every action back to the default (the caller's handlers are not ours to run,
  // nor ignored SIGPIPE/SIGCHLD), the fatal ones recorded for the parent first, on an
  // alternate stack so that a stack overflow is recorded too; then unblock all.
  g_child_shared = plan.shared;
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  for (int sig = 1; sig < NSIG; ++sig)
    if (sig != SIGKILL && sig != SIGSTOP) ::sigaction(sig, &dfl, nullptr);
  constexpr std::size_t kAltStack = 64 << 10;
  if (void* stack =
          ::mmap(nullptr, kAltStack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      stack != MAP_FAILED) {
    stack_t ss{};
    ss.ss_sp = stack;
    ss.ss_size = kAltStack;
    ::sigaltstack(&ss, nullptr);
  }
  struct sigaction rec {};
  rec.sa_handler = record_fatal_signal;
  rec.sa_flags = SA_RESETHAND | SA_NODEFER | SA_ONSTACK;
  sigemptyset(&rec.sa_mask);
  for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGSYS, SIGTRAP, SIGXCPU, SIGALRM})
    ::sigaction(sig, &rec, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);

  // Descriptors: the pipe becomes fd 3; 0 and 1 are /dev/null; 2 stays (hwloc's own messages,
  // with HWLOC_XML_VERBOSE=1, go where they always went) unless the caller had it closed and
  // the pipe got it; everything else is closed.
  int out = ::fcntl(plan.out_fd, F_DUPFD, 3);
  if (out < 0) ::_exit(kExitWriteFailed);
  if (out != 3) {
    if (::dup2(out, 3) < 0) ::_exit(kExitWriteFailed);
    out = 3;
  }
  if (::close_range(4, ~0u, 0) != 0)
    for (long fd = 4; fd < plan.max_fd; ++fd) ::close(static_cast<int>(fd));
  if (const int null = ::open("/dev/null", O_RDWR); null >= 0) {
    ::dup2(null, 0);
    ::dup2(null, 1);
    if (plan.out_fd == 2 || plan.in_fd == 2) ::dup2(null, 2);
    if (null > 3) ::close(null);
  }

  quiet_sanitizer_in_child();

  // Limits: memory, CPU time, no core file; alarm() stops it should the parent be gone.
  if (!kSanitizerShadowMemory && plan.vm_bytes > 0) {
    const auto as = static_cast<rlim_t>(plan.vm_bytes + plan.memory_bytes);
    lower_limit(RLIMIT_AS, as, as);
  }
  lower_limit(RLIMIT_CPU, plan.cpu_seconds, plan.cpu_seconds + 1);
  lower_limit(RLIMIT_CORE, 0, 0);
  ::alarm(plan.alarm_seconds);

  std::string frame;
  try {
    frame = encode(parse_with_hwloc(text, path, memory_note(plan.memory_bytes)));
  } catch (const std::bad_alloc&) {
    ::_exit(kExitNoMemory);
  } catch (...) {
    ::_exit(kExitException);
  }
  ::_exit(fabricplace::write_all(out, frame) ? 0 : kExitWriteFailed);  // write(2) only
}

// Pages of this process's address space (the first field of /proc/self/statm), in bytes.
std::uint64_t address_space_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "re");
  if (!f) return 0;
  unsigned long long pages = 0;
  const bool ok = std::fscanf(f, "%llu", &pages) == 1;
  std::fclose(f);
  const long page = ::sysconf(_SC_PAGESIZE);
  return ok && page > 0 ? pages * static_cast<std::uint64_t>(page) : 0;
}

std::string duration_text(std::chrono::milliseconds d) {
  if (d.count() > 0 && d.count() % 1000 == 0) return std::to_string(d.count() / 1000) + " s";
  return std::to_string(d.count()) + " ms";
}

std::string signal_text(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  return "signal " + std::to_string(sig) + (abbrev ? std::string(", SIG") + abbrev : std::string());
}

Result<NodeTopology> parse_in_child(std::string_view text, const std::string& path,
                                    const XmlLoadLimits& limits) {
  const auto start_error = [&](const char* what) {
    return fail(ErrorCode::kIo,
                std::string("cannot start the process that reads it with hwloc (") + what + ": " +
                    errno_text(errno) + ")",
                path);
  };
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return start_error("pipe");
  Fd in(fds[0]);
  Fd out(fds[1]);
  if (::fcntl(in.fd, F_SETFL, O_NONBLOCK) != 0) return start_error("fcntl");

  void* page = ::mmap(nullptr, sizeof(SharedState), PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  SharedState* shared = page == MAP_FAILED ? nullptr : new (page) SharedState;
  const auto unmap = [&] {
    if (shared) ::munmap(page, sizeof(SharedState));
  };

  ChildPlan plan;
  plan.out_fd = out.fd;
  plan.in_fd = in.fd;
  plan.vm_bytes = address_space_bytes();
  plan.memory_bytes = limits.memory_bytes;
  plan.cpu_seconds = std::max(1u, limits.cpu_seconds);
  const auto timeout = std::max(limits.timeout, std::chrono::milliseconds(0));
  const auto timeout_s = static_cast<unsigned>((timeout.count() + 999) / 1000);
  plan.alarm_seconds = timeout_s + 2;
  plan.shared = shared;
  if (struct rlimit nofile{}; ::getrlimit(RLIMIT_NOFILE, &nofile) == 0)
    plan.max_fd = nofile.rlim_cur == RLIM_INFINITY
                      ? 1 << 20
                      : static_cast<long>(std::min<rlim_t>(nofile.rlim_cur, 1 << 20));

  // All signals blocked across fork(), so the child runs none of the caller's handlers before
  // it has reset them; the caller's mask is restored right after.
  sigset_t all;
  sigset_t old;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old);
  const pid_t pid = ::fork();
  if (pid == 0) reader_child(text, path, plan);
  const int fork_errno = errno;
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (pid < 0) {
    unmap();
    errno = fork_errno;
    return start_error("fork");
  }
  out.reset();
  // A pidfd (Linux 5.3) stays this child's even if it is reaped by someone else and its pid
  // reused, so a late SIGKILL cannot hit another process. The child is busy for milliseconds
  // at least, so it is still there when this runs.
  Fd pidfd;
#ifdef SYS_pidfd_open
  pidfd.fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#endif

  // Read one frame, with a wall-clock deadline; poll() sleeps, EINTR only recomputes the wait.
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + timeout;
  std::string got;
  std::optional<std::size_t> want;  // frame size, once its length prefix is in
  bool timed_out = false;
  bool oversized = false;
  bool eof = false;
  int read_errno = 0;
  char buf[1 << 16];
  while (!want || got.size() < *want) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{in.fd, POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), INT_MAX)));
    if (r < 0 && errno != EINTR) {
      read_errno = errno;
      break;
    }
    if (r <= 0) continue;
    const ssize_t n = ::read(in.fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      read_errno = errno;
      break;
    }
    if (n == 0) {
      eof = true;
      break;
    }
    got.append(buf, static_cast<std::size_t>(n));
    if (!want && got.size() >= sizeof(std::uint32_t)) {
      std::uint32_t body = 0;
      std::memcpy(&body, got.data(), sizeof body);
      if (body > kMaxFrameBytes) {
        oversized = true;
        break;
      }
      want = sizeof body + body;
    }
  }
  const bool complete = want && got.size() == *want;
  // Stop it unless it has sent everything or closed the pipe by ending: then it is exiting.
  bool killed = false;
  if (!complete && !eof) {
#ifdef SYS_pidfd_send_signal
    if (pidfd.fd >= 0)
      killed = ::syscall(SYS_pidfd_send_signal, pidfd.fd, SIGKILL, nullptr, 0) == 0;
    else
#endif
      killed = ::kill(pid, SIGKILL) == 0;
  }
  // Reap it. With SIGCHLD ignored (SIG_IGN) the kernel reaps it itself and waitpid() returns
  // ECHILD once it has ended; a caller's handler calling waitpid(-1) may reap it first, also
  // ECHILD. Then the frame and the shared page tell what happened instead of the status.
  int status = 0;
  pid_t w = 0;
  do w = ::waitpid(pid, &status, 0);
  while (w < 0 && errno == EINTR);
  const bool have_status = w == pid;
  const int recorded = shared ? shared->fatal_signal.load(std::memory_order_relaxed) : 0;
  unmap();

  if (complete) {
    if (auto r = decode(std::string_view(got).substr(sizeof(std::uint32_t)), path)) return *r;
    return fail(ErrorCode::kIo, "the hwloc reader process sent a malformed result", path);
  }
  const int sig = recorded                                          ? recorded
                  : (have_status && WIFSIGNALED(status) && !killed) ? WTERMSIG(status)
                                                                    : 0;
  if (sig == SIGXCPU)
    return fail(ErrorCode::kUnsupported,
                "hwloc used more than " + std::to_string(plan.cpu_seconds) +
                    " s of CPU reading it and was stopped; the file is malformed or hostile",
                path);
  const auto too_slow = [&] {
    return fail(ErrorCode::kUnsupported,
                "hwloc took longer than " + duration_text(timeout) +
                    " reading it and was stopped; the file is malformed or hostile",
                path);
  };
  if (sig == SIGALRM) return too_slow();
  if (sig)
    return fail(ErrorCode::kSyntax,
                "hwloc crashed reading it (" + signal_text(sig) + "); the file is malformed", path);
  if (timed_out) return too_slow();
  if (oversized)
    return fail(ErrorCode::kUnsupported,
                "hwloc's result is larger than " + size_text(kMaxFrameBytes) +
                    "; the file is malformed or hostile",
                path);
  if (read_errno)
    return fail(ErrorCode::kIo, "cannot read the hwloc reader's result: " + errno_text(read_errno),
                path);
  if (have_status && WIFEXITED(status) && WEXITSTATUS(status) == kExitNoMemory)
    return fail(ErrorCode::kUnsupported,
                "hwloc ran out of memory reading it" + memory_note(limits.memory_bytes) +
                    "; the file is malformed or hostile",
                path);
  if (have_status && WIFEXITED(status))
    return fail(ErrorCode::kIo,
                "the hwloc reader process exited with status " +
                    std::to_string(WEXITSTATUS(status)) + " without a result",
                path);
  return fail(ErrorCode::kIo,
              "the hwloc reader process ended without a result (its exit status is unknown: "
              "this process ignores SIGCHLD or reaped it elsewhere)",
              path);
}

// HCA names go into NCCL_IB_HCA, rank files and the torchrun environment (a file users
// source): they must be device names as the kernel gives them (mlx5_0, ibp12s0, bnxt_re0,
// rocep1s0f0) or, for an HCA hwloc knows only as a PCI device, its address (0000:35:00.0),
// never text that adds a line or runs a command ("mlx5_0;touch x").
bool device_name(std::string_view n) {
  return !n.empty() && n.size() <= 64 && std::all_of(n.begin(), n.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.' || c == ':';
  });
}

Result<NodeTopology> checked(Result<NodeTopology> t) {
  if (!t) return t;
  for (const auto& h : t->hcas)
    if (!device_name(h))
      return fail(ErrorCode::kSyntax,
                  "HCA name " + str::quoted(h) +
                      ": expected a device name of at most 64 letters, digits, '_', '-', '.' or "
                      "':' (such as mlx5_0 or 0000:35:00.0)",
                  t->source);
  return t;
}

}  // namespace

Result<NodeTopology> load_hwloc_xml(const std::string& path) {
  return load_hwloc_xml(path, XmlLoadLimits{});
}

Result<NodeTopology> load_hwloc_xml(const std::string& path, const XmlLoadLimits& limits) {
  auto text = read_bounded(path, limits.max_bytes);
  if (!text) return std::unexpected(text.error());
  if (auto e = precheck(*text, path)) return std::unexpected(std::move(*e));
  return checked(parse_in_child(*text, path, limits));
}

namespace detail {
std::optional<Error> precheck_hwloc_xml(std::string_view text, const std::string& path) {
  return precheck(text, path);
}

Result<NodeTopology> load_hwloc_xml_in_process(const std::string& path) {
  auto text = read_bounded(path, kMaxHwlocXmlBytes);
  if (!text) return std::unexpected(text.error());
  if (auto e = precheck(*text, path)) return std::unexpected(std::move(*e));
  return checked(parse_with_hwloc(*text, path));
}
}  // namespace detail

Result<NodeTopology> load_hwloc_live() {
  const std::string source = "hwloc live";
  auto topo = init_topology(HWLOC_TYPE_FILTER_KEEP_IMPORTANT, source);
  if (!topo) return std::unexpected(topo.error());
  errno = 0;
  if (hwloc_topology_load(topo->get()) != 0)
    return fail(ErrorCode::kIo, "hwloc could not discover this machine: " + errno_text(errno),
                source);
  return checked(extract(topo->get(), source));
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
