// SPDX-License-Identifier: GPL-2.0-or-later
// GPU <-> HCA <-> core pairing from hwloc XML (tests/data/hwloc/README.md) and the live machine.
//
// dgx2-with-hcas.xml, one package (the other is the same with buses b0-e7, cores 2-3):
//
//   Package 0 (cores 0,1)
//   +- HostBridge [2b-3b] - root port - PLX switch
//   |    +- switch 32:00.0 -- GPU 34:00.0 nvml0, HCA 35:00.0 mlx5_0, GPU 36:00.0 nvml1
//   |    +- switch 37:00.0 -- GPU 39:00.0 nvml2, HCA 3a:00.0 mlx5_1, GPU 3b:00.0 nvml3
//   +- HostBridge [4e-67] - root port - PLX switch
//        +- switch 55:00.0 -- GPU 57:00.0 nvml4, HCA 58:00.0 mlx5_2, GPU 59:00.0 nvml5
//        +- switch 5a:00.0 -- GPU 5c:00.0 nvml6, HCA 5d:00.0 mlx5_3, GPU 5e:00.0 nvml7
//        +- NVSwitches (0680)
//
// GPU to HCA in the same switch: GPU - port - switch - port - HCA = 4 hops.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <hwloc.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fabricplace/node/node_topology.hpp"

using namespace fabricplace;
using namespace fabricplace::node;
namespace fs = std::filesystem;

#if defined(__SANITIZE_ADDRESS__)
#define FABRICPLACE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FABRICPLACE_ASAN 1
#endif
#endif
#ifdef FABRICPLACE_ASAN
// hwloc 2.9's PCI discovery plugin (libpciaccess) leaks about 1 KB per live load, in a plain C
// program too. The plugin is unloaded by exit and has no frame pointers: only the slow unwinder
// reaches hwloc_topology_load in the leak's stack. (ASAN_OPTIONS still override these.)
extern "C" const char* __asan_default_options() {
  return "fast_unwind_on_malloc=0";
}
extern "C" const char* __lsan_default_suppressions() {
  return "leak:hwloc_topology_load\n";
}
#endif

