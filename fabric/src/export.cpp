// SPDX-License-Identifier: GPL-2.0-or-later
#include "fabricplace/fabric/export.hpp"

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <set>
#include <unordered_map>

#include "fabricplace/common/limits.hpp"
#include "fabricplace/common/strings.hpp"

namespace fabricplace::fabric {
namespace {

std::string hex16(Guid g) {
  char buf[20];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, g);
  return buf;
}
std::string hexplain(Guid g) {
  char buf[20];
  std::snprintf(buf, sizeof buf, "%" PRIx64, g);
  return buf;
}

PortNum port_count(const Fabric& f, NodeId n) {
  PortNum count = f.node(n).num_ports;
  for (const Port& p : f.ports_of(n)) count = std::max(count, p.rec.number);
  return count;
}

// LID that ibnetdiscover prints for the far end of a port: the switch's LID for a switch,
// the port's base LID otherwise.
std::uint16_t far_lid(const Fabric& f, PortId pid) {
  const PortId peer = f.peer_port(pid);
  const Port& pp = f.port(peer);
  const NodeRecord& pn = f.node(pp.node);
  return pn.type == NodeType::kSwitch ? pn.lid : pp.rec.lid;
}

char id_letter(NodeType t) {
  return t == NodeType::kSwitch ? 'S' : t == NodeType::kCa ? 'H' : 'R';
}

}  // namespace

Result<void> fits_infiniband(const Fabric& f) {
  for (const Link& l : f.links())
    if (l.rate.is_ethernet())
      return fail(ErrorCode::kUnsupported,
                  "the fabric's links are Ethernet (" + l.rate.to_string() +
                      "); InfiniBand formats hold InfiniBand rates (a tiers CSV, topology.conf or "
                      "JSON holds Ethernet fabrics)");
  for (std::uint32_t i = 0; i < f.num_nodes(); ++i)
    if (const PortNum p = port_count(f, NodeId{i}); p > kMaxIbPort)
      return fail(ErrorCode::kUnsupported,
                  "node " + str::quoted(f.node(NodeId{i}).description, kNameExcerpt) + " uses " +
                      std::to_string(p) + " ports; InfiniBand formats hold at most " +
                      std::to_string(kMaxIbPort) +
                      " per node (a topology.conf or tiers CSV switch may hold more hosts than a "
                      "real one)");
  return {};
}

IbsimSizes ibsim_sizes(const Fabric& f) {
  IbsimSizes s;
  s.nodes = f.num_nodes();
  for (std::uint32_t i = 0; i < f.num_nodes(); ++i) {
    const NodeId n{i};
    const bool sw = f.node(n).type == NodeType::kSwitch;
    s.switches += sw;
    s.ports += port_count(f, n) + (sw ? 1u : 0u);
  }
  return s;
}

