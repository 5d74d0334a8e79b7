// SPDX-License-Identifier: GPL-2.0-or-later
// fuzz_nvidia_smi_domains: fabric::read_nvidia_smi_domains() over collected nvidia-smi output,
// then with_domains() onto a fixed 8-host fabric; a fabric that builds must pass
// Fabric::check() and round-trip through canonical JSON (version 2 with domains).
#include "fabric_check.hpp"
#include "fabricplace/fabric/domains.hpp"
#include "fixed_fabric.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fabricplace;
  static const fabric::Fabric fixed = fuzz::load_fixed("fat2:leaves=2,down=4,up=4");
  auto members = fabric::read_nvidia_smi_domains(fuzz::text_of(data, size), "fuzz.txt");
  if (!members) {
    fuzz::check_error(members.error());
    return 0;
  }
  auto f = fabric::with_domains(fixed, *members, "fuzz.txt");
  if (!f) {
    fuzz::check_error(f.error());
    return 0;
  }
  fuzz::check_fabric(*f);
  return 0;
}
