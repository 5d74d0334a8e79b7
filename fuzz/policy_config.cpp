// SPDX-License-Identifier: GPL-2.0-or-later
// fuzz_policy_config: placement::parse_weights() over a policy config
// (etc/fabricplace/policy.conf: "name = value" lines); weights that parse are used to
// prepare a placement context on a small fixed fabric.
#include "fabricplace/placement/placement.hpp"
#include "fixed_fabric.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fabricplace;
  auto w = placement::parse_weights(fuzz::text_of(data, size), "policy.conf");
  if (!w) {
    fuzz::check_error(w.error());
    return 0;
  }
  static const auto f = fuzz::load_fixed("fat2:leaves=4,down=4,up=2,spines=2");
  (void)placement::prepare(f, *w);
  return 0;
}