std::string to_ibsim_net(const Fabric& f) {
  const Topology& t = f.topology();
  // Node ids: switch names; "host_dev" for CAs (made unique with the GUID if needed).
  std::vector<std::string> id(f.num_nodes());
  std::set<std::string> used;
  for (std::uint32_t i = 0; i < f.num_nodes(); ++i) {
    const NodeId n{i};
    std::string s;
    if (f.node(n).type == NodeType::kSwitch) {
      s = t.switch_name[i];
    } else {
      for (char c : str::trim(f.node(n).description))
        s += (c == ' ' || c == '\t' || c == '"' || c == '[' || c == ']' || c == '=') ? '_' : c;
      if (s.empty()) s = "ca-" + hex16(f.node(n).guid);
    }
    if (!used.insert(s).second) {
      s += "-" + hex16(f.node(n).guid);
      used.insert(s);
    }
    id[i] = s;
  }
  auto clean = [](const std::string& d) {  // ibsim scans port lines for '=' options
    std::string s;
    for (char c : d) s += (c == '=' || c == '"') ? '_' : c;
    return s;
  };
  const IbsimSizes sz = ibsim_sizes(f);
  std::string out;
  out += "# ibsim net file written by fabricplace from: " + f.origin() + "\n";
  for (const auto& m : f.topology().incomplete)
    out += "# WARNING: INCOMPLETE fabric, lacks: " + m + "\n";
  out += "# start with: ibsim -N " + std::to_string(sz.nodes) + " -S " +
         std::to_string(sz.switches) + " -P " + std::to_string(sz.ports) + " <this file>\n";
  out +=
      "# Port rates come from the '# ... lid N <rate>' comments (ibsim >= 0.10; NDR needs 0.12);\n"
      "# the masks below enable the fabric's most common rate (and 1x) on ports without one,\n"
      "# so a hand-added option such as 'w=1' changes only what it names.\n";
  {
    std::map<std::pair<LinkWidth, LinkSpeed>, std::size_t> count;
    for (const Link& l : f.links())
      if (l.rate.known()) ++count[{l.rate.width, l.rate.speed}];
    LinkRate common{LinkWidth::k4x, LinkSpeed::kHDR};
    std::size_t best = 0;
    for (const auto& [r, c] : count)
      if (c > best) {
        best = c;
        common = LinkRate{r.first, r.second};
      }
    // ibsim enable masks: width 1=1x 2=4x 4=8x 8=12x 16=2x; speed 1 SDR 2 DDR 4 QDR;
    // extended speed 1 FDR 2 EDR 4 HDR 8 NDR. Cumulative, as real ports enable all lower ones.
    const int wbit = common.width == LinkWidth::k4x    ? 2
                     : common.width == LinkWidth::k8x  ? 4
                     : common.width == LinkWidth::k12x ? 8
                     : common.width == LinkWidth::k2x  ? 16
                                                       : 1;
    const int speed = common.speed == LinkSpeed::kSDR ? 1 : common.speed == LinkSpeed::kDDR ? 3 : 7;
    const int ext = common.speed == LinkSpeed::kFDR   ? 1
                    : common.speed == LinkSpeed::kEDR ? 3
                    : common.speed == LinkSpeed::kHDR ? 7
                    : common.speed == LinkSpeed::kNDR ? 15
                                                      : 0;
    out += "width=" + std::to_string(1 | wbit) + "\nspeed=" + std::to_string(speed) +
           "\nextspeed=" + std::to_string(ext) + "\n";
  }

  // The first HCA first, so that ibsim's default SIM_HOST is a compute node.
  std::vector<NodeId> order;
  if (f.num_hosts() > 0) order.push_back(f.host(HostId{0}).hcas.front());
  for (std::uint32_t i = 0; i < f.num_nodes(); ++i)
    if (order.empty() || NodeId{i} != order.front()) order.push_back(NodeId{i});

  for (NodeId n : order) {
    const NodeRecord& r = f.node(n);
    out += "\nvendid=" + str::hex(r.vendor_id) + "\n";
    out += "devid=" + str::hex(r.device_id) + "\n";
    if (r.system_image_guid != 0 && r.system_image_guid != r.guid)
      out += "sysimgguid=" + str::guid_hex(r.system_image_guid) + "\n";
    const char* guid_key = r.type == NodeType::kSwitch ? "switchguid="
                           : r.type == NodeType::kCa   ? "caguid="
                                                       : "rtguid=";
    out += guid_key + str::guid_hex(r.guid) + "\n";
    const char* kind = r.type == NodeType::kSwitch ? "Switch"
                       : r.type == NodeType::kCa   ? "Ca"
                                                   : "Rt";
    out += std::string(kind) + " " + std::to_string(port_count(f, n)) + " \"" + id[idx(n)] +
           "\" # \"" + clean(r.description) + "\"";
    if (r.type == NodeType::kSwitch)
      out += std::string(r.enhanced_port0 ? " enhanced" : " base") + " port 0 lid " +
             std::to_string(r.lid) + " lmc " + std::to_string(r.lmc);
    out += "\n";
    const PortId first = f.first_port(n);
    const auto ports = f.ports_of(n);
    for (std::uint32_t k = 0; k < ports.size(); ++k) {
      if (ports[k].link == kNoLink) continue;
      const PortId pid{idx(first) + k};
      const PortId peer = f.peer_port(pid);
      const NodeId pn = f.port(peer).node;
      out += "[" + std::to_string(ports[k].rec.number) + "]\t\"" + id[idx(pn)] + "\"[" +
             std::to_string(f.port(peer).rec.number) + "]\t\t# \"" + clean(f.node(pn).description) +
             "\" lid " + std::to_string(far_lid(f, pid)) + " " +
             f.link(ports[k].link).rate.to_string() + "\n";
    }
  }
  return out;
}

