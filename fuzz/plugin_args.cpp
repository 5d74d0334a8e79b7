// SPDX-License-Identifier: GPL-2.0-or-later
// fuzz_plugin_args: what the plugin reads of a job's command line and batch script
// (plugin/src/launch.hpp, submit.hpp): the input is both a batch script, through
// sbatch_directives(), and, split on white space, srun's / sbatch's argv, through
// parse_srun_args() and submit_shape(directives, argv) and its node_count().
#include <string>
#include <vector>

#include "fuzz_util.hpp"
#include "launch.hpp"
#include "submit.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fabricplace;
  const auto text = fuzz::text_of(data, size);
  const std::vector<std::string> args = fuzz::words(text);
  const auto srun = plugin::parse_srun_args(args);
  if (srun.command)
    fuzz::require(*srun.command < args.size(), "parse_srun_args: command index past argv");
  const auto directives = plugin::sbatch_directives(text);
  const auto shape = plugin::submit_shape(directives, args);
  (void)shape.node_count();
  return 0;
}
