// SPDX-License-Identifier: GPL-2.0-or-later
// fuzz_plugin_options: the SPANK plugin's job options (plugin/src/options.hpp), one
// "fabric-tp=VALUE" (fabric-ep=, fabric-mode=, fabric-policy=, fabric-rankfile=) per line,
// each through set_option() as Slurm's option callback would pass it (a C string: up to a
// NUL byte); then the groups in ranks for 1..9 tasks per 8-GPU node (launch.hpp
// group_ranks()), and a task's place in that order.
#include <algorithm>
#include <string>

#include "fabricplace/common/strings.hpp"
#include "fuzz_util.hpp"
#include "launch.hpp"
#include "options.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fabricplace;
  using plugin::Option;
  plugin::JobOptions o;
  for (auto line : str::lines(fuzz::text_of(data, size))) {
    const auto eq = line.find('=');
    const auto name = line.substr(0, eq);
    const std::string value(eq == std::string_view::npos ? std::string_view{}
                                                         : line.substr(eq + 1));
    for (Option which :
         {Option::kTp, Option::kEp, Option::kMode, Option::kPolicy, Option::kRankfile}) {
      if (name != plugin::option_name(which)) continue;
      if (auto r = plugin::set_option(o, which, value.c_str()); !r) fuzz::check_error(r.error());
    }
    if (auto m = plugin::parse_mode(name))
      fuzz::require(plugin::parse_mode(plugin::mode_name(*m)) == m,
                    "parse_mode(mode_name(m)) != m");
  }
  if (o.groups().any()) {
    for (std::uint32_t k = 1; k <= 9; ++k) {
      auto r = plugin::group_ranks(o.groups(), 8, k);
      if (!r) continue;
      fuzz::require(r->tp > 0, "group_ranks gave a TP group of 0 ranks");
      fuzz::require((r->ep > 0) == o.ep.has_value(), "group_ranks: EP ranks without --fabric-ep");
      // Groups nest: the larger is whole groups of the smaller.
      if (r->ep)
        fuzz::require(std::max(r->tp, r->ep) % std::min(r->tp, r->ep) == 0,
                      "group_ranks: TP and EP groups do not nest");
      const auto p = plugin::place_in_order(12345, *r);
      fuzz::require(p.tp_group * r->tp + p.tp_rank == 12345, "place_in_order: TP place");
      if (r->ep)
        fuzz::require(*p.ep_group * r->ep + *p.ep_rank == 12345, "place_in_order: EP place");
    }
  }
  (void)o.any();
  return 0;
}