namespace {

std::string data(const std::string& name) {
  return std::string(FABRICPLACE_TEST_DATA) + "/hwloc/" + name;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// A scratch file for this test; removed by the destructor.
struct ScratchFile {
  fs::path path;
  explicit ScratchFile(const std::string& content) {
    path = fs::temp_directory_path() /
           ("fp-node-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".xml");
    std::ofstream(path, std::ios::binary) << content;
  }
  ~ScratchFile() { fs::remove(path); }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;
};

/// Removes every XML element whose opening line contains `marker` (hwloc writes one element
/// per line, children indented by 2 more spaces).
std::string remove_elements(const std::string& xml, const std::string& marker) {
  std::istringstream in(xml);
  std::string out;
  std::string line;
  std::string closing;  // non-empty while skipping
  while (std::getline(in, line)) {
    if (!closing.empty()) {
      if (line == closing) closing.clear();
      continue;
    }
    if (line.find(marker) != std::string::npos) {
      if (line.ends_with("/>")) continue;
      closing = std::string(line.find_first_not_of(' '), ' ') + "</object>";
      continue;
    }
    out += line + "\n";
  }
  return out;
}

NodeTopology load_ok(const std::string& path) {
  auto t = load_hwloc_xml(path);
  if (!t) ADD_FAILURE() << t.error().to_string();
  return t ? *t : NodeTopology{};
}

std::vector<std::string> gpu_names(const NodeTopology& t) {
  std::vector<std::string> out;
  for (const auto& g : t.gpus) out.push_back(g.name);
  return out;
}

const std::vector<std::string> kDgx2BusIds = {
    "0000:34:00.0", "0000:36:00.0", "0000:39:00.0", "0000:3b:00.0", "0000:57:00.0", "0000:59:00.0",
    "0000:5c:00.0", "0000:5e:00.0", "0000:b7:00.0", "0000:b9:00.0", "0000:bc:00.0", "0000:be:00.0",
    "0000:e0:00.0", "0000:e2:00.0", "0000:e5:00.0", "0000:e7:00.0"};

std::vector<std::string> nvml_names() {
  std::vector<std::string> out;
  for (int k = 0; k < 16; ++k) out.push_back("nvml" + std::to_string(k));
  return out;
}

}  // namespace

TEST(NodeTopology, Dgx2WithHcasPairsEachGpuWithTheHcaInItsSwitch) {
  const auto t = load_ok(data("dgx2-with-hcas.xml"));
  EXPECT_EQ(t.source, data("dgx2-with-hcas.xml"));
  EXPECT_EQ(t.cores, 4u);  // the upstream file keeps 2 cores per package (PU P#0,1 and 24,25)
  EXPECT_EQ(t.hcas, (std::vector<std::string>{"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3", "mlx5_4",
                                              "mlx5_5", "mlx5_6", "mlx5_7"}));
  ASSERT_EQ(t.gpus.size(), 16u);
  EXPECT_EQ(gpu_names(t), nvml_names());
  for (unsigned k = 0; k < 16; ++k) {
    SCOPED_TRACE("GPU " + std::to_string(k));
    const auto& g = t.gpus[k];
    EXPECT_EQ(g.pci_bus_id, kDgx2BusIds[k]);
    EXPECT_EQ(g.nearest_hca, "mlx5_" + std::to_string(k / 2));
    EXPECT_EQ(g.hops, 4u);
    // Package 0 (cpuset 0x3) holds Core L#0-1, package 1 (0x03000000) Core L#2-3.
    EXPECT_EQ(g.cores, (k < 8 ? std::vector<unsigned>{0, 1} : std::vector<unsigned>{2, 3}));
  }
}

TEST(NodeTopology, Dgx2EightTasksPerNode) {
  const auto t = load_ok(data("dgx2-with-hcas.xml"));
  const auto b = bind_local_ranks(t, 8);
  ASSERT_EQ(b.size(), 8u);
  for (unsigned k = 0; k < 8; ++k) {
    SCOPED_TRACE("rank " + std::to_string(k));
    EXPECT_EQ(b[k].local_rank, k);
    EXPECT_EQ(b[k].gpu, k);
    EXPECT_EQ(b[k].hca, "mlx5_" + std::to_string(k / 2));
    // 8 ranks share package 0's 2 cores: they wrap.
    EXPECT_EQ(b[k].cores, std::vector<unsigned>{k % 2});
  }
}

TEST(NodeTopology, Dgx2SixteenAndTwoTasksPerNode) {
  const auto t = load_ok(data("dgx2-with-hcas.xml"));
  const auto b = bind_local_ranks(t, 16);
  ASSERT_EQ(b.size(), 16u);
  EXPECT_EQ(b[8].gpu, 8u);
  EXPECT_EQ(b[8].hca, "mlx5_4");
  EXPECT_EQ(b[8].cores, std::vector<unsigned>{2});
  EXPECT_EQ(b[15].hca, "mlx5_7");
  EXPECT_EQ(b[15].cores, std::vector<unsigned>{3});

  const auto two = bind_local_ranks(t, 2);  // both on package 0: one core each
  EXPECT_EQ(two[0].cores, std::vector<unsigned>{0});
  EXPECT_EQ(two[1].cores, std::vector<unsigned>{1});
  EXPECT_EQ(bind_local_ranks(t, 1)[0].cores, (std::vector<unsigned>{0, 1}));
  EXPECT_TRUE(bind_local_ranks(t, 0).empty());
}

TEST(NodeTopology, MoreTasksThanGpusLeavesTheRestWithoutGpuOrHca) {
  const auto t = load_ok(data("dgx2-with-hcas.xml"));
  const auto b = bind_local_ranks(t, 18);
  ASSERT_EQ(b.size(), 18u);
  for (unsigned k : {16u, 17u}) {
    EXPECT_FALSE(b[k].gpu.has_value());
    EXPECT_EQ(b[k].hca, "");
  }
  // Ranks 16 and 17 split all 4 cores.
  EXPECT_EQ(b[16].cores, (std::vector<unsigned>{0, 1}));
  EXPECT_EQ(b[17].cores, (std::vector<unsigned>{2, 3}));
}

TEST(NodeTopology, SameSwitchBeatsSameRootComplexBeatsOtherSocket) {
  // Without mlx5_1, GPUs 2-3 use mlx5_0 (same host bridge, other switch) rather than mlx5_2
  // (same package, other host bridge): 4 hops up to the PLX switch, 4 down.
  auto xml = remove_elements(slurp(data("dgx2-with-hcas.xml")), "pci_busid=\"0000:38:08.0\"");
  // Without package 1's HCAs, GPUs 8-15 cross the sockets; all four candidates are 16 hops
  // away (8 up to the Machine, 8 down) and the first in HCA order wins.
  for (const char* port : {"0000:b6:08.0", "0000:bb:08.0", "0000:df:08.0", "0000:e4:08.0"})
    xml = remove_elements(xml, std::string("pci_busid=\"") + port + "\"");
  const ScratchFile f(xml);
  const auto t = load_ok(f.path.string());
  EXPECT_EQ(t.hcas, (std::vector<std::string>{"mlx5_0", "mlx5_2", "mlx5_3"}));
  ASSERT_EQ(t.gpus.size(), 16u);
  EXPECT_EQ(t.gpus[1].nearest_hca, "mlx5_0");
  EXPECT_EQ(t.gpus[1].hops, 4u);
  EXPECT_EQ(t.gpus[2].nearest_hca, "mlx5_0");
  EXPECT_EQ(t.gpus[2].hops, 8u);
  EXPECT_EQ(t.gpus[3].nearest_hca, "mlx5_0");
  EXPECT_EQ(t.gpus[4].nearest_hca, "mlx5_2");
  for (unsigned k = 8; k < 16; ++k) {
    EXPECT_EQ(t.gpus[k].nearest_hca, "mlx5_0") << k;
    EXPECT_EQ(t.gpus[k].hops, 16u) << k;
  }
}

TEST(NodeTopology, PciDevicesStandInForMissingOsDevices) {
  // An XML exported with OS devices filtered out: NVIDIA 3D controllers are the GPUs,
  // Mellanox InfiniBand controllers the HCAs, both named by PCI bus id.
  const ScratchFile f(remove_elements(slurp(data("dgx2-with-hcas.xml")), "type=\"OSDev\""));
  const auto t = load_ok(f.path.string());
  ASSERT_EQ(t.gpus.size(), 16u);
  EXPECT_EQ(t.gpus[0].name, "0000:34:00.0");
  EXPECT_EQ(t.gpus[15].name, "0000:e7:00.0");
  ASSERT_EQ(t.hcas.size(), 8u);
  EXPECT_EQ(t.hcas[0], "0000:35:00.0");
  EXPECT_EQ(t.gpus[3].nearest_hca, "0000:3a:00.0");
  EXPECT_EQ(t.gpus[3].hops, 4u);
}

TEST(NodeTopology, OriginalDgx2HasGpusAndNoHca) {
  const auto t = load_ok(data("nvidiaDGX2-v2.xml"));
  EXPECT_EQ(t.cores, 4u);
  EXPECT_TRUE(t.hcas.empty());
  ASSERT_EQ(t.gpus.size(), 16u);
  EXPECT_EQ(gpu_names(t), nvml_names());
  for (unsigned k = 0; k < 16; ++k) {
    EXPECT_EQ(t.gpus[k].pci_bus_id, kDgx2BusIds[k]);
    EXPECT_EQ(t.gpus[k].nearest_hca, "");
    EXPECT_EQ(t.gpus[k].hops, 0u);
  }
  const auto b = bind_local_ranks(t, 8);
  ASSERT_EQ(b.size(), 8u);
  EXPECT_EQ(b[5].gpu, 5u);
  EXPECT_EQ(b[5].hca, "");
  EXPECT_EQ(b[5].cores, std::vector<unsigned>{1});
}

TEST(NodeTopology, Dgx2InHwloc3FormatNeedsHwloc3) {
  // The same machine as exported by hwloc 3 (XML format 3.0): hwloc 2 refuses it.
  const auto path = data("nvidiaDGX2.xml");
  auto t = load_hwloc_xml(path);
  if (hwloc_get_api_version() >= 0x00030000) {
    ASSERT_TRUE(t) << t.error().to_string();
    EXPECT_EQ(gpu_names(*t), nvml_names());
    EXPECT_TRUE(t->hcas.empty());
    return;
  }
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code, ErrorCode::kUnsupported);
  EXPECT_EQ(t.error().file, path);
  EXPECT_NE(t.error().message.find("hwloc XML format 3.0 needs hwloc 3 or later"),
            std::string::npos)
      << t.error().message;
}

TEST(NodeTopology, SyntheticNodeWithoutGpusSplitsCoresEvenly) {
  const auto t = load_ok(data("synthetic-2pack-4core-2pu.xml"));
  EXPECT_EQ(t.cores, 8u);  // Core objects, not the 16 PUs
  EXPECT_TRUE(t.gpus.empty());
  EXPECT_TRUE(t.hcas.empty());

  const auto four = bind_local_ranks(t, 4);
  ASSERT_EQ(four.size(), 4u);
  for (unsigned k = 0; k < 4; ++k) {
    EXPECT_FALSE(four[k].gpu.has_value());
    EXPECT_EQ(four[k].hca, "");
    EXPECT_EQ(four[k].cores, (std::vector<unsigned>{2 * k, 2 * k + 1}));
  }
  const auto three = bind_local_ranks(t, 3);
  EXPECT_EQ(three[0].cores, (std::vector<unsigned>{0, 1, 2}));
  EXPECT_EQ(three[1].cores, (std::vector<unsigned>{3, 4, 5}));
  EXPECT_EQ(three[2].cores, (std::vector<unsigned>{6, 7}));
}

TEST(NodeTopology, MoreTasksThanCoresWrapsWithinTheCores) {
  const auto t = load_ok(data("synthetic-2pack-4core-2pu.xml"));
  const auto b = bind_local_ranks(t, 20);
  ASSERT_EQ(b.size(), 20u);
  for (unsigned k = 0; k < 20; ++k) {
    EXPECT_EQ(b[k].local_rank, k);
    EXPECT_EQ(b[k].cores, std::vector<unsigned>{k % 8}) << k;
  }
}

TEST(NodeTopology, HandBuiltTopologyNeverYieldsACoreOutOfRange) {
  NodeTopology t;
  t.cores = 3;
  t.gpus.push_back(Gpu{"cuda0", "0000:01:00.0", {0, 1, 5, 9}, "mlx5_0", 4});
  t.gpus.push_back(Gpu{"cuda1", "0000:02:00.0", {7}, "", 0});  // nothing valid: all cores
  const auto b = bind_local_ranks(t, 3);
  EXPECT_EQ(b[0].cores, (std::vector<unsigned>{0, 1}));
  EXPECT_EQ(b[0].hca, "mlx5_0");
  // Ranks 1 (GPU 1) and 2 (no GPU) share the pool of all cores.
  EXPECT_EQ(b[1].cores, (std::vector<unsigned>{0, 1}));
  EXPECT_EQ(b[2].cores, std::vector<unsigned>{2});

  NodeTopology empty;  // no cores at all: bindings without cores, no crash
  const auto e = bind_local_ranks(empty, 2);
  ASSERT_EQ(e.size(), 2u);
  EXPECT_TRUE(e[1].cores.empty());
}

TEST(NodeTopology, MissingFileIsAnIoErrorNamingIt) {
  auto t = load_hwloc_xml("/nonexistent-fp-dir/topo.xml");
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code, ErrorCode::kIo);
  EXPECT_EQ(t.error().to_string(),
            "/nonexistent-fp-dir/topo.xml: cannot open: No such file or directory");
}

