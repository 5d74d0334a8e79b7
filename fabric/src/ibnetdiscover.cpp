// SPDX-License-Identifier: GPL-2.0-or-later
// Parsers for `ibnetdiscover` output: the plain topology file and the `-p` ports report.
// Output formats as printed by rdma-core's infiniband-diags/ibnetdiscover.c
// (out_switch/out_ca/out_switch_port/out_ca_port and dump_ports_report).
#include <algorithm>
#include <unordered_map>

#include "dump_records.hpp"
#include "fabricplace/common/limits.hpp"
#include "fabricplace/common/strings.hpp"
#include "fabricplace/fabric/sources.hpp"

namespace fabricplace::fabric {
namespace detail {
namespace {

struct PortKey {
  Guid guid;
  PortNum port;
  bool operator==(const PortKey&) const = default;
};
struct PortKeyHash {
  std::size_t operator()(const PortKey& k) const {
    return std::hash<Guid>()(k.guid * 257 + k.port);
  }
};

std::string node_label(const DumpNode& n) {
  return str::quoted(n.rec.description, kNameExcerpt) + " (" + str::guid_hex(n.rec.guid) + ")";
}

}  // namespace

Result<void> resolve_dump(const DumpRecords& records, const std::string& file,
                          FabricBuilder& builder) {
  std::unordered_map<Guid, const DumpNode*> nodes;
  nodes.reserve(records.nodes.size());
  for (const auto& n : records.nodes) nodes.emplace(n.rec.guid, &n);
  std::unordered_map<PortKey, const DumpPort*, PortKeyHash> ports;
  ports.reserve(records.ports.size());
  for (const auto& p : records.ports) ports.emplace(PortKey{p.node, p.rec.number}, &p);

  // Cross-references, in line order so the first error is the earliest referring line.
  std::vector<const DumpPort*> by_line;
  by_line.reserve(records.ports.size());
  for (const auto& p : records.ports) by_line.push_back(&p);
  std::stable_sort(by_line.begin(), by_line.end(),
                   [](const DumpPort* a, const DumpPort* b) { return a->line < b->line; });
  for (const DumpPort* p : by_line) {
    if (!p->has_peer) continue;
    const DumpNode& self = *nodes.at(p->node);
    // Spelled out only when there is something to report.
    const auto where = [&] {
      return "port " + std::to_string(p->rec.number) + " of " + node_label(self);
    };
    const auto pn = nodes.find(p->peer);
    if (pn == nodes.end())
      return fail(ErrorCode::kReference,
                  where() + " links to node " + str::guid_hex(p->peer) +
                      ", which the file never defines (truncated dump?)",
                  file, p->line);
    if (pn->second->rec.type != p->peer_type)
      return fail(ErrorCode::kReference,
                  where() + " names its peer " + node_label(*pn->second) + " as a " +
                      std::string(to_string(p->peer_type)) + ", but it is a " +
                      std::string(to_string(pn->second->rec.type)),
                  file, p->line);
    const auto pp = ports.find(PortKey{p->peer, p->peer_port});
    if (pp == ports.end() || !pp->second->has_peer)
      return fail(
          ErrorCode::kReference,
          where() + " links to port " + std::to_string(p->peer_port) + " of " +
              node_label(*pn->second) + ", which does not link back (" +
              (pp == ports.end() ? "that port is not listed; truncated dump?"
                                 : "listed as down at line " + std::to_string(pp->second->line)) +
              ")",
          file, p->line);
    const DumpPort& back = *pp->second;
    if (back.peer != p->node || back.peer_port != p->rec.number)
      return fail(ErrorCode::kReference,
                  where() + " links to port " + std::to_string(p->peer_port) + " of " +
                      node_label(*pn->second) + ", but line " + std::to_string(back.line) +
                      " links that port to port " + std::to_string(back.peer_port) + " of " +
                      str::guid_hex(back.peer),
                  file, p->line);
    if (back.rate != p->rate && p->line < back.line)
      // Each end prints its own PortInfo; they can disagree (FDR10 is seen only through
      // Mellanox extended port info, extended speeds only when the capability bit is set).
      builder.add_warning(file + ":" + std::to_string(p->line) + ": " + where() +
                          " reports the link as " + p->rate.to_string() + " but line " +
                          std::to_string(back.line) + " reports it as " + back.rate.to_string() +
                          "; taking the lower");
  }

  auto at_line = [&](Result<void> r, int line) -> Result<void> {
    if (r) return r;
    Error e = r.error();
    e.file = file;
    e.line = line;
    return std::unexpected(std::move(e));
  };
  for (const auto& n : records.nodes)
    if (auto r = at_line(builder.add_node(n.rec), n.line); !r) return r;
  for (const auto& p : records.ports)
    if (auto r = at_line(builder.add_port(p.node, p.rec), p.line); !r) return r;
  for (const auto& p : records.ports) {
    if (!p.has_peer || std::pair(p.node, p.rec.number) > std::pair(p.peer, p.peer_port)) continue;
    const LinkRate rate = lower_rate(p.rate, ports.at(PortKey{p.peer, p.peer_port})->rate);
    if (auto r = at_line(builder.add_link(p.node, p.rec.number, p.peer, p.peer_port, rate), p.line);
        !r)
      return r;
  }
  return {};
}

}  // namespace detail

namespace {

using detail::DumpNode;
using detail::DumpPort;
using detail::DumpRecords;

// A cursor over one line, with the error context needed for messages.
class Cursor {
 public:
  Cursor(std::string_view s, const std::string& file, int line) : s_(s), file_(file), line_(line) {}

