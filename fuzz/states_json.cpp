// SPDX-License-Identifier: GPL-2.0-or-later
// fuzz_states_json: placement::states_from_json() over `place --state` JSON (host -> Slurm
// state) against tests/data/fabrics/fat2_L8.ibnetdiscover.txt (node001..node160): every
// result has one state per host of the fabric.
#include "fabricplace/placement/request.hpp"
#include "fixed_fabric.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fabricplace;
  static const auto f = fuzz::load_fixed("fabrics/fat2_L8.ibnetdiscover.txt");
  auto s = placement::states_from_json(f, fuzz::text_of(data, size), "states.json");
  if (!s) {
    fuzz::check_error(s.error());
    return 0;
  }
  fuzz::require(s->state.size() == f.num_hosts(), "states_from_json: not one state per host");
  return 0;
}