std::string to_ibnetdiscover(const Fabric& f) {
  std::string out;
  out.reserve(f.num_links() * 2 * 100 + f.num_nodes() * 160);
  out += "#\n# Topology file: written by fabricplace from: " + f.origin() + "\n";
  for (const auto& m : f.topology().incomplete)
    out += "# WARNING: INCOMPLETE fabric, lacks: " + m + "\n";
  out += "#\n";
  auto emit = [&](NodeType type) {
    for (std::uint32_t i = 0; i < f.num_nodes(); ++i) {
      const NodeId n{i};
      const NodeRecord& r = f.node(n);
      if (r.type != type) continue;
      out += "\nvendid=" + str::hex(r.vendor_id) + "\ndevid=" + str::hex(r.device_id) + "\n";
      if (r.system_image_guid) out += "sysimgguid=" + str::hex(r.system_image_guid) + "\n";
      const auto ports = f.ports_of(n);
      if (type == NodeType::kSwitch) {
        const Guid pg = ports.empty() ? r.guid : ports.front().rec.guid;
        out += "switchguid=" + str::hex(r.guid) + "(" + hexplain(pg) + ")\n";
        out += "Switch\t" + std::to_string(port_count(f, n)) + " \"S-" + hex16(r.guid) +
               "\"\t\t# \"" + r.description + "\" " + (r.enhanced_port0 ? "enhanced" : "base") +
               " port 0 lid " + std::to_string(r.lid) + " lmc " + std::to_string(r.lmc) + "\n";
      } else {
        out += std::string(type == NodeType::kCa ? "caguid=" : "rtguid=") + str::hex(r.guid) + "\n";
        out += std::string(type == NodeType::kCa ? "Ca" : "Rt") + "\t" +
               std::to_string(port_count(f, n)) + " \"" + id_letter(type) + "-" + hex16(r.guid) +
               "\"\t\t# \"" + r.description + "\"\n";
      }
      const PortId first = f.first_port(n);
      for (std::uint32_t k = 0; k < ports.size(); ++k) {
        if (ports[k].link == kNoLink) continue;
        const PortId pid{idx(first) + k};
        const Port& peer = f.port(f.peer_port(pid));
        const NodeRecord& pr = f.node(peer.node);
        const std::string rate = f.link(ports[k].link).rate.to_string();
        std::string far = "\"" + std::string(1, id_letter(pr.type)) + "-" + hex16(pr.guid) + "\"[" +
                          std::to_string(peer.rec.number) + "]";
        if (type == NodeType::kSwitch) {
          out += "[" + std::to_string(ports[k].rec.number) + "]\t" + far;
          if (pr.type != NodeType::kSwitch) out += "(" + hexplain(peer.rec.guid) + ") ";
          out += "\t\t# \"" + pr.description + "\" lid " + std::to_string(far_lid(f, pid)) + " " +
                 rate + "\n";
        } else {
          out += "[" + std::to_string(ports[k].rec.number) + "](" + hexplain(ports[k].rec.guid) +
                 ") \t" + far;
          if (pr.type != NodeType::kSwitch) out += " (" + hexplain(peer.rec.guid) + ") ";
          out += "\t\t# lid " + std::to_string(ports[k].rec.lid) + " lmc " +
                 std::to_string(ports[k].rec.lmc) + " \"" + pr.description + "\" lid " +
                 std::to_string(far_lid(f, pid)) + " " + rate + "\n";
        }
      }
    }
  };
  emit(NodeType::kSwitch);
  emit(NodeType::kCa);
  emit(NodeType::kRouter);
  return out;
}

