// SPDX-License-Identifier: GPL-2.0-or-later
// fuzz_states_sinfo: placement::states_from_sinfo() over `sinfo -h -N -o '%N %t'` output
// against tests/data/fabrics/fat2_L8.ibnetdiscover.txt; each line's state word also goes
// through parse_slurm_state(). Every result has one state per host of the fabric.
#include "fabricplace/common/strings.hpp"
#include "fabricplace/placement/request.hpp"
#include "fixed_fabric.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fabricplace;
  static const auto f = fuzz::load_fixed("fabrics/fat2_L8.ibnetdiscover.txt");
  const auto text = fuzz::text_of(data, size);
  auto s = placement::states_from_sinfo(f, text, "sinfo");
  if (s) {
    fuzz::require(s->state.size() == f.num_hosts(), "states_from_sinfo: not one state per host");
  } else {
    fuzz::check_error(s.error());
  }
  for (auto line : str::lines(text)) {
    const auto sp = line.rfind(' ');
    (void)placement::parse_slurm_state(sp == std::string_view::npos ? line : line.substr(sp + 1));
  }
  return 0;
}
