#include "config.hpp"

#include "fabricplace/common/strings.hpp"
#include "fabricplace/policies/policies.hpp"

namespace fabricplace::plugin {

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
      {"log", "PATH", "An extra log file for the plugin's messages (default: Slurm's log only)."},
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

}  // namespace fabricplace::plugin
