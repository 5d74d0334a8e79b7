// fuzz_plugin_options: the SPANK plugin's job options (plugin/src/options.hpp), one
// "fabric-tp=VALUE" (fabric-mode=, fabric-policy=, fabric-rankfile=) per line, each through
// set_option() as Slurm's option callback would pass it (a C string: up to a NUL byte); then
// the TP size in ranks for 1..9 tasks per 8-GPU node (launch.hpp tp_in_ranks()).
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
    for (Option which : {Option::kTp, Option::kMode, Option::kPolicy, Option::kRankfile}) {
      if (name != plugin::option_name(which)) continue;
      if (auto r = plugin::set_option(o, which, value.c_str()); !r) fuzz::check_error(r.error());
    }
    if (auto m = plugin::parse_mode(name))
      fuzz::require(plugin::parse_mode(plugin::mode_name(*m)) == m,
                    "parse_mode(mode_name(m)) != m");
  }
  if (o.tp) {
    for (std::uint32_t k = 1; k <= 9; ++k) {
      auto t = plugin::tp_in_ranks(*o.tp, 8, k);
      if (t) fuzz::require(*t > 0, "tp_in_ranks gave 0");
    }
  }
  (void)o.any();
  return 0;
}
