// SPDX-License-Identifier: GPL-2.0-or-later
// fuzz_ibnetdiscover: fabric::read_ibnetdiscover() over plain `ibnetdiscover` output (a -p dump is
// detected and read too); a fabric that builds must pass Fabric::check() and round-trip through
// canonical JSON.
#include "fabric_check.hpp"
#include "fabricplace/fabric/sources.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fabricplace;
  fabric::FabricBuilder b("fuzz");
  if (auto r = fabric::read_ibnetdiscover(fuzz::text_of(data, size), "fuzz.txt", b); !r) {
    fuzz::check_error(r.error());
    return 0;
  }
  if (auto f = b.build()) fuzz::check_fabric(*f);
  return 0;
}
