// SPDX-License-Identifier: GPL-2.0-or-later
#include "fabricplace/ops/plugstack.hpp"

#include <algorithm>

#include "fabricplace/common/strings.hpp"
#include "fabricplace/policies/policies.hpp"

namespace fabricplace::ops {

std::span<const ArgDoc> plugstack_arg_docs() {
  static constexpr ArgDoc kDocs[] = {
      {"fabric", "PATH",
       "The canonical fabric JSON (`fabricplace slurm sync`, or `fabricplace fabric discover "
       "-o`). Exact mode places from it at submission; without a host map, launches derive "
       "one from it (slower; said once per process)."},
      {"hostmap", "PATH",
       "The host map read at every launch (`fabricplace slurm sync` writes it; default: the "
       "fabric= path with .hostmap for its extension). One of another `slurm sync` "
       "generation than the fabric JSON is stale: said, and derived from the JSON instead."},
      {"policy", "NAME",
       "The default --fabric-policy: fabric (default), slurm-tree, slurm-block or first-fit."},
      {"mode", "MODE", "The default --fabric-mode: constrain (default), exact or off."},
      {"gpus_per_node", "N", "GPUs per node (default 8): a TP group of more GPUs spans nodes."},
      {"topology", "KIND",
       "The cluster's TopologyPlugin: tree (default) or block. With block (Slurm 24.05+) a TP "
       "group that spans nodes becomes the job's --segment, applied by cli_filter.lua "
       "(CliFilterPlugins=lua)."},
      {"hwloc_xml", "PATH",
       "The compute nodes' hwloc topology (`lstopo node.xml`): each task gets NCCL_IB_HCA, the "
       "HCA nearest its GPU, and FABRICPLACE_GPU."},
      {"log", "PATH",
       "An extra log file for the plugin's messages (default: Slurm's log only); never opened "
       "through a symbolic link (slurmstepd writes it as root)."},
  };
  return kDocs;
}

Result<PluginConfig> parse_plugin_args(const std::vector<std::string>& args) {
  PluginConfig c;
  for (const auto& a : args) {
    const auto eq = a.find('=');
    if (eq == std::string::npos || eq == 0)
      return fail(ErrorCode::kUsage,
                  "plugstack.conf argument " + str::quoted(a) + ": expected key=value");
    const std::string key = a.substr(0, eq), value = a.substr(eq + 1);
    if (key == "fabric") {
      if (value.empty())
        return fail(ErrorCode::kUsage, "fabric=: expected the path of a fabric JSON file");
      c.fabric_path = value;
    } else if (key == "hostmap") {
      if (value.empty())
        return fail(ErrorCode::kUsage, "hostmap=: expected the path of a host map file");
      c.host_map_path = value;
    } else if (key == "policy") {
      if (!policies::parse_policy(value))
        return fail(ErrorCode::kUsage,
                    "policy=" + str::quoted(value) + ": expected " + policies::policy_choices());
      c.policy = value;
    } else if (key == "mode") {
      if (value != "constrain" && value != "exact" && value != "off")
        return fail(ErrorCode::kUsage,
                    "mode=" + str::quoted(value) + ": expected constrain, exact or off");
      c.mode = value;
    } else if (key == "gpus_per_node") {
      const auto v = str::parse_uint(value, 1024);
      if (!v || *v == 0)
        return fail(ErrorCode::kUsage,
                    "gpus_per_node=" + str::quoted(value) + ": expected an integer from 1 to 1024");
      c.gpus_per_node = static_cast<int>(*v);
    } else if (key == "topology") {
      if (value != "tree" && value != "block")
        return fail(ErrorCode::kUsage,
                    "topology=" + str::quoted(value) +
                        ": expected tree or block (the cluster's TopologyPlugin)");
      c.topology = value;
    } else if (key == "hwloc_xml") {
      if (value.empty())
        return fail(ErrorCode::kUsage, "hwloc_xml=: expected the path of an hwloc XML file");
      c.hwloc_xml = value;
    } else if (key == "log") {
      c.log_path = value;
    } else {
      std::string keys;
      const auto docs = plugstack_arg_docs();
      for (std::size_t i = 0; i < docs.size(); ++i)
        keys += std::string(i == 0 ? "" : i + 1 == docs.size() ? " or " : ", ") + docs[i].key + "=";
      return fail(ErrorCode::kUsage,
                  "unknown plugstack.conf argument " + str::quoted(key) + ", expected " + keys);
    }
  }
  return c;
}

std::optional<PlugstackLine> split_plugstack_line(std::string_view line) {
  if (const auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
  std::vector<std::string> words;
  std::size_t i = 0;
  const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\n'; };
  while (i < line.size()) {
    while (i < line.size() && blank(line[i])) ++i;
    const std::size_t start = i;
    while (i < line.size() && !blank(line[i])) ++i;
    if (i > start) words.emplace_back(line.substr(start, i - start));
  }
  if (words.empty()) return std::nullopt;
  PlugstackLine out;
  out.kind = words[0];
  if (words.size() > 1) out.plugin = words[1];
  if (words.size() > 2) out.args.assign(words.begin() + 2, words.end());
  return out;
}

Result<std::string> plugstack_line(const std::string& plugin, const std::vector<std::string>& args) {
  auto bad = [](const std::string& what, const std::string& why) {
    return fail(ErrorCode::kUsage,
                what + ": " + why +
                    " (Slurm reads plugstack.conf with no quoting: a '#' ends the line, blanks "
                    "and tabs split words)");
  };
  if (plugin.empty())
    return fail(ErrorCode::kUsage,
                "the plugstack line names no plugin (--plugin: the path of fabricplace.so)");
  auto check_word = [&](const std::string& what, const std::string& w) -> Result<void> {
    if (w.empty()) return bad(what, "an empty word");
    if (w.find('#') != std::string::npos) return bad(what + " " + str::quoted(w), "holds a '#'");
    if (w.find_first_of(" \t") != std::string::npos)
      return bad(what + " " + str::quoted(w), "holds a blank or a tab");
    if (w.find_first_of("\n\r") != std::string::npos)
      return bad(what + " " + str::quoted(w), "holds a line break");
    if (std::ranges::any_of(w, [](char c) { return static_cast<unsigned char>(c) < 0x20; }))
      return bad(what + " " + str::quoted(w), "holds a control character");
    return {};
  };
  if (auto ok = check_word("the plugin", plugin); !ok) return std::unexpected(ok.error());
  if (!plugin.ends_with(".so"))
    return fail(ErrorCode::kUsage, "the plugin " + str::quoted(plugin) +
                                       ": expected the path of fabricplace.so (a shared object)");
  for (const auto& a : args)
    if (auto ok = check_word("the plugin argument", a); !ok) return std::unexpected(ok.error());
  if (auto cfg = parse_plugin_args(args); !cfg)
    return fail(ErrorCode::kUsage, "the plugin would refuse its line: " + cfg.error().message);
  std::string line = "optional " + plugin;
  for (const auto& a : args) line += " " + a;
  if (line.size() > kPlugstackLineMax)
    return fail(ErrorCode::kUsage,
                "the plugstack line is " + std::to_string(line.size()) +
                    " bytes, more than the " + std::to_string(kPlugstackLineMax) +
                    " Slurm reads as one line (shorter paths, or fewer --plugin-args)");
  // Read back as Slurm will: the same plugin and the same arguments, nothing else.
  const auto back = split_plugstack_line(line);
  if (!back || back->kind != "optional" || back->plugin != plugin || back->args != args)
    return fail(ErrorCode::kUsage, "the plugstack line does not read back as written: " +
                                       str::excerpt(line, 200));
  return line + "\n";
}

}  // namespace fabricplace::ops