std::string to_ibnetdiscover_ports(const Fabric& f) {
  std::string out;
  out.reserve(f.num_ports() * 120);
  out += "# ibnetdiscover -p output written by fabricplace from: " + f.origin() + "\n";
  for (const auto& m : f.topology().incomplete)
    out += "# WARNING: INCOMPLETE fabric, lacks: " + m + "\n";
  auto kind = [](NodeType t) {
    return t == NodeType::kSwitch ? "SW" : t == NodeType::kCa ? "CA" : "RT";
  };
  auto end = [&](PortId pid) {
    const Port& p = f.port(pid);
    const NodeRecord& n = f.node(p.node);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%-2s %5u %2u 0x%016" PRIx64, kind(n.type),
                  unsigned{n.type == NodeType::kSwitch ? n.lid : p.rec.lid}, unsigned{p.rec.number},
                  p.rec.guid);
    return std::string(buf);
  };
  for (std::uint32_t i = 0; i < f.num_ports(); ++i) {
    const PortId pid{i};
    const Port& p = f.port(pid);
    const std::string& desc = f.node(p.node).description;
    if (p.link == kNoLink) {
      out += end(pid) + " ?? ??? '" + desc + "'\n";
      continue;
    }
    const LinkRate r = f.link(p.link).rate;
    const PortId peer = f.peer_port(pid);
    out += end(pid) + " " + std::string(to_string(r.width)) + " " +
           std::string(to_string(r.speed)) + " - " + end(peer) + " ( '" + desc + "' - '" +
           f.node(f.port(peer).node).description + "' )\n";
  }
  return out;
}

std::string to_dot(const Fabric& f) {
  const Topology& t = f.topology();
  static const char* kColour[] = {"#dddddd", "#a6cee3", "#b2df8a", "#fb9a99", "#fdbf6f", "#cab2d6"};
  std::string out;
  out += "// fabric written by fabricplace from: " + f.origin() + "\n";
  for (const auto& m : f.topology().incomplete)
    out += "// WARNING: INCOMPLETE fabric, lacks: " + m + "\n";
  out += "graph fabric {\n  graph [rankdir=BT, splines=false, nodesep=0.15, ranksep=1.2];\n";
  out += "  node [shape=box, style=filled, fontname=\"Helvetica\", fontsize=10];\n";
  out += "  edge [color=\"#888888\"];\n";
  auto q = [](const std::string& s) { return str::json_quote(s); };
  std::vector<std::string> label(f.num_nodes());
  for (NodeId s : f.switches()) label[idx(s)] = t.switch_name[idx(s)];
  for (std::uint32_t h = 0; h < f.num_hosts(); ++h)
    for (NodeId ca : f.host(HostId{h}).hcas) label[idx(ca)] = f.host(HostId{h}).name;
  for (std::uint32_t i = 0; i < f.num_nodes(); ++i)
    if (label[i].empty()) label[i] = "rt-" + hex16(f.node(NodeId{i}).guid);
  // Switches, one rank per level.
  std::map<int, std::vector<NodeId>> by_level;
  for (NodeId s : f.switches()) by_level[t.level[idx(s)]].push_back(s);
  std::map<NodeId, std::size_t> leaf_index;
  for (std::size_t i = 0; i < t.leaves.size(); ++i) leaf_index[t.leaves[i]] = i;
  for (const auto& [lv, sws] : by_level) {
    out += "  { rank=same;\n";
    for (NodeId s : sws) {
      std::string extra;
      if (auto it = leaf_index.find(s); it != leaf_index.end()) {
        char buf[48];
        const double o = t.leaf_stats[it->second].oversubscription;
        if (o == o && o < 1e300)
          std::snprintf(buf, sizeof buf, "\\n%.2f:1", o);
        else
          std::snprintf(buf, sizeof buf, "\\nno uplink");
        extra = buf;
      }
      out += "    " + q(label[idx(s)]) + " [fillcolor=\"" + kColour[std::min<int>(lv, 5)] +
             "\", label=\"" + label[idx(s)] + extra + "\"];\n";
    }
    out += "  }\n";
  }
  out += "  { rank=same;\n";
  for (const Host& h : f.hosts())
    out += "    " + q(h.name) + " [shape=ellipse, fillcolor=\"#ffffff\"];\n";
  out += "  }\n";
  // Edges folded per (endpoint pair, rate, degraded).
  std::set<std::uint32_t> degraded;
  for (const auto& d : t.degraded_links) degraded.insert(idx(d.link));
  std::map<std::tuple<std::string, std::string, std::string, bool>, int> edges;
  std::vector<std::tuple<std::string, std::string, std::string, bool>> order;
  for (std::uint32_t l = 0; l < f.num_links(); ++l) {
    const Link& k = f.link(LinkId{l});
    auto a = label[idx(k.node_a)], b = label[idx(k.node_b)];
    const bool a_up = f.node(k.node_a).type == NodeType::kSwitch &&
                      (f.node(k.node_b).type != NodeType::kSwitch ||
                       t.level[idx(k.node_a)] > t.level[idx(k.node_b)]);
    if (a_up) std::swap(a, b);  // lower end first
    auto key = std::tuple(a, b, k.rate.to_string(), degraded.contains(l));
    if (edges[key]++ == 0) order.push_back(key);
  }
  for (const auto& key : order) {
    const auto& [a, b, rate, bad] = key;
    const int n = edges[key];
    out += "  " + q(a) + " -- " + q(b) + " [label=\"" + (n > 1 ? std::to_string(n) + " x " : "") +
           rate + "\"";
    if (bad) out += ", color=\"#e31a1c\", fontcolor=\"#e31a1c\", penwidth=2";
    out += "];\n";
  }
  out += "}\n";
  return out;
}

