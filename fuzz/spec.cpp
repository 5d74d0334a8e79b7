// SPDX-License-Identifier: GPL-2.0-or-later
// fuzz_spec: fabric::generate() over synthetic spec strings (docs/synthetic-specs.md); a
// fabric it generates must pass Fabric::check() and round-trip through canonical JSON.
#include "fabricplace/fabric/spec.hpp"
#include "fabric_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fabricplace;
  const auto text = fuzz::text_of(data, size);
  (void)fabric::looks_like_spec(text);
  auto f = fabric::generate(text);
  if (!f) {
    fuzz::check_error(f.error());
    return 0;
  }
  fuzz::check_fabric(*f);
  return 0;
}
