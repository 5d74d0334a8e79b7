// SPDX-License-Identifier: GPL-2.0-or-later
// fuzz_plugstack_line: the plugin's plugstack.conf line as `slurm sync` builds and checks it
// (ops/plugstack.hpp). The input's first line is the plugin path, each further line one
// argument (so arguments may hold blanks, tabs and '#'). Properties: a line plugstack_line()
// accepts is at most kPlugstackLineMax bytes and one line, Slurm's split of it gives back
// exactly that plugin and those arguments, and the plugin's own parser accepts them; and
// splitting any text as Slurm does never fails and is stable (split, join, split again).
#include <string>
#include <vector>

#include "fabricplace/common/strings.hpp"
#include "fabricplace/ops/plugstack.hpp"
#include "fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fabricplace;
  const auto text = fuzz::text_of(data, size);
  std::vector<std::string> parts;
  for (auto part : str::split(text, '\n')) parts.emplace_back(part);
  if (parts.empty()) return 0;
  const std::string plugin = parts.front();
  const std::vector<std::string> args(parts.begin() + 1, parts.end());
  if (auto line = ops::plugstack_line(plugin, args)) {
    fuzz::require(line->size() <= ops::kPlugstackLineMax + 1 && line->back() == '\n' &&
                      line->find('\n') == line->size() - 1,
                  "plugstack_line: not one line Slurm reads whole");
    const auto back = ops::split_plugstack_line(*line);
    fuzz::require(back && back->kind == "optional" && back->plugin == plugin && back->args == args,
                  "plugstack_line: Slurm's split gives back another plugin or other arguments");
    fuzz::require(ops::parse_plugin_args(args).has_value(),
                  "plugstack_line: accepted arguments the plugin refuses");
  } else {
    fuzz::check_error(line.error());
  }
  if (const auto split = ops::split_plugstack_line(text)) {
    std::string joined = split->kind + " " + split->plugin;
    for (const auto& a : split->args) joined += " " + a;
    const auto again = ops::split_plugstack_line(joined);
    fuzz::require(again && again->kind == split->kind && again->plugin == split->plugin &&
                      again->args == split->args,
                  "split_plugstack_line: not stable under a join");
  }
  return 0;
}
