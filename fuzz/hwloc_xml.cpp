// SPDX-License-Identifier: GPL-2.0-or-later
// fuzz_hwloc_xml: node::load_hwloc_xml() over hwloc XML exports. It takes a path, so each
// input is written to one temporary file per process first (removed at exit); a topology
// that loads is bound for 1..9 local ranks (bind_local_ranks), whose cores must be in range.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "fabricplace/node/node_topology.hpp"
#include "fuzz_util.hpp"

namespace {
const std::string& scratch_path() {
  static const std::string path = [] {
    const char* dir = std::getenv("TMPDIR");
    std::string p = std::string(dir && *dir ? dir : "/tmp") + "/fabricplace-fuzz-hwloc-XXXXXX.xml";
    const int fd = mkstemps(p.data(), 4);
    if (fd < 0) {
      std::perror("fuzz_hwloc_xml: mkstemps");
      std::abort();
    }
    close(fd);
    std::atexit([] { std::remove(scratch_path().c_str()); });
    return p;
  }();
  return path;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fabricplace;
  const std::string& path = scratch_path();
  std::FILE* out = std::fopen(path.c_str(), "wb");
  if (!out) {
    std::perror("fuzz_hwloc_xml: fopen");
    std::abort();
  }
  if (size) fuzz::require(std::fwrite(data, 1, size, out) == size, "fuzz_hwloc_xml: write");
  fuzz::require(std::fclose(out) == 0, "fuzz_hwloc_xml: close");
  auto topo = node::load_hwloc_xml(path);
  if (!topo) {
    fuzz::check_error(topo.error());
    return 0;
  }
  for (unsigned k = 1; k <= 9; ++k) {
    for (const auto& b : node::bind_local_ranks(*topo, k)) {
      for (unsigned c : b.cores)
        fuzz::require(c < topo->cores, "bind_local_ranks: core out of range");
      if (b.gpu) fuzz::require(*b.gpu < topo->gpus.size(), "bind_local_ranks: GPU out of range");
    }
  }
  return 0;
}