TEST(NodeTopology, FileThatIsNotHwlocXmlIsASyntaxErrorNamingIt) {
  const auto path = std::string(FABRICPLACE_TEST_DATA) + "/flat.conf";
  auto t = load_hwloc_xml(path);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code, ErrorCode::kSyntax);
  EXPECT_EQ(t.error().to_string(), path + ": not an hwloc XML topology (no <topology> element)");

  const ScratchFile empty("");
  auto e = load_hwloc_xml(empty.path.string());
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().code, ErrorCode::kSyntax);
  EXPECT_EQ(e.error().file, empty.path.string());
}

TEST(NodeTopology, TruncatedXmlIsASyntaxError) {
  const auto xml = slurp(data("dgx2-with-hcas.xml"));
  const ScratchFile f(xml.substr(0, xml.size() / 2));
  auto t = load_hwloc_xml(f.path.string());
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code, ErrorCode::kSyntax);
  EXPECT_EQ(t.error().file, f.path.string());
  EXPECT_NE(t.error().message.find("hwloc could not load this XML"), std::string::npos)
      << t.error().message;
}

TEST(NodeTopology, LiveMachine) {
  auto t = load_hwloc_live();
  ASSERT_TRUE(t) << t.error().to_string();
  EXPECT_EQ(t->source, "hwloc live");
  EXPECT_GE(t->cores, 1u);
  for (const auto& g : t->gpus)
    for (unsigned c : g.cores) EXPECT_LT(c, t->cores);
  const auto b = bind_local_ranks(*t, 2);
  ASSERT_EQ(b.size(), 2u);
  for (const auto& r : b) {
    EXPECT_FALSE(r.cores.empty());
    for (unsigned c : r.cores) EXPECT_LT(c, t->cores);
  }
}

