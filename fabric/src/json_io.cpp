#include "fabricplace/fabric/json_io.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "fabricplace/common/strings.hpp"

namespace fabricplace::fabric {
namespace {

using nlohmann::json;

bool default_port(const NodeRecord& n, const PortRecord& p) {
  return n.type == NodeType::kSwitch && p.guid == n.guid && p.lid == n.lid && p.lmc == n.lmc;
}

}  // namespace

std::string to_json(const Fabric& f) {
  std::string out;
  out.reserve(f.num_nodes() * 200 + f.num_links() * 64 + 256);
  out += "{\n";
  out += "  \"format\": \"fabricplace-fabric\",\n";
  out += "  \"version\": " + std::to_string(kJsonVersion) + ",\n";
  out += "  \"origin\": " + str::json_quote(f.origin()) + ",\n";
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
      if (default_port(n, p.rec)) {
        out += std::to_string(p.rec.number);
        continue;
      }
      out += "{\"port\": " + std::to_string(p.rec.number) + ", \"guid\": \"" +
             str::guid_hex(p.rec.guid) + "\", \"lid\": " + std::to_string(p.rec.lid) +
             ", \"lmc\": " + std::to_string(p.rec.lmc) + "}";
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
           "\", " + std::to_string(f.port(l.b).rec.number) + ", \"" + l.rate.to_string() + "\"]";
    out += i + 1 < f.num_links() ? ",\n" : "\n";
  }
  out += "  ]\n";
  out += "}\n";
  return out;
}

namespace {

// Error paths ("nodes[3].guid") are only spelled out when something is wrong: building them
// for every field costs more than the parse.
struct Reader {
  const std::string& file;

