// SPDX-License-Identifier: GPL-2.0-or-later
// fuzz_slurm_topology: fabric::read_slurm_topology() over a Slurm topology.conf; a fabric that
// builds must pass Fabric::check() and round-trip through canonical JSON.
#include "fabric_check.hpp"
#include "fabricplace/fabric/sources.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fabricplace;
  fabric::FabricBuilder b("fuzz");
  const fabric::SourceOptions options;
  if (auto r = fabric::read_slurm_topology(fuzz::text_of(data, size), "fuzz.txt", options, b); !r) {
    fuzz::check_error(r.error());
    return 0;
  }
  if (auto f = b.build()) fuzz::check_fabric(*f);
  return 0;
}