// ---- Malformed and hostile XML: hwloc runs in a child process (docs/node-topology.md) ----

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

/// Whether this hwloc crashes on the file when it reads it in process (probed in a child of
/// our own, stderr silenced): true for malformed-crash.xml with hwloc 2.9 and libxml2.
bool hwloc_crashes_in_process(const std::string& path) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (const int null = ::open("/dev/null", O_WRONLY); null >= 0) ::dup2(null, 2);
    (void)detail::load_hwloc_xml_in_process(path);
    ::_exit(0);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return !(WIFEXITED(status) && WEXITSTATUS(status) == 0);  // ASan's handler exits 1
}

/// No child process of ours, reaped or not, is left.
bool no_children_left() {
  int status = 0;
  return ::waitpid(-1, &status, WNOHANG) == -1 && errno == ECHILD;
}

const std::string kCrashMessage =
    "hwloc crashed reading it (signal 11, SIGSEGV); the file is malformed";

void expect_crash_contained(const Result<NodeTopology>& t, const std::string& path) {
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().file, path);
  EXPECT_EQ(t.error().code, ErrorCode::kSyntax);
  EXPECT_EQ(t.error().to_string(), path + ": " + kCrashMessage);
}

std::string scratch_name(const std::string& suffix) {
  return (fs::temp_directory_path() /
          ("fp-node-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name() + suffix))
      .string();
}

}  // namespace

TEST(NodeTopologyHostileXml, FileThatCrashesHwlocIsAnErrorNamingIt) {
  // tests/data/hwloc/malformed-crash.xml: hwloc 2.9's libxml2 importer dereferences NULL on it.
  const auto path = data("malformed-crash.xml");
  if (!hwloc_crashes_in_process(path)) {
    // An hwloc that survives it (fixed, or without the libxml2 plugin) must still reject it.
    auto t = load_hwloc_xml(path);
    ASSERT_FALSE(t);
    EXPECT_EQ(t.error().code, ErrorCode::kSyntax);
    EXPECT_EQ(t.error().file, path);
    GTEST_SKIP() << "this hwloc does not crash on " << path << ": " << t.error().to_string();
  }
  const auto t0 = Clock::now();
  auto t = load_hwloc_xml(path);
  expect_crash_contained(t, path);
  EXPECT_LT(seconds_since(t0), 5.0);
  // The caller goes on: the next file loads normally.
  EXPECT_EQ(load_ok(data("dgx2-with-hcas.xml")).gpus.size(), 16u);
  EXPECT_TRUE(no_children_left());
}

TEST(NodeTopologyHostileXml, CrashIsReportedWhenSigchldIsIgnored) {
  // With SIGCHLD ignored the kernel reaps the reader itself and waitpid() says ECHILD: the
  // crash is known from the signal the reader recorded before dying.
  const auto path = data("malformed-crash.xml");
  const bool crashes = hwloc_crashes_in_process(path);
  struct sigaction ign = {};
  struct sigaction old = {};
  ign.sa_handler = SIG_IGN;
  sigemptyset(&ign.sa_mask);
  ASSERT_EQ(::sigaction(SIGCHLD, &ign, &old), 0);
  auto crash = load_hwloc_xml(path);
  auto ok = load_hwloc_xml(data("dgx2-with-hcas.xml"));
  ::sigaction(SIGCHLD, &old, nullptr);
  if (crashes) {
    expect_crash_contained(crash, path);
  } else {
    EXPECT_FALSE(crash);
  }
  ASSERT_TRUE(ok) << ok.error().to_string();
  EXPECT_EQ(ok->hcas.size(), 8u);
  EXPECT_TRUE(no_children_left());
}

namespace {
std::atomic<int> g_reaped{0};
extern "C" void reap_every_child(int) {
  const int saved = errno;
  int status = 0;
  while (::waitpid(-1, &status, WNOHANG) > 0) g_reaped.fetch_add(1);
  errno = saved;
}
}  // namespace

TEST(NodeTopologyHostileXml, CrashIsReportedWhenTheHostReapsEveryChild) {
  // slurmstepd-like: a SIGCHLD handler that reaps whatever child ended (waitpid(-1)).
  const auto path = data("malformed-crash.xml");
  const bool crashes = hwloc_crashes_in_process(path);
  struct sigaction reap = {};
  struct sigaction old = {};
  reap.sa_handler = reap_every_child;
  reap.sa_flags = SA_RESTART;
  sigemptyset(&reap.sa_mask);
  ASSERT_EQ(::sigaction(SIGCHLD, &reap, &old), 0);
  std::vector<Result<NodeTopology>> crash_results;
  std::vector<Result<NodeTopology>> ok_results;
  for (int i = 0; i < 5; ++i) {
    crash_results.push_back(load_hwloc_xml(path));
    ok_results.push_back(load_hwloc_xml(data("dgx2-with-hcas.xml")));
  }
  ::sigaction(SIGCHLD, &old, nullptr);
  for (const auto& c : crash_results) {
    if (crashes) {
      expect_crash_contained(c, path);
    } else {
      EXPECT_FALSE(c);
    }
  }
  for (const auto& r : ok_results) {
    ASSERT_TRUE(r) << r.error().to_string();
    EXPECT_EQ(r->gpus.size(), 16u);
  }
  EXPECT_TRUE(no_children_left());
}

TEST(NodeTopologyHostileXml, ForkedLoadEqualsTheInProcessLoad) {
  // The reader process's result crosses a pipe: nothing may be lost on the way.
  for (const char* name : {"dgx2-with-hcas.xml", "dgx2-hcas-pci-only.xml", "nvidiaDGX2-v2.xml",
                           "nvidiaDGX2.xml", "synthetic-2pack-4core-2pu.xml"}) {
    SCOPED_TRACE(name);
    const auto forked = load_hwloc_xml(data(name));
    const auto direct = detail::load_hwloc_xml_in_process(data(name));
    ASSERT_EQ(forked.has_value(), direct.has_value());
    if (forked) {
      EXPECT_TRUE(*forked == *direct);
      EXPECT_EQ(forked->source, data(name));
    } else {
      EXPECT_EQ(forked.error().to_string(), direct.error().to_string());
      EXPECT_EQ(forked.error().code, direct.error().code);
    }
  }
}

TEST(NodeTopologyHostileXml, FileLargerThanTheLimitIsRefusedUnread) {
  const auto path = scratch_name(".xml");
  std::ofstream(path) << "<?xml version=\"1.0\"?>\n<topology version=\"2.0\">";
  // Sparse: 64 MiB + 1 byte without writing them.
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(kMaxHwlocXmlBytes + 1)), 0);
  const auto t0 = Clock::now();
  auto t = load_hwloc_xml(path);
  fs::remove(path);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code, ErrorCode::kUnsupported);
  EXPECT_EQ(t.error().to_string(),
            path +
                ": larger than 64 MiB, the limit for an hwloc XML file (real ones are a few "
                "hundred KB)");
  EXPECT_LT(seconds_since(t0), 2.0);

  // A lower limit, for a real file: 52 KB is more than 1000 bytes.
  XmlLoadLimits small;
  small.max_bytes = 1000;
  auto s = load_hwloc_xml(data("dgx2-with-hcas.xml"), small);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().message,
            "larger than 1000 bytes, the limit for an hwloc XML file (real ones are a few "
            "hundred KB)");
}