  std::unexpected<Error> bad(const std::string& path, const std::string& what) const {
    return fail(ErrorCode::kSyntax, path + ": " + what, file);
  }
  template <class Path>
  Result<const json*> member(const json& obj, Path&& path, const char* key,
                             bool required = true) const {
    const auto it = obj.find(key);
    if (it == obj.end()) {
      if (!required) return nullptr;
      return bad(path(""), std::string("missing \"") + key + "\"");
    }
    return &*it;
  }
  template <class Path>
  Result<std::uint64_t> hex(const json& v, Path&& path) const {
    if (!v.is_string()) return bad(path(), "expected a hexadecimal string like \"0x2c9\"");
    const auto& s = v.get_ref<const std::string&>();
    if (!s.starts_with("0x")) return bad(path(), "expected a 0x-prefixed hexadecimal string");
    const auto h = str::parse_hex(s);
    if (!h) return bad(path(), "\"" + s + "\" is not a 64-bit hexadecimal number");
    return *h;
  }
  template <class Path>
  Result<std::uint64_t> uint(const json& v, Path&& path, std::uint64_t max) const {
    if (!v.is_number_unsigned() || v.get<std::uint64_t>() > max)
      return bad(path(), "expected an integer from 0 to " + std::to_string(max));
    return v.get<std::uint64_t>();
  }
};

#define FP_TRY(var, expr)                                \
  auto var##_r = (expr);                                 \
  if (!var##_r) return std::unexpected(var##_r.error()); \
  auto var = *var##_r

}  // namespace

Result<void> read_json(std::string_view text, const std::string& file, FabricBuilder& builder) {
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    // e.byte is 1-based; turn it into a line number.
    const auto upto = std::min<std::size_t>(e.byte == 0 ? 0 : e.byte - 1, text.size());
    const int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + upto, '\n'));
    std::string what = e.what();
    if (const auto p = what.find("parse error"); p != std::string::npos) what = what.substr(p);
    return fail(ErrorCode::kSyntax, "invalid JSON: " + what, file, line);
  }
  Reader rd{file};
  if (!doc.is_object()) return rd.bad("(top level)", "expected an object");
  FP_TRY(format, rd.member(
                     doc, [](auto) { return std::string("(top level)"); }, "format"));
  if (!format->is_string() || format->get<std::string>() != "fabricplace-fabric")
    return rd.bad("format", "expected \"fabricplace-fabric\"");
  FP_TRY(version, rd.member(
                      doc, [](auto) { return std::string("(top level)"); }, "version"));
  if (!version->is_number_integer() || version->get<int>() != kJsonVersion)
    return rd.bad("version", "this build reads version " + std::to_string(kJsonVersion) + ", got " +
                                 version->dump());
  FP_TRY(origin, rd.member(
                     doc, [](auto) { return std::string("(top level)"); }, "origin", false));
  if (origin) {
    if (!origin->is_string()) return rd.bad("origin", "expected a string");
    builder.set_origin(origin->get<std::string>());
  }
  FP_TRY(nodes, rd.member(
                    doc, [](auto) { return std::string("(top level)"); }, "nodes"));
  if (!nodes->is_array()) return rd.bad("nodes", "expected an array");
  for (std::size_t i = 0; i < nodes->size(); ++i) {
    const json& jn = (*nodes)[i];
    // at("guid") -> "nodes[3].guid"; at("") -> "nodes[3]".
    const auto at = [i](std::string_view field) {
      std::string p = "nodes[" + std::to_string(i) + "]";
      if (!field.empty()) p += "." + std::string(field);
      return p;
    };
    if (!jn.is_object()) return rd.bad(at(""), "expected an object");
    for (const auto& [key, val] : jn.items()) {
      static const char* kKeys[] = {"guid",   "type",           "desc",       "nports",
                                    "vendid", "devid",          "sysimgguid", "lid",
                                    "lmc",    "enhanced_port0", "ports"};
      if (std::none_of(std::begin(kKeys), std::end(kKeys), [&](const char* k) { return key == k; }))
        return rd.bad(at(""), "unknown key \"" + key + "\"");
    }
    NodeRecord n;
    FP_TRY(guid, rd.member(jn, at, "guid"));
    FP_TRY(g, rd.hex(*guid, [&] { return at("guid"); }));
    n.guid = g;
    FP_TRY(type, rd.member(jn, at, "type"));
    const std::string t = type->is_string() ? type->get<std::string>() : "";
    if (t == "switch")
      n.type = NodeType::kSwitch;
    else if (t == "ca")
      n.type = NodeType::kCa;
    else if (t == "router")
      n.type = NodeType::kRouter;
    else
      return rd.bad(at("type"), "expected \"switch\", \"ca\" or \"router\"");
    FP_TRY(desc, rd.member(jn, at, "desc"));
    if (!desc->is_string()) return rd.bad(at("desc"), "expected a string");
    n.description = desc->get<std::string>();
    FP_TRY(nports, rd.member(jn, at, "nports"));
    FP_TRY(np, rd.uint(
                   *nports, [&] { return at("nports"); }, 65535));
    n.num_ports = static_cast<PortNum>(np);
    FP_TRY(vend, rd.member(jn, at, "vendid"));
    FP_TRY(vv, rd.hex(*vend, [&] { return at("vendid"); }));
    n.vendor_id = static_cast<std::uint32_t>(vv);
    FP_TRY(dev, rd.member(jn, at, "devid"));
    FP_TRY(dv, rd.hex(*dev, [&] { return at("devid"); }));
    n.device_id = static_cast<std::uint32_t>(dv);
    FP_TRY(sys, rd.member(jn, at, "sysimgguid"));
    FP_TRY(sv, rd.hex(*sys, [&] { return at("sysimgguid"); }));
    n.system_image_guid = sv;
    if (n.type == NodeType::kSwitch) {
      FP_TRY(lid, rd.member(jn, at, "lid"));
      FP_TRY(lv, rd.uint(
                     *lid, [&] { return at("lid"); }, 65535));
      n.lid = static_cast<std::uint16_t>(lv);
      FP_TRY(lmc, rd.member(jn, at, "lmc"));
      FP_TRY(mv, rd.uint(
                     *lmc, [&] { return at("lmc"); }, 7));
      n.lmc = static_cast<std::uint8_t>(mv);
      FP_TRY(enh, rd.member(jn, at, "enhanced_port0"));
      if (!enh->is_boolean()) return rd.bad(at("enhanced_port0"), "expected true or false");
      n.enhanced_port0 = enh->get<bool>();
    }
    if (builder.has_node(n.guid))
      return fail(ErrorCode::kDuplicate, at("") + ": duplicate GUID " + str::guid_hex(n.guid),
                  file);
    if (auto r = builder.add_node(n); !r)
      return fail(r.error().code, at("") + ": " + r.error().message, file);
    FP_TRY(ports, rd.member(jn, at, "ports"));
    if (!ports->is_array()) return rd.bad(at("ports"), "expected an array");
    for (std::size_t k = 0; k < ports->size(); ++k) {
      const json& jp = (*ports)[k];
      const auto pat = [&at, k](std::string_view field) {
        std::string p = at("ports[" + std::to_string(k) + "]");
        if (!field.empty()) p += "." + std::string(field);
        return p;
      };
      PortRecord p;
      if (jp.is_number()) {
        FP_TRY(num, rd.uint(
                        jp, [&] { return pat(""); }, 65535));
        if (n.type != NodeType::kSwitch)
          return rd.bad(pat(""),
                        "a bare port number is only allowed on switches; expected {\"port\": N, "
                        "\"guid\": ...}");
        p.number = static_cast<PortNum>(num);
        p.guid = n.guid;
        p.lid = n.lid;
        p.lmc = n.lmc;
      } else if (jp.is_object()) {
        FP_TRY(num, rd.member(jp, pat, "port"));
        FP_TRY(nv, rd.uint(
                       *num, [&] { return pat("port"); }, 65535));
        p.number = static_cast<PortNum>(nv);
        FP_TRY(pg, rd.member(jp, pat, "guid"));
        FP_TRY(pgv, rd.hex(*pg, [&] { return pat("guid"); }));
        p.guid = pgv;
        FP_TRY(plid, rd.member(jp, pat, "lid"));
        FP_TRY(plv, rd.uint(
                        *plid, [&] { return pat("lid"); }, 65535));
        p.lid = static_cast<std::uint16_t>(plv);
        FP_TRY(plmc, rd.member(jp, pat, "lmc"));
        FP_TRY(pmv, rd.uint(
                        *plmc, [&] { return pat("lmc"); }, 7));
        p.lmc = static_cast<std::uint8_t>(pmv);
      } else {
        return rd.bad(pat(""), "expected a port number or an object");
      }
      if (p.number == 0) return rd.bad(pat(""), "port numbers start at 1");
      if (auto r = builder.add_port(n.guid, p); !r)
        return fail(r.error().code, pat("") + ": " + r.error().message, file);
    }
  }
  FP_TRY(links, rd.member(
                    doc, [](auto) { return std::string("(top level)"); }, "links"));
  if (!links->is_array()) return rd.bad("links", "expected an array");
  for (std::size_t i = 0; i < links->size(); ++i) {
    const json& jl = (*links)[i];
    const auto lat = [i](int k) {
      std::string p = "links[" + std::to_string(i) + "]";
      if (k >= 0) p += "[" + std::to_string(k) + "]";
      return p;
    };
    if (!jl.is_array() || jl.size() != 5)
      return rd.bad(lat(-1), "expected [\"0x<guid>\", port, \"0x<guid>\", port, \"<rate>\"]");
    FP_TRY(ga, rd.hex(jl[0], [&] { return lat(0); }));
    FP_TRY(pa, rd.uint(
                   jl[1], [&] { return lat(1); }, 65535));
    FP_TRY(gb, rd.hex(jl[2], [&] { return lat(2); }));
    FP_TRY(pb, rd.uint(
                   jl[3], [&] { return lat(3); }, 65535));
    const auto rate =
        jl[4].is_string() ? parse_rate(jl[4].get_ref<const std::string&>()) : std::nullopt;
    if (!rate) return rd.bad(lat(4), "expected a link rate like \"4xHDR\"");
    for (const auto& [g, port] : {std::pair(ga, pa), std::pair(gb, pb)})
      if (!builder.has_port(g, static_cast<PortNum>(port)))
        return fail(ErrorCode::kReference,
                    lat(-1) + ": port " + std::to_string(port) + " of " + str::guid_hex(g) + " is " +
                        (builder.has_node(g) ? "not listed in that node's \"ports\""
                                             : "on a node that is not in \"nodes\""),
                    file);
    if (auto r = builder.add_link(ga, static_cast<PortNum>(pa), gb,
                                  static_cast<PortNum>(pb), *rate);
        !r)
      return fail(r.error().code, lat(-1) + ": " + r.error().message, file);
  }
  for (const auto& [key, val] : doc.items())
    if (key != "format" && key != "version" && key != "origin" && key != "nodes" && key != "links")
      return rd.bad("(top level)", "unknown key \"" + key + "\"");
  return {};
}

}  // namespace fabricplace::fabric
