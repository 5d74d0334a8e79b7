#include "config.hpp"

#include "fabricplace/common/strings.hpp"
#include "fabricplace/policies/policies.hpp"

namespace fabricplace::plugin {

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
      return fail(ErrorCode::kUsage,
                  "unknown plugstack.conf argument " + str::quoted(key) +
                      ", expected fabric=, hostmap=, policy=, mode=, gpus_per_node=, topology=, "
                      "hwloc_xml= or log=");
    }
  }
  return c;
}

}  // namespace fabricplace::plugin