TEST(NodeTopologyHostileXml, NonRegularFilesAreRefusedQuickly) {
  const auto t0 = Clock::now();
  auto zero = load_hwloc_xml("/dev/zero");
  ASSERT_FALSE(zero);
  EXPECT_EQ(zero.error().code, ErrorCode::kIo);
  EXPECT_EQ(zero.error().to_string(),
            "/dev/zero: is a character device, expected an hwloc XML file");

  // A FIFO without a writer: opening it must not block.
  const auto fifo = scratch_name(".fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  auto f = load_hwloc_xml(fifo);
  fs::remove(fifo);
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error().code, ErrorCode::kIo);
  EXPECT_EQ(f.error().to_string(), fifo + ": is a FIFO, expected an hwloc XML file");

  auto dir = load_hwloc_xml(FABRICPLACE_TEST_DATA);
  ASSERT_FALSE(dir);
  EXPECT_EQ(dir.error().code, ErrorCode::kIo);
  EXPECT_EQ(dir.error().message, "is a directory, expected an hwloc XML file");
  EXPECT_LT(seconds_since(t0), 2.0);
}

TEST(NodeTopologyHostileXml, StandardInputIsReadWithTheSameBound) {
  const int saved = ::dup(0);
  ASSERT_GE(saved, 0);
  const int file = ::open(data("dgx2-with-hcas.xml").c_str(), O_RDONLY);
  ASSERT_GE(file, 0);
  ::dup2(file, 0);
  ::close(file);
  auto t = load_hwloc_xml("-");
  ::dup2(saved, 0);
  ::close(saved);
  ASSERT_TRUE(t) << t.error().to_string();
  EXPECT_EQ(t->source, "-");
  EXPECT_EQ(t->gpus.size(), 16u);
}

