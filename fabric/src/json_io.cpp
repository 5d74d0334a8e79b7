// SPDX-License-Identifier: GPL-2.0-or-later
// Writing canonical JSON (reading: json_read.cpp).
#include "fabricplace/fabric/json_io.hpp"

#include "fabricplace/common/strings.hpp"

namespace fabricplace::fabric {
namespace {

bool default_port(const NodeRecord& n, const Port& p) {
  return n.type == NodeType::kSwitch && p.rec.guid == n.guid && p.rec.lid == n.lid &&
         p.rec.lmc == n.lmc && p.health.empty();
}

void write_health(std::string& out, const PortHealth& h, bool counters) {
  if (h.has_counters && counters) {
    out += ", \"counters\": {";
    for (std::size_t i = 0; i < kNumCounters; ++i) {
      if (i) out += ", ";
      out += "\"" + std::string(to_string(static_cast<Counter>(i))) +
             "\": " + std::to_string(h.counters[i]);
    }
    out += "}";
  }
  if (!h.problems.empty()) {
    out += ", \"problems\": [";
    for (std::size_t i = 0; i < h.problems.size(); ++i)
      out += (i ? ", " : "") + str::json_quote(h.problems[i]);
    out += "]";
  }
  if (h.was_linked_to != 0)
    out += ", \"was_linked_to\": [\"" + str::guid_hex(h.was_linked_to) + "\", " +
           std::to_string(h.was_linked_port) + ", " + str::json_quote(h.was_linked_desc) + ", \"" +
           std::string(to_string(h.was_linked_type)) + "\"]";
}

}  // namespace

std::string to_json(const Fabric& f, bool with_counters) {
  std::string out;
  out.reserve(f.num_nodes() * 200 + f.num_links() * 64 + 256);
  out += "{\n";
  out += "  \"format\": \"fabricplace-fabric\",\n";
  // Version 2 only when there is something version 1 cannot say: a file without domains
  // stays readable by builds from before them.
  out += "  \"version\": " + std::string(f.has_domains() ? "2" : "1") + ",\n";
  out += "  \"origin\": " + str::json_quote(f.origin()) + ",\n";
  if (!f.topology().incomplete.empty()) {
    out += "  \"incomplete\": [";
    const auto& inc = f.topology().incomplete;
    for (std::size_t i = 0; i < inc.size(); ++i) out += (i ? ", " : "") + str::json_quote(inc[i]);
    out += "],\n";
  }
  out += "  \"nodes\": [\n";
  for (std::uint32_t i = 0; i < f.num_nodes(); ++i) {
    const NodeRecord& n = f.node(NodeId{i});
    out += "    {\"guid\": \"" + str::guid_hex(n.guid) + "\", \"type\": \"";
    out += to_string(n.type);
    out += "\", \"desc\": " + str::json_quote(n.description);
    out += ", \"nports\": " + std::to_string(n.num_ports);
    out += ", \"vendid\": \"" + str::hex(n.vendor_id) + "\", \"devid\": \"" + str::hex(n.device_id);
    out += "\", \"sysimgguid\": \"" + str::guid_hex(n.system_image_guid) + "\"";
    if (n.type == NodeType::kSwitch) {
      out += ", \"lid\": " + std::to_string(n.lid) + ", \"lmc\": " + std::to_string(n.lmc);
      out += std::string(", \"enhanced_port0\": ") + (n.enhanced_port0 ? "true" : "false");
    }
    out += ", \"ports\": [";
    bool first = true;
    for (const Port& p : f.ports_of(NodeId{i})) {
      if (!first) out += ", ";
      first = false;
      if (default_port(n, p)) {
        out += std::to_string(p.rec.number);
        continue;
      }
      out += "{\"port\": " + std::to_string(p.rec.number) + ", \"guid\": \"" +
             str::guid_hex(p.rec.guid) + "\", \"lid\": " + std::to_string(p.rec.lid) +
             ", \"lmc\": " + std::to_string(p.rec.lmc);
      write_health(out, p.health, with_counters);
      out += "}";
    }
    out += "]}";
    out += i + 1 < f.num_nodes() ? ",\n" : "\n";
  }
  out += "  ],\n";
  out += "  \"links\": [\n";
  for (std::uint32_t i = 0; i < f.num_links(); ++i) {
    const Link& l = f.link(LinkId{i});
    out += "    [\"" + str::guid_hex(f.node(l.node_a).guid) + "\", " +
           std::to_string(f.port(l.a).rec.number) + ", \"" + str::guid_hex(f.node(l.node_b).guid) +
           "\", " + std::to_string(f.port(l.b).rec.number) + ", \"" + l.rate.to_string() + "\"";
    if (l.assumed.any())
      out += std::string(", {\"assumed\": [") + (l.assumed.rate ? "\"rate\"" : "") +
             (l.assumed.rate && l.assumed.count ? ", " : "") +
             (l.assumed.count ? "\"count\"" : "") + "]}";
    out += "]";
    out += i + 1 < f.num_links() ? ",\n" : "\n";
  }
  out += f.has_domains() ? "  ],\n" : "  ]\n";
  if (f.has_domains()) {
    out += "  \"domains\": [\n";
    const auto doms = f.domains();
    for (std::size_t d = 0; d < doms.size(); ++d) {
      out += "    {\"name\": " + str::json_quote(doms[d].name) +
             ", \"gpus_per_host\": " + std::to_string(doms[d].gpus_per_host) + ", \"hosts\": [";
      for (std::size_t i = 0; i < doms[d].hosts.size(); ++i)
        out += (i ? ", " : "") + str::json_quote(f.host(doms[d].hosts[i]).name);
      out += "]}";
      out += d + 1 < doms.size() ? ",\n" : "\n";
    }
    out += "  ]\n";
  }
  out += "}\n";
  return out;
}

}  // namespace fabricplace::fabric