  void skip_ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t')) ++pos_;
  }
  bool at_end() const { return pos_ >= s_.size(); }
  bool peek(char c) const { return pos_ < s_.size() && s_[pos_] == c; }
  bool accept(char c) {
    if (!peek(c)) return false;
    ++pos_;
    return true;
  }
  bool accept(std::string_view w) {
    if (s_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  }
  std::string_view rest() const { return s_.substr(std::min(pos_, s_.size())); }
  std::string_view word() {
    const std::size_t b = pos_;
    while (pos_ < s_.size() && s_[pos_] != ' ' && s_[pos_] != '\t') ++pos_;
    return s_.substr(b, pos_ - b);
  }
  std::string_view until(char c) {
    const std::size_t b = pos_;
    while (pos_ < s_.size() && s_[pos_] != c) ++pos_;
    return s_.substr(b, pos_ - b);
  }
  std::size_t pos() const { return pos_; }
  void seek(std::size_t p) { pos_ = p; }

  std::unexpected<Error> error(const std::string& what) const {
    // The line as far as 60 bytes, or, when it went wrong further on, the 60 around there.
    const std::size_t at = std::min(pos_, s_.size());
    const std::string shown =
        at <= 40 ? str::quoted(s_) : "\"..." + str::excerpt(s_.substr(at - 30)) + "\"";
    return fail(ErrorCode::kSyntax, what + "; got " + shown, file_, line_);
  }
  Result<std::uint64_t> number(std::uint64_t max, const char* what) {
    const std::size_t b = pos_;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
    const auto v = str::parse_uint(s_.substr(b, pos_ - b), max);
    if (!v) return error(std::string("expected ") + what);
    return *v;
  }
  Result<std::uint64_t> hex(const char* what) {
    const std::size_t b = pos_;
    if (s_.substr(pos_, 2) == "0x") pos_ += 2;
    while (pos_ < s_.size() && std::isxdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    const auto v = str::parse_hex(s_.substr(b, pos_ - b));
    if (!v) return error(std::string("expected ") + what);
    return *v;
  }
  // "[12]" optionally followed by "[ext 3]" (ibnetdiscover -g).
  Result<PortNum> port_number(const char* what) {
    if (!accept('[')) return error(std::string("expected '[' starting ") + what);
    auto n = number(254, what);
    if (!n) return std::unexpected(n.error());
    if (!accept(']')) return error(std::string("expected ']' after ") + what);
    if (accept("[ext ")) {
      until(']');
      if (!accept(']')) return error("expected ']' closing '[ext N]'");
    }
    return static_cast<PortNum>(*n);
  }

 private:
  std::string_view s_;
  std::size_t pos_ = 0;
  const std::string& file_;
  int line_;
};

const char* kRateHelp =
    "a link rate <width><speed> such as 4xHDR (width 1x/2x/4x/8x/12x, speed "
    "SDR/DDR/QDR/FDR10/FDR/EDR/HDR/NDR/XDR)";

// Parses the tail of a port comment after the peer description: "lid N 4xHDR [...]".
Result<LinkRate> rate_after_lid(Cursor& c) {
  c.skip_ws();
  if (!c.accept("lid")) return c.error("expected 'lid N <rate>' in the port comment");
  c.skip_ws();
  if (auto n = c.number(65535, "a LID"); !n) return std::unexpected(n.error());
  c.skip_ws();
  const auto tok = c.word();
  const auto rate = parse_rate(tok);
  if (!rate) return c.error("bad link rate " + str::quoted(tok) + ", expected " + kRateHelp);
  return *rate;
}

// "S-0123456789abcdef" -> (type, guid).
Result<std::pair<NodeType, Guid>> parse_node_id(Cursor& c) {
  if (!c.accept('"')) return c.error("expected a quoted node id like \"S-<guid>\"");
  NodeType type;
  if (c.accept('S'))
    type = NodeType::kSwitch;
  else if (c.accept('H'))
    type = NodeType::kCa;
  else if (c.accept('R'))
    type = NodeType::kRouter;
  else
    return c.error("expected a node id \"S-\", \"H-\" or \"R-\" followed by a GUID");
  if (!c.accept('-')) return c.error("expected '-' in the node id");
  auto g = c.hex("a hexadecimal GUID in the node id");
  if (!g) return std::unexpected(g.error());
  if (!c.accept('"')) return c.error("expected '\"' closing the node id");
  return std::pair(type, static_cast<Guid>(*g));
}

// Text between the first '"' after the current position and the last '"' before `stop`
// (or the last '"' of the line when `stop` is not found).
Result<std::string> quoted_description(Cursor& c, std::string_view stop) {
  c.skip_ws();
  if (!c.accept('"')) return c.error("expected a quoted node description");
  const auto rest = c.rest();
  std::size_t end = stop.empty() ? std::string_view::npos : rest.find(stop);
  if (end == std::string_view::npos)
    end = rest.rfind('"');
  else
    end = rest.rfind('"', end);
  if (end == std::string_view::npos) return c.error("expected '\"' closing the node description");
  std::string desc(rest.substr(0, end));
  c.seek(c.pos() + end + 1);
  return desc;
}

struct Pending {  // vendid=/devid=/sysimgguid=/...guid= lines before a node record
  std::uint32_t vendor_id = 0, device_id = 0;
  Guid system_image_guid = 0;
  Guid node_guid = 0, port_guid = 0;
  int guid_line = 0;
};

}  // namespace

namespace {
// A syntax error on the last line of a file that stops mid-line is most likely a cut-off
// dump: say so.
Result<void> hint_truncation(Result<void> r, std::string_view text) {
  if (r || r.error().code != ErrorCode::kSyntax || text.empty() || text.back() == '\n') return r;
  const int last = static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
  if (r.error().line != last) return r;
  Error e = r.error();
  e.message += " (the file ends in the middle of this line: truncated dump?)";
  return std::unexpected(std::move(e));
}
Result<void> read_plain(std::string_view text, const std::string& file, FabricBuilder& builder);
Result<void> read_ports(std::string_view text, const std::string& file, FabricBuilder& builder);
}  // namespace

Result<void> read_ibnetdiscover(std::string_view text, const std::string& file,
                                FabricBuilder& builder) {
  if (sniff_format(text) == SourceFormat::kIbnetdiscoverPorts)
    return hint_truncation(read_ports(text, file, builder), text);
  return hint_truncation(read_plain(text, file, builder), text);
}

Result<void> read_ibnetdiscover_ports(std::string_view text, const std::string& file,
                                      FabricBuilder& builder) {
  return hint_truncation(read_ports(text, file, builder), text);
}

namespace {
Result<void> read_plain(std::string_view text, const std::string& file, FabricBuilder& builder) {
  DumpRecords rec;
  std::unordered_map<Guid, int> node_line;
  std::unordered_map<Guid, std::vector<PortNum>> seen_ports;
  Pending pending;
  DumpNode* current = nullptr;
  Guid switch_port_guid = 0;
  int lineno = 0;
  for (std::string_view raw : str::lines(text)) {
    ++lineno;
    const std::string_view line = str::trim(raw);
    Cursor c(line, file, lineno);
    if (line.empty() || line.front() == '#') continue;

    // key=value header lines.
    auto header_hex = [&](std::string_view key, auto& into) -> Result<bool> {
      if (!c.accept(key)) return false;
      auto v = c.hex("a hexadecimal value");
      if (!v) return std::unexpected(v.error());
      into = static_cast<std::remove_reference_t<decltype(into)>>(*v);
      return true;
    };
    bool handled = false;
    for (auto [key, field] :
         {std::pair<std::string_view, int>{"vendid=", 0}, {"devid=", 1}, {"sysimgguid=", 2}}) {
      Result<bool> r = field == 0   ? header_hex(key, pending.vendor_id)
                       : field == 1 ? header_hex(key, pending.device_id)
                                    : header_hex(key, pending.system_image_guid);
      if (!r) return std::unexpected(r.error());
      if (*r) {
        handled = true;
        break;
      }
    }
    if (handled) continue;
    if (c.accept("switchguid=") || c.accept("caguid=") || c.accept("rtguid=")) {
      auto g = c.hex("a hexadecimal GUID");
      if (!g) return std::unexpected(g.error());
      pending.node_guid = *g;
      pending.port_guid = *g;
      pending.guid_line = lineno;
      if (c.accept('(')) {  // switchguid=0x...(portguid)
        auto pg = c.hex("a hexadecimal port GUID");
        if (!pg) return std::unexpected(pg.error());
        pending.port_guid = *pg;
        if (!c.accept(')')) return c.error("expected ')' after the port GUID");
      }
      continue;
    }
    // ibnetdiscover -g chassis grouping lines carry nothing we need.
    if (c.accept("Chassis ") || c.accept("Non-Chassis Nodes") || c.accept("Hostname:")) continue;

    // Node records.
    NodeType type{};
    bool is_node = true;
    if (c.accept("Switch"))
      type = NodeType::kSwitch;
    else if (c.accept("Ca"))
      type = NodeType::kCa;
    else if (c.accept("Rt"))
      type = NodeType::kRouter;
    else
      is_node = false;
    if (is_node && !c.at_end() && c.peek(' ') == false && c.peek('\t') == false) is_node = false;
    if (is_node) {
      c.skip_ws();
      auto nports = c.number(254, "the node's port count");
      if (!nports) return std::unexpected(nports.error());
      c.skip_ws();
      auto id = parse_node_id(c);
      if (!id) return std::unexpected(id.error());
      if (id->first != type) return c.error("node id type letter does not match the record type");
      DumpNode node;
      node.line = lineno;
      node.rec.guid = id->second;
      node.rec.type = type;
      node.rec.num_ports = static_cast<PortNum>(*nports);
      node.rec.vendor_id = pending.vendor_id;
      node.rec.device_id = pending.device_id;
      node.rec.system_image_guid = pending.system_image_guid;
      if (pending.guid_line && pending.node_guid != id->second)
        return fail(ErrorCode::kSyntax,
                    "node id GUID " + str::guid_hex(id->second) + " differs from " +
                        str::guid_hex(pending.node_guid) + " given on line " +
                        std::to_string(pending.guid_line),
                    file, lineno);
      switch_port_guid = pending.guid_line ? pending.port_guid : id->second;
      c.skip_ws();
      if (!c.accept('#')) return c.error("expected '# \"<node description>\"' after the node id");
      auto desc = quoted_description(
          c, type == NodeType::kSwitch ? std::string_view(" port 0") : std::string_view());
      if (!desc) return std::unexpected(desc.error());
      node.rec.description = std::move(*desc);
      if (type == NodeType::kSwitch) {
        // ' enhanced port 0 lid 12 lmc 0' (or 'base port 0 ...').
        c.skip_ws();
        const auto kind = c.word();
        node.rec.enhanced_port0 = kind == "enhanced";
        c.skip_ws();
        if (c.accept("port 0")) {
          c.skip_ws();
          if (c.accept("lid")) {
            c.skip_ws();
            auto lid = c.number(65535, "the switch LID");
            if (!lid) return std::unexpected(lid.error());
            node.rec.lid = static_cast<std::uint16_t>(*lid);
            c.skip_ws();
            if (c.accept("lmc")) {
              c.skip_ws();
              auto lmc = c.number(7, "the switch LMC");
              if (!lmc) return std::unexpected(lmc.error());
              node.rec.lmc = static_cast<std::uint8_t>(*lmc);
            }
          }
        }
      }
      auto [it, inserted] = node_line.emplace(node.rec.guid, lineno);
      if (!inserted)
        return fail(ErrorCode::kDuplicate,
                    "duplicate GUID " + str::guid_hex(node.rec.guid) +
                        ": already defined at line " + std::to_string(it->second),
                    file, lineno);
      rec.nodes.push_back(std::move(node));
      current = &rec.nodes.back();
      pending = Pending{};
      continue;
    }

    if (!c.peek('[')) {
      const auto w = Cursor(line, file, lineno).word();
      return c.error("unknown record " + str::quoted(w) +
                     ", expected Switch, Ca, Rt, a port line \"[N] ...\", or one of "
                     "vendid=, devid=, sysimgguid=, switchguid=, caguid=, rtguid=");
    }
    if (!current) return c.error("port line before any Switch, Ca or Rt record");

    // Port lines.
    DumpPort p;
    p.line = lineno;
    p.node = current->rec.guid;
    auto num = c.port_number("the port number");
    if (!num) return std::unexpected(num.error());
    if (*num == 0) return c.error("port 0 is the switch management port and has no link");
    if (current->rec.num_ports != 0 && *num > current->rec.num_ports)
      return c.error("port " + std::to_string(*num) + " is beyond the " +
                     std::to_string(current->rec.num_ports) + " ports the node record on line " +
                     std::to_string(current->line) + " declares");
    p.rec.number = *num;
    const bool is_switch = current->rec.type == NodeType::kSwitch;
    if (is_switch) {
      p.rec.guid = switch_port_guid;
      p.rec.lid = current->rec.lid;
    } else {
      if (!c.accept('(')) return c.error("expected '(<port GUID>)' after the CA port number");
      auto pg = c.hex("a hexadecimal port GUID");
      if (!pg) return std::unexpected(pg.error());
      if (!c.accept(')')) return c.error("expected ')' after the port GUID");
      p.rec.guid = *pg;
    }
    c.skip_ws();
    auto peer = parse_node_id(c);
    if (!peer) return std::unexpected(peer.error());
    p.has_peer = true;
    p.peer_type = peer->first;
    p.peer = peer->second;
    auto pp = c.port_number("the peer port number");
    if (!pp) return std::unexpected(pp.error());
    p.peer_port = *pp;
    c.skip_ws();
    if (c.accept('(')) {  // peer port GUID of a CA / router peer
      c.until(')');
      if (!c.accept(')')) return c.error("expected ')' after the peer port GUID");
    }
    c.skip_ws();
    if (!c.accept('#')) return c.error("expected '# ... lid N <rate>' comment after the peer");
    if (!is_switch) {
      // "# lid 5 lmc 0 "peer desc" lid 7 4xHDR"
      c.skip_ws();
      if (!c.accept("lid"))
        return c.error("expected 'lid N lmc M' at the start of the CA port comment");
      c.skip_ws();
      auto lid = c.number(65535, "the port LID");
      if (!lid) return std::unexpected(lid.error());
      p.rec.lid = static_cast<std::uint16_t>(*lid);
      c.skip_ws();
      if (!c.accept("lmc")) return c.error("expected 'lmc M' after the port LID");
      c.skip_ws();
      auto lmc = c.number(7, "the port LMC");
      if (!lmc) return std::unexpected(lmc.error());
      p.rec.lmc = static_cast<std::uint8_t>(*lmc);
    }
    // The peer description may hold anything, so take the rate after its last quote.
    const auto rest = c.rest();
    const auto last_quote = rest.rfind('"');
    if (last_quote == std::string_view::npos || rest.find('"') == last_quote)
      return c.error("expected the quoted peer description in the port comment");
    c.seek(c.pos() + last_quote + 1);
    auto rate = rate_after_lid(c);
    if (!rate) return std::unexpected(rate.error());
    p.rate = *rate;
    auto& used = seen_ports[p.node];
    if (std::find(used.begin(), used.end(), p.rec.number) != used.end())
      return fail(ErrorCode::kDuplicate,
                  "port " + std::to_string(p.rec.number) + " of " +
                      str::quoted(current->rec.description, kNameExcerpt) + " is listed twice",
                  file, lineno);
    used.push_back(p.rec.number);
    rec.ports.push_back(p);
  }
  if (rec.nodes.empty())
    return fail(
        ErrorCode::kSyntax,
        "no Switch, Ca or Rt record found up to the end: not an ibnetdiscover topology file", file,
        lineno);
  return detail::resolve_dump(rec, file, builder);
}

Result<void> read_ports(std::string_view text, const std::string& file, FabricBuilder& builder) {
  // Each line: "SW  lid port 0xguid 4x HDR - CA lid port 0xguid ( 'desc' - 'peer desc' )"
  // or, for a port without a peer: "SW  lid port 0xguid 4x SDR <padding> 'desc'".
  // CA node GUIDs are not printed; a CA is identified by its port GUID minus (port - 1),
  // which groups the ports of one multi-port HCA (documented in docs/sources.md).
  DumpRecords rec;
  std::unordered_map<Guid, std::size_t> node_index;
  std::unordered_map<Guid, std::vector<PortNum>> seen_ports;
  auto node_guid = [](NodeType type, Guid port_guid, PortNum port) {
    return type == NodeType::kSwitch ? port_guid : port_guid - (port - 1u);
  };
  auto parse_type = [](std::string_view w) -> std::optional<NodeType> {
    if (w == "SW") return NodeType::kSwitch;
    if (w == "CA") return NodeType::kCa;
    if (w == "RT") return NodeType::kRouter;
    return std::nullopt;
  };
  struct End {
    NodeType type;
    std::uint16_t lid;
    PortNum port;
    Guid guid;
  };
  int lineno = 0;
  for (std::string_view raw : str::lines(text)) {
    ++lineno;
    const std::string_view line = str::trim(raw);
    if (line.empty() || line.front() == '#') continue;
    Cursor c(line, file, lineno);
    auto end = [&](bool peer) -> Result<End> {
      c.skip_ws();
      const auto w = c.word();
      const auto type = parse_type(w);
      if (!type)
        return c.error(std::string(peer ? "expected the peer's node type"
                                        : "unknown record " + str::quoted(w) + ", expected") +
                       " SW, CA or RT");
      c.skip_ws();
      auto lid = c.number(65535, "a LID");
      if (!lid) return std::unexpected(lid.error());
      c.skip_ws();
      auto port = c.number(254, "a port number");
      if (!port) return std::unexpected(port.error());
      if (*port == 0) return c.error("port 0 is the switch management port and has no link");
      c.skip_ws();
      if (!c.accept("0x")) return c.error("expected a 0x-prefixed port GUID");
      c.seek(c.pos() - 2);
      auto guid = c.hex("a hexadecimal port GUID");
      if (!guid) return std::unexpected(guid.error());
      return End{*type, static_cast<std::uint16_t>(*lid), static_cast<PortNum>(*port), *guid};
    };
    auto self = end(false);
    if (!self) return std::unexpected(self.error());
    c.skip_ws();
    const auto wtok = c.word();
    c.skip_ws();
    const auto stok = c.word();
    const auto width = parse_width(wtok);
    const auto speed = parse_speed(stok);
    if (!width || !speed || wtok.empty() || (wtok.back() != 'x' && wtok != "??"))
      return c.error("bad link rate " + str::quoted(std::string(wtok) + " " + std::string(stok)) +
                     ", expected " + kRateHelp + " written as two words, e.g. \"4x HDR\"");
    c.skip_ws();
    DumpPort p;
    p.line = lineno;
    p.rate = LinkRate{*width, *speed};
    std::string desc, peer_desc;
    std::optional<End> peer;
    if (c.accept('-')) {
      auto pe = end(true);
      if (!pe) return std::unexpected(pe.error());
      peer = *pe;
      c.skip_ws();
      if (!c.accept("( '"))
        return c.error("expected \"( '<description>' - '<peer description>' )\"");
      const auto rest = c.rest();
      const auto mid = rest.find("' - '");
      if (mid == std::string_view::npos || !rest.ends_with("' )"))
        return c.error("expected \"( '<description>' - '<peer description>' )\"");
      desc = std::string(rest.substr(0, mid));
      peer_desc = std::string(rest.substr(mid + 5, rest.size() - mid - 5 - 3));
    } else {
      const auto rest = c.rest();
      if (rest.size() < 2 || rest.front() != '\'' || rest.back() != '\'')
        return c.error(
            "expected \"- <peer>\" or the quoted node description of a port without a peer");
      desc = std::string(rest.substr(1, rest.size() - 2));
    }

    // Node records, merged as they repeat on every port line.
    auto add = [&](const End& e, const std::string& d) -> Result<Guid> {
      NodeRecord n;
      n.type = e.type;
      n.guid = node_guid(e.type, e.guid, e.port);
      n.description = d;
      if (e.type == NodeType::kSwitch) n.lid = e.lid;
      auto [it, inserted] = node_index.try_emplace(n.guid, rec.nodes.size());
      if (inserted) {
        rec.nodes.push_back(DumpNode{n, lineno});
      } else {
        const auto& old = rec.nodes[it->second].rec;
        if (old.type != n.type || old.description != n.description || old.lid != n.lid)
          return fail(ErrorCode::kDuplicate,
                      "GUID " + str::guid_hex(n.guid) + " (" + str::quoted(d, kNameExcerpt) +
                          ") clashes with " + str::quoted(old.description, kNameExcerpt) +
                          " of line " + std::to_string(rec.nodes[it->second].line),
                      file, lineno);
      }
      return n.guid;
    };
    auto g = add(*self, desc);
    if (!g) return std::unexpected(g.error());
    p.node = *g;
    p.rec.number = self->port;
    p.rec.guid = self->guid;
    p.rec.lid = self->lid;  // a switch port shows the switch's LID, a CA port its own
    if (peer) {
      auto pg = add(*peer, peer_desc);
      if (!pg) return std::unexpected(pg.error());
      p.has_peer = true;
      p.peer = *pg;
      p.peer_port = peer->port;
      p.peer_type = peer->type;
    }
    auto& used = seen_ports[p.node];
    if (std::find(used.begin(), used.end(), p.rec.number) != used.end())
      return fail(ErrorCode::kDuplicate,
                  "port " + std::to_string(p.rec.number) + " of " +
                      str::quoted(desc, kNameExcerpt) + " is listed twice",
                  file, lineno);
    used.push_back(p.rec.number);
    rec.ports.push_back(p);
  }
  if (rec.ports.empty())
    return fail(ErrorCode::kSyntax,
                "no port lines found up to the end: not an ibnetdiscover -p report", file, lineno);
  // A node only ever seen as a peer was never listed itself: the report is truncated.
  return detail::resolve_dump(rec, file, builder);
}

}  // namespace

}  // namespace fabricplace::fabric