TEST(NodeTopologyHostileXml, ReaderThatTakesTooLongIsStopped) {
  // A file that makes hwloc hang is hard to make; a deadline of 0 stops any reader.
  XmlLoadLimits none;
  none.timeout = std::chrono::milliseconds(0);
  const auto path = data("dgx2-with-hcas.xml");
  auto t = load_hwloc_xml(path, none);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code, ErrorCode::kUnsupported);
  EXPECT_EQ(t.error().to_string(),
            path +
                ": hwloc took longer than 0 ms reading it and was stopped; the file is "
                "malformed or hostile");
  EXPECT_TRUE(no_children_left());
}

TEST(NodeTopologyHostileXml, ReaderOutOfMemoryIsAnError) {
#ifdef FABRICPLACE_ASAN
  GTEST_SKIP() << "RLIMIT_AS is not applied under AddressSanitizer";
#else
  // 8,192 PUs (3.9 MB of XML) from hwloc's synthetic backend, made in a child so that this
  // process's heap has no room left over from it: parsing it needs tens of MB.
  const auto path = scratch_name(".xml");
  std::fflush(nullptr);
  const pid_t gen = ::fork();
  if (gen == 0) {
    hwloc_topology_t synth = nullptr;
    if (hwloc_topology_init(&synth) != 0 ||
        hwloc_topology_set_synthetic(synth, "pack:16 core:64 pu:8") != 0 ||
        hwloc_topology_load(synth) != 0 || hwloc_topology_export_xml(synth, path.c_str(), 0) != 0)
      ::_exit(1);
    ::_exit(0);
  }
  int status = 0;
  while (::waitpid(gen, &status, 0) < 0 && errno == EINTR) {
  }
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  struct Remove {
    std::string p;
    ~Remove() { fs::remove(p); }
  } remove{path};

  XmlLoadLimits tiny;
  tiny.memory_bytes = 1 << 20;  // 1 MiB more than the caller has
  auto t = load_hwloc_xml(path, tiny);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().file, path);
  // hwloc fails cleanly (ENOMEM) here; were it to crash instead, that is contained too.
  EXPECT_TRUE(t.error().message.starts_with("hwloc ran out of memory reading it (the reader may "
                                            "use 1 MiB more than its caller)") ||
              t.error().message.starts_with("hwloc crashed reading it"))
      << t.error().to_string();
  EXPECT_TRUE(no_children_left());
  auto ok = load_hwloc_xml(path);  // the default limit is plenty
  ASSERT_TRUE(ok) << ok.error().to_string();
  EXPECT_EQ(ok->cores, 1024u);
