#include "fabricplace/fabric/routes.hpp"

#include <algorithm>
#include <tuple>
#include <unordered_map>

#include "fabricplace/common/strings.hpp"

namespace fabricplace::fabric {

Result<Routes> Routes::empty_for(const Fabric& f, std::string source) {
  const auto& t = f.topology();
  if (t.rail_optimised) {
    return fail(ErrorCode::kUnsupported,
                "routes are modelled for single-rail fabrics; this one is rail-optimised "
                "(hosts reach several leaves)");
  }
  Routes r;
  r.fabric_ = &f;
  r.source_ = std::move(source);
  r.num_hosts_ = f.num_hosts();
  r.sw_index_.assign(f.num_nodes(), kNone);
  std::uint32_t k = 0;
  for (NodeId s : f.switches()) r.sw_index_[idx(s)] = k++;
  r.table_.assign(std::size_t{k} * r.num_hosts_, 0);
  r.port_begin_.assign(1, 0);
  for (NodeId s : f.switches()) {
    const auto ports = f.ports_of(s);
    const std::uint32_t top = ports.empty() ? 0 : ports.back().rec.number;
    const std::size_t base = r.port_by_num_.size();
    r.port_by_num_.resize(base + top + 1, PortId{kNone});
    for (const auto& p : ports) {
      r.port_by_num_[base + p.rec.number] =
          PortId{static_cast<std::uint32_t>(&p - f.ports().data())};
    }
    r.port_begin_.push_back(static_cast<std::uint32_t>(r.port_by_num_.size()));
  }
  r.host_port_.assign(f.num_hosts(), PortId{kNone});
  for (std::uint32_t h = 0; h < f.num_hosts(); ++h) {
    for (NodeId ca : f.host(HostId{h}).hcas) {
      for (const auto& p : f.ports_of(ca)) {
        if (p.link != kNoLink && idx(r.host_port_[h]) == kNone) {
          r.host_port_[h] = PortId{static_cast<std::uint32_t>(&p - f.ports().data())};
        }
      }
      if (idx(r.host_port_[h]) != kNone) break;
    }
  }
  return r;
}

bool Routes::path(HostId src, HostId dst, std::vector<DirLink>& out) const {
  if (src == dst) return true;
  const Fabric& f = *fabric_;
  const PortId sp = host_port_[idx(src)];
  const PortId dp = host_port_[idx(dst)];
  if (idx(sp) == kNone || idx(dp) == kNone) return false;
  const std::size_t start = out.size();
  out.push_back(dir_link(f, sp));
  NodeId node = f.peer_node(sp);
  const NodeId dst_node = f.port(dp).node;
  for (int hop = 0; hop < 64; ++hop) {
    if (node == dst_node) return true;
    if (sw_index_[idx(node)] == kNone) break;  // a CA that is not the destination
    const PortNum out_num = out_port(node, dst);
    const std::size_t si = sw_index_[idx(node)];
    if (out_num == 0 || out_num >= port_begin_[si + 1] - port_begin_[si]) break;
    const PortId pid = port_by_num_[port_begin_[si] + out_num];
    if (idx(pid) == kNone || f.port(pid).link == kNoLink) break;
    out.push_back(dir_link(f, pid));
    node = f.peer_node(pid);
  }
  out.resize(start);
  return false;
}

Result<Routes> lft_routes(const Fabric& f, std::string_view text, const std::string& file) {
  auto r = Routes::empty_for(f, "LFT dump " + file);
  if (!r) return r;
  // Destination LID -> host: the LIDs of each host's HCA port (a base LID and its LMC range).
  std::unordered_map<std::uint32_t, HostId> host_of_lid;
  for (std::uint32_t h = 0; h < f.num_hosts(); ++h) {
    const PortId p = r->host_port_[h];
    if (idx(p) == kNone) continue;
    const auto& rec = f.port(p).rec;
    if (rec.lid == 0) continue;
    for (std::uint32_t k = 0; k < (1u << rec.lmc); ++k) host_of_lid.emplace(rec.lid + k, HostId{h});
  }
  if (host_of_lid.empty()) {
    return fail(ErrorCode::kReference,
                "the fabric's HCAs have no LIDs: read it from an ibnetdiscover dump taken after "
                "the subnet manager assigned LIDs",
                file);
  }
  NodeId cur = kNoNode;
  int n = 0;
  std::size_t entries = 0, switches = 0;
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
                    "switch " + str::guid_hex(*guid) + " is not a switch of the fabric", file, n);
      }
      cur = *node;
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
    if (rest.starts_with("UNREACHABLE")) continue;
    auto port = str::parse_uint(rest.substr(0, rest.find(' ')), kMaxIbPort);
    if (!lid || !port) {
      return fail(ErrorCode::kSyntax, "expected '0xLID PORT # ...', got " + str::quoted(t), file,
                  n);
    }
    if (*lid > 0xFFFF) {  // a LID is 16 bits (IBA 4.1.3); never narrow a longer one onto a host
      return fail(ErrorCode::kSyntax,
                  "LID " + str::quoted(t.substr(0, sp)) + " is beyond 16 bits (0xffff)", file, n);
    }
    auto it = host_of_lid.find(static_cast<std::uint32_t>(*lid));
    if (it == host_of_lid.end()) continue;  // a switch's LID, or a LID of no host we route to
    if (*port != 0 && *port > f.node(cur).num_ports && f.node(cur).num_ports != 0) {
      return fail(ErrorCode::kReference,
                  "port " + std::to_string(*port) + " is beyond the " +
                      std::to_string(f.node(cur).num_ports) + " ports of " +
                      f.node(cur).description,
                  file, n);
    }
    // LMC ranges: the base LID's entry is the one the host's traffic uses.
    if (*lid != f.port(r->host_port_[idx(it->second)]).rec.lid) continue;
    r->at(cur, it->second) = static_cast<PortNum>(*port);
    ++entries;
  }
  if (switches == 0) {
    return fail(ErrorCode::kSyntax,
                "no 'Unicast lids ... of switch' section up to the end: not an LFT dump", file, n);
  }
  (void)entries;
  return r;
}

}  // namespace fabricplace::fabric
