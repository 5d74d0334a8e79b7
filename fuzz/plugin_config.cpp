// SPDX-License-Identifier: GPL-2.0-or-later
// fuzz_plugin_config: the SPANK plugin's plugstack.conf arguments (plugin/src/config.hpp):
// the input split on white space into words, as Slurm splits a plugstack.conf line, through
// parse_plugin_args(); a config that parses gets its default host map path
// (launch.hpp default_host_map_path()).
#include <string>
#include <vector>

#include "config.hpp"
#include "fuzz_util.hpp"
#include "launch.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fabricplace;
  const auto text = fuzz::text_of(data, size);
  const std::vector<std::string> args = fuzz::words(text);
  auto c = plugin::parse_plugin_args(args);
  if (!c) {
    fuzz::check_error(c.error());
    return 0;
  }
  fuzz::require(c->gpus_per_node >= 1, "parse_plugin_args: gpus_per_node < 1");
  if (!c->fabric_path.empty()) (void)plugin::default_host_map_path(c->fabric_path);
  return 0;
}