Result<std::string> to_tiers_csv(const Fabric& f) {
  const Topology& t = f.topology();
  auto unsupported = [](const std::string& why) -> Result<std::string> {
    return fail(ErrorCode::kUnsupported, "cannot be written as a tiers CSV: " + why);
  };
  if (t.max_level < 2 || t.max_level > 3)
    return unsupported(
        "it has " + std::to_string(t.max_level) +
        " switch levels; a tiers CSV holds 2 (leaf, spine) or 3 (leaf, spine, core)");
  auto name = [&](NodeId n) {
    return f.node(n).type == NodeType::kSwitch ? t.switch_name[idx(n)] : f.host(f.host_of(n)).name;
  };
  // Pairs (lower, upper) and their links, per tier (0 host-leaf, 1 leaf-spine, 2 spine-core).
  struct Pair {
    std::vector<LinkRate> rates;
    bool count_assumed = false, rate_assumed = false;
  };
  std::array<std::map<std::pair<NodeId, NodeId>, Pair>, 3> tiers;
  std::vector<std::vector<NodeId>> up(f.num_nodes());  // upper ends, per lower end
  for (const Link& l : f.links()) {
    NodeId lo = l.node_a, hi = l.node_b;
    auto level = [&](NodeId n) {
      return f.node(n).type == NodeType::kSwitch ? int{t.level[idx(n)]} : 0;
    };
    if (level(hi) < level(lo)) std::swap(lo, hi);
    if (f.node(lo).type == NodeType::kRouter || f.node(hi).type == NodeType::kRouter)
      return unsupported("router " + str::quoted(f.node(lo).description, kNameExcerpt) +
                         " has no tier");
    if (level(hi) != level(lo) + 1)
      return unsupported("the link " + name(lo) + " - " + name(hi) +
                         " does not join two adjacent tiers");
    auto& p = tiers[static_cast<std::size_t>(level(lo))][{lo, hi}];
    if (p.rates.empty()) up[idx(lo)].push_back(hi);
    p.rates.push_back(l.rate);
    p.count_assumed = p.count_assumed || l.assumed.count;
    p.rate_assumed = p.rate_assumed || l.assumed.rate;
  }
  for (auto& v : up)
    std::sort(v.begin(), v.end(), [&](NodeId x, NodeId y) { return name(x) < name(y); });
  // Host rows: every host on one leaf, each leaf's spines and each spine's cores named by
  // some row (rows take them in turn).
  std::vector<std::size_t> next(f.num_nodes(), 0);
  std::vector<std::size_t> rows_of(f.num_nodes(), 0);  // host rows naming a switch
  std::string rows;
  for (std::uint32_t h = 0; h < f.num_hosts(); ++h) {
    const Host& host = f.host(HostId{h});
    NodeId leaf = kNoNode;
    std::size_t linked = 0;
    for (NodeId ca : host.hcas)
      for (NodeId l : up[idx(ca)]) {
        ++linked;
        leaf = l;
      }
    if (linked != 1)
      return unsupported("host " + host.name + " has " + std::to_string(linked) +
                         " links to leaves; a tiers CSV row holds one");
    std::string row = host.name + "," + name(leaf);
    NodeId at = leaf;
    for (int k = 1; k < t.max_level; ++k) {
      const auto& ups = up[idx(at)];
      if (ups.empty())
        return unsupported(name(at) + " has no link to the tier above (host " + host.name + ")");
      const NodeId next_up = ups[next[idx(at)]++ % ups.size()];
      ++rows_of[idx(at)];
      row += "," + name(next_up);
      at = next_up;
    }
    if (f.has_domains()) {
      const auto d = f.domain_of(HostId{h});
      row += "," + (d == kNone ? std::string() : f.domains()[d].name);
    }
    rows += row + "\n";
  }
  for (std::uint32_t i = 0; i < f.num_nodes(); ++i)
    if (!up[i].empty() && f.node(NodeId{i}).type == NodeType::kSwitch && rows_of[i] < up[i].size())
      return unsupported(name(NodeId{i}) + " has " + std::to_string(up[i].size()) +
                         " switches above it but " + std::to_string(rows_of[i]) +
                         " host rows through it, and each row names one");
  std::string out = "# tiers CSV written by fabricplace from: " + f.origin() + "\n";
  for (const auto& m : t.incomplete) out += "# WARNING: INCOMPLETE fabric, lacks: " + m + "\n";
  // The domain column when the fabric has domains (GPU counts are not in a tiers CSV).
  out += t.max_level == 3 ? "host,leaf,spine,core" : "host,leaf,spine";
  out += f.has_domains() ? ",domain\n" : "\n";
  out += rows;
  // The links section: per tier, the most common (count, rate) as a tier-wide row, then
  // the pairs that differ. An assumed value is left empty.
  static const char* kWord[] = {"host", "leaf", "spine", "core"};
  std::string links, notes;
  for (std::size_t k = 0; k < tiers.size(); ++k) {
    using Stated = std::pair<std::string, std::string>;  // count, rate
    std::map<std::pair<NodeId, NodeId>, Stated> stated;
    std::map<Stated, std::size_t> tally;
    for (const auto& [pair, p] : tiers[k]) {
      std::map<std::string, std::size_t> by_rate;
      for (const auto& r : p.rates) ++by_rate[r.to_string()];
      const auto common = std::max_element(by_rate.begin(), by_rate.end(),
                                           [](auto& x, auto& y) { return x.second < y.second; });
      if (by_rate.size() > 1)
        notes += "# " + name(pair.first) + " - " + name(pair.second) + ": " +
                 std::to_string(p.rates.size() - common->second) +
                 " link(s) at another rate than " + common->first + "\n";
      // A host row is one link: its count is never assumed, and never written.
      Stated st{p.count_assumed || k == 0 ? "" : std::to_string(p.rates.size()),
                p.rate_assumed ? "" : common->first};
      ++tally[st];
      stated.emplace(pair, st);
    }
    if (tally.empty()) continue;
    const Stated common = std::max_element(tally.begin(), tally.end(), [](auto& x, auto& y) {
                            return x.second < y.second;
                          })->first;
    if (!common.first.empty() || !common.second.empty())
      links += std::string(kWord[k]) + "," + kWord[k + 1] + "," + common.first + "," +
               common.second + "\n";
    for (const auto& [pair, st] : stated) {
      if (st == common) continue;
      // Fields the tier-wide row states and this pair does not: cannot be unstated.
      const std::string count = st.first.empty() ? common.first : st.first;
      const std::string rate = st.second.empty() ? common.second : st.second;
      if (count == common.first && rate == common.second) continue;
      links += name(pair.first) + "," + name(pair.second) + "," +
               (count == common.first ? "" : count) + "," + (rate == common.second ? "" : rate) +
               "\n";
    }
  }
  if (!links.empty()) out += notes + "links,lower,upper,count,rate\n" + links;
  return out;
}

}  // namespace fabricplace::fabric