#endif
}

TEST(NodeTopologyHostileXml, DeeplyNestedAndEntityBombsAreErrors) {
  std::string deep = "<?xml version=\"1.0\"?>\n<topology version=\"2.0\">\n";
  for (int i = 0; i < 100000; ++i) deep += "<object type=\"Group\">";
  for (int i = 0; i < 100000; ++i) deep += "</object>";
  deep += "</topology>\n";
  std::string bomb =
      "<?xml version=\"1.0\"?>\n<!DOCTYPE topology [\n<!ENTITY a \"aaaaaaaaaaaaaaaaaaaa\">\n";
  std::string prev = "a";
  for (int i = 0; i < 10; ++i) {
    const std::string name = "e" + std::to_string(i);
    bomb += "<!ENTITY " + name + " \"";
    for (int k = 0; k < 10; ++k) bomb += "&" + prev + ";";
    bomb += "\">\n";
    prev = name;
  }
  bomb += "]>\n<topology version=\"2.0\"><object type=\"Machine\" name=\"&" + prev +
          ";\"/></topology>\n";
  for (const auto& [name, xml] : {std::pair{"deep", deep}, std::pair{"bomb", bomb}}) {
    SCOPED_TRACE(name);
    const ScratchFile f(xml);
    const auto t0 = Clock::now();
    auto t = load_hwloc_xml(f.path.string());
    EXPECT_LT(seconds_since(t0), 12.0);
    ASSERT_FALSE(t) << "loaded: " << t->cores << " cores";
    EXPECT_EQ(t.error().file, f.path.string()) << t.error().to_string();
  }
  EXPECT_TRUE(no_children_left());
}

TEST(NodeTopologyHostileXml, CheapChecksBeforeHwlocRuns) {
  const ScratchFile junk("# not xml\n<topology version=\"2.0\"></topology>\n");
  auto j = load_hwloc_xml(junk.path.string());
  ASSERT_FALSE(j);
  EXPECT_EQ(j.error().code, ErrorCode::kSyntax);
  EXPECT_EQ(j.error().message,
            "not an hwloc XML topology (it must begin with an XML declaration or <topology>)");

  constexpr char kWithNul[] = "<?xml version=\"1.0\"?>\n<topology\0>";
  const ScratchFile nul(std::string(kWithNul, sizeof kWithNul - 1));
  auto n = load_hwloc_xml(nul.path.string());
  ASSERT_FALSE(n);
  EXPECT_EQ(n.error().message, "not an hwloc XML topology (a NUL byte at offset 31)");

  // A UTF-8 byte order mark is fine.
  const ScratchFile bom("\xEF\xBB\xBF" + slurp(data("synthetic-2pack-4core-2pu.xml")));
  EXPECT_EQ(load_ok(bom.path.string()).cores, 8u);
}

