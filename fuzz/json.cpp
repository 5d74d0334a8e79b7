// SPDX-License-Identifier: GPL-2.0-or-later
// fuzz_json: fabric::read_json() over canonical JSON (docs/fabric-json.md). A fabric that
// builds must pass Fabric::check() and its JSON must be stable: read -> write -> read ->
// write gives byte-identical output (json_io.hpp's contract).
#include "fabric_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fabricplace;
  fabric::FabricBuilder b("fuzz");
  if (auto r = fabric::read_json(fuzz::text_of(data, size), "fuzz.json", b); !r) {
    fuzz::check_error(r.error());
    return 0;
  }
  if (auto f = b.build()) fuzz::check_fabric(*f);
  return 0;
}
