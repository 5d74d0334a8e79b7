// SPDX-License-Identifier: GPL-2.0-or-later
#include "fabricplace/routes/table.hpp"

#include <algorithm>
#include <optional>
#include <tuple>
#include <unordered_map>

#include "fabricplace/common/strings.hpp"

namespace fabricplace::routes {

using fabric::kMaxIbPort;
using fabric::kNoLink;
using fabric::kNoNode;
using fabric::NodeType;

bool switch_to_switch(const Fabric& f, DirLink d) {
  const auto& l = f.link(fabric::LinkId{d / 2});
  return f.node(l.node_a).type == NodeType::kSwitch && f.node(l.node_b).type == NodeType::kSwitch;
}

std::string dir_link_name(const Fabric& f, DirLink d) {
  const auto& l = f.link(fabric::LinkId{d / 2});
  const auto from = d % 2 == 0 ? l.a : l.b;
  const auto to = d % 2 == 0 ? l.b : l.a;
  return fabric::port_name(f, from) + " -> " + fabric::port_name(f, to);
}

std::vector<double> link_gbps(const Fabric& f) {
  double fastest = 0;
  for (const auto& l : f.links()) fastest = std::max(fastest, l.rate.gbps());
  std::vector<double> gbps(f.num_links());
  for (std::uint32_t l = 0; l < f.num_links(); ++l) {
    const double g = f.link(fabric::LinkId{l}).rate.gbps();
    gbps[l] = g > 0 ? g : (fastest > 0 ? fastest : 1);
  }
  return gbps;
}

Ends::Ends(const Fabric& f) : of_port_(f.num_ports(), kNone) {
  begin_.reserve(f.num_hosts() + 1);
  begin_.push_back(0);
  for (std::uint32_t h = 0; h < f.num_hosts(); ++h) {
    for (NodeId ca : f.host(HostId{h}).hcas) {
      for (const auto& p : f.ports_of(ca)) {
        if (p.link == kNoLink) continue;
        const PortId pid{static_cast<std::uint32_t>(&p - f.ports().data())};
        of_port_[idx(pid)] = static_cast<std::uint32_t>(port_.size());
        ends_.push_back(static_cast<std::uint32_t>(port_.size()));
        port_.push_back(pid);
        host_.push_back(HostId{h});
      }
    }
    begin_.push_back(static_cast<std::uint32_t>(ends_.size()));
  }
}

std::uint64_t Table::bytes_for(const Fabric& f) {
  std::uint64_t ends = 0;
  for (const auto& p : f.ports())
    if (p.link != kNoLink && f.node(p.node).type != NodeType::kSwitch &&
        f.host_of(p.node) != fabric::kNoHost)
      ++ends;
  return std::uint64_t{f.switches().size()} * ends * sizeof(PortNum);
}

Result<Table> Table::empty_for(const Fabric& f, std::string source) {
  Table r(f, std::move(source));
  r.sw_index_.assign(f.num_nodes(), kNone);
  std::uint32_t k = 0;
  for (NodeId s : f.switches()) r.sw_index_[idx(s)] = k++;
  const std::uint64_t bytes = std::uint64_t{k} * r.ends_.size() * sizeof(PortNum);
  if (bytes > kMaxTableBytes) {
    return fail(ErrorCode::kUnsupported,
                "static route tables for " + std::to_string(k) + " switches x " +
                    std::to_string(r.ends_.size()) + " end ports would take " +
                    std::to_string(bytes >> 20) +
                    " MiB (at most 1024 MiB): use --routes ecmp or adaptive, which need no table");
  }
  r.table_.assign(std::size_t{k} * r.ends_.size(), 0);
  auto hop = [&](PortId p) {
    Hop h;
    if (idx(p) != kNone && f.port(p).link != fabric::kNoLink) {
      h.link = dir_link(f, p);
      h.peer = f.peer_node(p);
    }
    return h;
  };
  r.port_begin_.assign(1, 0);
  for (NodeId s : f.switches()) {
    const auto ports = f.ports_of(s);
    const std::uint32_t top = ports.empty() ? 0 : ports.back().rec.number;
    const std::size_t base = r.hop_by_num_.size();
    r.hop_by_num_.resize(base + top + 1);
    for (const auto& p : ports)
      r.hop_by_num_[base + p.rec.number] = hop(PortId{static_cast<std::uint32_t>(&p - f.ports().data())});
    r.port_begin_.push_back(static_cast<std::uint32_t>(r.hop_by_num_.size()));
  }
  for (std::uint32_t e = 0; e < r.ends_.size(); ++e) {
    r.end_hop_.push_back(hop(r.ends_.port(e)));
    r.end_node_.push_back(f.port(r.ends_.port(e)).node);
  }
  return r;
}

PortId Table::host_port(HostId h) const {
  const auto e = ends_.of_host(h);
  return e.empty() ? PortId{kNone} : ends_.port(e.front());
}

PortNum Table::out_port(NodeId sw, HostId dst) const {
  const auto e = ends_.of_host(dst);
  return e.empty() ? PortNum{0} : out_port(sw, e.front());
}

bool Table::path(HostId src, HostId dst, std::vector<DirLink>& out) const {
  if (src == dst) return true;
  const auto s = ends_.of_host(src);
  const auto d = ends_.of_host(dst);
  if (s.empty() || d.empty()) return false;
  return path(s.front(), d.front(), out);
}

bool Table::path(std::uint32_t src, std::uint32_t dst, std::vector<DirLink>& out) const {
  if (src == dst) return true;
  const std::size_t start = out.size();
  const Hop first = end_hop_[src];
  out.push_back(first.link);
  NodeId node = first.peer;
  const NodeId dst_node = end_node_[dst];
  for (int hop = 0; hop < 64; ++hop) {
    if (node == dst_node) return true;
    if (idx(node) == kNone) break;
    const std::size_t si = sw_index_[idx(node)];
    if (si == kNone) break;  // a CA that is not the destination
    const PortNum out_num = table_[entry(si, dst)];
    if (out_num == 0 || out_num >= port_begin_[si + 1] - port_begin_[si]) break;
    const Hop h = hop_by_num_[port_begin_[si] + out_num];
    if (h.link == kNone) break;
    out.push_back(h.link);
    node = h.peer;
  }
  out.resize(start);
  return false;
}

Result<Table> lft_routes(const Fabric& f, std::string_view text, const std::string& file) {
  auto r = Table::empty_for(f, "opensm LFT dump " + file);
  if (!r) return r;
  // Destination LID -> end port: the LIDs of each end port (a base LID and its LMC range).
  std::unordered_map<std::uint32_t, std::uint32_t> end_of_lid;
  const Ends& ends = r->ends();
  for (std::uint32_t e = 0; e < ends.size(); ++e) {
    const auto& rec = f.port(ends.port(e)).rec;
    if (rec.lid == 0) continue;
    for (std::uint32_t k = 0; k < (1u << rec.lmc); ++k) end_of_lid.emplace(rec.lid + k, e);
  }
  if (end_of_lid.empty()) {
    return fail(ErrorCode::kReference,
                "the fabric's HCAs have no LIDs: read it from an ibnetdiscover dump taken after "
                "the subnet manager assigned LIDs",
                file);
  }
  NodeId cur = kNoNode;
  int n = 0;
  std::size_t switches = 0;
  std::vector<int> header_line(f.num_nodes(), 0);  // per switch: its table's header line
  // Per LID: the line of its entry in the current switch's table (entry_line) when
  // entry_table holds that table's header line; a second entry is refused, not let win.
  std::vector<int> entry_line(std::size_t{1} << 16, 0), entry_table(std::size_t{1} << 16, 0);
  for (auto line : str::lines(text)) {
    ++n;
    auto t = str::trim(line);
    if (t.empty()) continue;
    if (t.starts_with("Unicast lids")) {
      auto g = t.find(" guid ");
      if (g == std::string_view::npos) {
        return fail(
            ErrorCode::kSyntax,
            "expected 'Unicast lids [..] of switch Lid N guid 0x...', got " + str::quoted(t), file,
            n);
      }
      auto rest = t.substr(g + 6);
      auto guid = str::parse_hex(rest.substr(0, rest.find_first_of(" ('")));
      if (!guid) return fail(ErrorCode::kSyntax, "expected a switch GUID after 'guid'", file, n);
      auto node = f.find_guid(*guid);
      if (!node || f.node(*node).type != NodeType::kSwitch) {
        return fail(ErrorCode::kReference,
                    "switch " + str::guid_hex(*guid) +
                        " is not a switch of this fabric: the dump does not match the fabric",
                    file, n);
      }
      cur = *node;
      if (header_line[idx(cur)] != 0) {
        return fail(ErrorCode::kDuplicate,
                    "switch " + f.topology().switch_name[idx(cur)] +
                        " already has a table at line " + std::to_string(header_line[idx(cur)]),
                    file, n);
      }
      header_line[idx(cur)] = n;
      ++switches;
      continue;
    }
    if (!t.starts_with("0x")) continue;  // "172 lids dumped" and other summaries
    if (cur == kNoNode) {
      return fail(ErrorCode::kSyntax, "a LID entry before any 'Unicast lids ... of switch' header",
                  file, n);
    }
    auto sp = t.find(' ');
    auto lid = str::parse_hex(t.substr(0, sp));
    auto rest = sp == std::string_view::npos ? std::string_view{} : str::trim(t.substr(sp));
    const bool unreachable = rest.starts_with("UNREACHABLE");
    auto port = unreachable ? std::optional<std::uint64_t>{0}
                            : str::parse_uint(rest.substr(0, rest.find(' ')), kMaxIbPort);
    if (!lid || !port) {
      return fail(ErrorCode::kSyntax, "expected '0xLID PORT # ...', got " + str::quoted(t), file,
                  n);
    }
    if (*lid > 0xFFFF) {  // a LID is 16 bits (IBA 4.1.3); never narrow a longer one onto a host
      return fail(ErrorCode::kSyntax,
                  "LID " + str::quoted(t.substr(0, sp)) + " is beyond 16 bits (0xffff)", file, n);
    }
    // One entry per LID in a switch's table: of two, neither can be known to be the one the
    // switch holds.
    if (entry_table[*lid] == header_line[idx(cur)]) {
      return fail(ErrorCode::kDuplicate,
                  "switch " + f.topology().switch_name[idx(cur)] + " has a second entry for LID " +
                      str::quoted(t.substr(0, sp)) + " (the first at line " +
                      std::to_string(entry_line[*lid]) +
                      "): expected one entry per LID in a switch's table (a dump edited or "
                      "concatenated by hand? take it again with opensm -D 0x43 or ibroute)",
                  file, n);
    }
    entry_table[*lid] = header_line[idx(cur)];
    entry_line[*lid] = n;
    if (unreachable) continue;
    auto it = end_of_lid.find(static_cast<std::uint32_t>(*lid));
    if (it == end_of_lid.end()) continue;  // a switch's LID, or a LID of no host we route to
    if (*port != 0 && *port > f.node(cur).num_ports && f.node(cur).num_ports != 0) {
      return fail(ErrorCode::kReference,
                  "port " + std::to_string(*port) + " is beyond the " +
                      std::to_string(f.node(cur).num_ports) + " ports of " +
                      f.node(cur).description,
                  file, n);
    }
    // LMC ranges: the base LID's entry is the one the host's traffic uses.
    if (*lid != f.port(ends.port(it->second)).rec.lid) continue;
    // The entry must lead somewhere on this fabric: a linked port of the switch.
    const auto linked = [&] {
      for (const auto& p : f.ports_of(cur))
        if (p.rec.number == *port) return p.link != kNoLink;
      return false;
    };
    if (*port == 0 || !linked()) {
      return fail(ErrorCode::kReference,
                  "switch " + f.topology().switch_name[idx(cur)] + " forwards LID " +
                      str::quoted(t.substr(0, sp)) + " (" +
                      fabric::port_name(f, ends.port(it->second)) + ") to port " +
                      std::to_string(*port) +
                      ", which has no link in this fabric: the dump does not match the fabric",
                  file, n);
    }
    r->set(cur, it->second, static_cast<PortNum>(*port));
  }
  if (switches == 0) {
    return fail(ErrorCode::kSyntax,
                "no 'Unicast lids ... of switch' section up to the end: not an LFT dump", file, n);
  }
  // Every switch has a table, and the switch an end port is cabled to forwards its LID to
  // that port: otherwise the dump is of another fabric or LID assignment. Elsewhere a missing
  // entry is a hole, not a mismatch: opensm leaves out unreachable LIDs, and updn also those
  // no up/down path reaches (docs/opensm-engines.md); path() reports holes.
  for (NodeId s : f.switches()) {
    if (header_line[idx(s)] == 0) {
      return fail(ErrorCode::kReference,
                  "switch " + f.topology().switch_name[idx(s)] + " (" +
                      str::guid_hex(f.node(s).guid) +
                      ") has no table in the dump: the dump does not match the fabric (cut short, "
                      "or of another fabric: take the LFT dump and the ibnetdiscover dump after "
                      "the same subnet manager sweep)",
                  file, n);
    }
  }
  for (std::uint32_t e = 0; e < ends.size(); ++e) {
    const auto p = ends.port(e);
    const auto peer = f.peer_port(p);
    const NodeId s = f.port(peer).node;
    if (f.node(s).type != NodeType::kSwitch) continue;
    const PortNum got = r->out_port(s, e);
    if (got == f.port(peer).rec.number) continue;
    return fail(ErrorCode::kReference,
                "switch " + f.topology().switch_name[idx(s)] +
                    (got == 0 ? std::string(" has no entry for LID ")
                              : " forwards to port " + std::to_string(got) + " LID ") +
                    std::to_string(f.port(p).rec.lid) + " (" + fabric::port_name(f, p) +
                    ", cabled to its port " + std::to_string(f.port(peer).rec.number) +
                    "): the dump does not match the fabric (taken before the subnet manager "
                    "assigned these LIDs, or on another fabric)",
                file, header_line[idx(s)]);
  }
  return r;
}

}  // namespace fabricplace::routes