// hwloc sizes its CPU and NUMA bitmaps by the largest PU and NUMA node os_index: a missing one
// (2^32-1) cost 512 MiB and seconds per bitmap. Such files are refused before hwloc runs, with
// the line of the object; indexes below the limit, comments and single quotes are fine.
TEST(NodeTopologyHostileXml, PuOrNumaNodeWithoutASaneOsIndexIsRefusedBeforeHwloc) {
  const std::string base = slurp(data("synthetic-2pack-4core-2pu.xml"));
  const auto edit = [&](const std::string& from, const std::string& to) {
    std::string s = base;
    const auto at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return s.replace(at, from.size(), to);
  };
  struct Case {
    const char* name;
    std::string xml;
    int line;
    std::string message;
  };
  const Case refused[] = {
      {"PU without os_index", edit("type=\"PU\" os_index=\"4\"", "type=\"PU\" _noisdex=\"4\""), 22,
       "a PU without os_index (hwloc would size its CPU and NUMA bitmaps for index 2^32-1)"},
      {"huge NUMA node", edit("type=\"NUMANode\" os_index=\"0\"",
                              "type=\"NUMANode\" os_index=\"4294967294\""),
       9,
       "a NUMA node with os_index=\"4294967294\"; expected a decimal number below 1048576 (Linux "
       "numbers at most 8192 CPUs and 1024 NUMA nodes)"},
      {"character reference", edit("type=\"PU\" os_index=\"4\"", "type=\"PU\" os_index=\"&#52;\""),
       22, "<object> attribute \"os_index\" written with a character reference; hwloc writes it plainly"},
      {"unquoted",
       edit("type=\"PU\" os_index=\"4\"", "type=\"PU\" os_index=4"), 22,
       "an <object> tag hwloc's XML never has (attribute \"os_index\" has no quoted value)"},
      {"twice", edit("type=\"PU\" os_index=\"4\"", "type=\"PU\" os_index=\"4\" os_index=\"5\""),
       22, "<object> has attribute \"os_index\" twice"},
      // The type as hwloc reads it: case-insensitive, by prefix ("pu", "PU:x", "node").
      {"lower-case pu", edit("type=\"PU\" os_index=\"4\"", "type=\"pu\" _noisdex=\"4\""), 22,
       "a PU without os_index (hwloc would size its CPU and NUMA bitmaps for index 2^32-1)"},
      {"PU:x", edit("type=\"PU\" os_index=\"4\"", "type=\"PU:x\" os_index=\"5000000\""), 22,
       "a PU with os_index=\"5000000\"; expected a decimal number below 1048576 (Linux numbers "
       "at most 8192 CPUs and 1024 NUMA nodes)"},
      {"node", edit("type=\"NUMANode\" os_index=\"0\"", "type=\"node\" os_index=\"3000000\""), 9,
       "a NUMA node with os_index=\"3000000\"; expected a decimal number below 1048576 (Linux "
       "numbers at most 8192 CPUs and 1024 NUMA nodes)"},
      // libxml2 gives hwloc an attribute's local name.
      {"namespaced", edit("type=\"PU\" os_index=\"4\"",
                          "xmlns:h=\"urn:h\" type=\"PU\" os_index=\"4\" h:os_index=\"5000000\""),
       22, "<object> has attribute \"os_index\" twice"},
      // What would hide the rest of the file from the check and not from libxml2.
      {"DOCTYPE literal", edit("\"hwloc2.dtd\"", "\"<!--\""), 2,
       "a DOCTYPE hwloc's exports never have (expected <!DOCTYPE topology SYSTEM \"hwloc2.dtd\">, "
       "or none)"},
      {"UTF-7", edit("encoding=\"UTF-8\"", "encoding=\"UTF-7\""), 1,
       "declares encoding \"UTF-7\"; hwloc's XML is UTF-8"},
  };
  for (const auto& c : refused) {
    SCOPED_TRACE(c.name);
    const ScratchFile f(c.xml);
    auto t = load_hwloc_xml(f.path.string());
    ASSERT_FALSE(t) << "loaded: " << t->cores << " cores";
    EXPECT_EQ(t.error().code, ErrorCode::kSyntax);
    EXPECT_EQ(t.error().file, f.path.string());
    EXPECT_EQ(t.error().line, c.line) << t.error().to_string();
    EXPECT_EQ(t.error().message, c.message);
  }
  const std::pair<const char*, std::string> loaded[] = {
      {"largest index", edit("type=\"PU\" os_index=\"3\"", "type=\"PU\" os_index=\"1048575\"")},
      {"single quotes", edit("type=\"PU\" os_index=\"4\"", "type='PU' os_index='4'")},
      {"no DOCTYPE", edit("<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">", "")},
      {"objects in a comment",
       edit("<topology", "<!-- <object type=\"PU\"> <object os_index=5> -->\n<topology")},
  };
  for (const auto& [name, xml] : loaded) {
    SCOPED_TRACE(name);
    const ScratchFile f(xml);
    EXPECT_EQ(load_ok(f.path.string()).cores, 8u);
  }
}

TEST(NodeTopologyHostileXml, LoadsFromSeveralThreadsAtOnce) {
  // Every call forks its own reader and waits for that pid only.
  const auto want = load_ok(data("dgx2-with-hcas.xml"));
  std::atomic<int> good{0};
  std::atomic<int> crashes{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&, i] {
      for (int k = 0; k < 5; ++k) {
        if (auto t = load_hwloc_xml(data("dgx2-with-hcas.xml")); t && *t == want) ++good;
        if (i == 0 && !load_hwloc_xml(data("malformed-crash.xml"))) ++crashes;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(good.load(), 20);
  EXPECT_EQ(crashes.load(), 5);
  EXPECT_TRUE(no_children_left());
}

TEST(NodeTopologyHostileXml, ReaderNeverFlushesTheCallersStdioBuffers) {
  // Something sits in stdout's buffer when the reader forks: it must come out once, not twice.
  const auto out = scratch_name(".out");
  std::fflush(stdout);
  const int saved = ::dup(1);
  const int file = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(file, 0);
  ::dup2(file, 1);
  ::close(file);
  std::setvbuf(stdout, nullptr, _IOFBF, 1 << 16);
  std::fputs("pending;", stdout);
  auto ok = load_hwloc_xml(data("dgx2-with-hcas.xml"));
  auto crash = load_hwloc_xml(data("malformed-crash.xml"));
  std::fflush(stdout);
  ::dup2(saved, 1);
  ::close(saved);
  std::setvbuf(stdout, nullptr, _IOLBF, BUFSIZ);
  EXPECT_TRUE(ok);
  EXPECT_FALSE(crash);
  EXPECT_EQ(slurp(out), "pending;");
  fs::remove(out);
}
