// SPDX-License-Identifier: GPL-2.0-or-later
#include "fabricplace/fabric/fabric.hpp"

#include <algorithm>
#include <set>

#include "fabricplace/common/hostlist.hpp"
#include "fabricplace/common/limits.hpp"
#include "fabricplace/common/strings.hpp"

namespace fabricplace::fabric {

std::span<const Port> Fabric::ports_of(NodeId id) const {
  const auto b = port_begin_[idx(id)], e = port_begin_[idx(id) + 1];
  return std::span<const Port>(ports_).subspan(b, e - b);
}

NodeId Fabric::peer_node(PortId id) const {
  const Port& p = ports_[idx(id)];
  if (p.link == kNoLink) return kNoNode;
  const Link& l = links_[idx(p.link)];
  return l.a == id ? l.node_b : l.node_a;
}

PortId Fabric::peer_port(PortId id) const {
  const Port& p = ports_[idx(id)];
  if (p.link == kNoLink) return PortId{kNone};
  const Link& l = links_[idx(p.link)];
  return l.a == id ? l.b : l.a;
}

std::optional<NodeId> Fabric::find_guid(Guid guid) const {
  const auto it = by_guid_.find(guid);
  if (it == by_guid_.end()) return std::nullopt;
  return it->second;
}

std::optional<HostId> Fabric::find_host(std::string_view name) const {
  const auto it = by_host_.find(std::string(name));
  if (it == by_host_.end()) return std::nullopt;
  return it->second;
}

std::optional<NodeId> Fabric::find_switch(std::string_view name) const {
  const auto it = by_switch_name_.find(std::string(name));
  if (it == by_switch_name_.end()) return std::nullopt;
  return it->second;
}

std::optional<std::uint32_t> Fabric::find_domain(std::string_view name) const {
  for (std::uint32_t d = 0; d < domains_.size(); ++d)
    if (domains_[d].name == name) return d;
  return std::nullopt;
}

std::optional<std::uint32_t> domain_gpus(const Fabric& f) {
  std::optional<std::uint32_t> g;
  for (const auto& d : f.domains()) {
    if (d.gpus_per_host == 0 || (g && *g != d.gpus_per_host)) return std::nullopt;
    g = d.gpus_per_host;
  }
  return g;
}

std::string domain_name_problem(std::string_view name) {
  if (name.empty()) return "an empty domain name";
  if (name.size() > kMaxDomainName)
    return "a domain name longer than " + std::to_string(kMaxDomainName) + " bytes";
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
          c == '_' || c == ':' || c == '-'))
      return "domain name " + str::quoted(name, 60) +
             " has a character other than letters, digits and . _ : -";
  return {};
}

std::vector<std::string> Fabric::check() const {
  std::vector<std::string> bad;
  auto err = [&](std::string s) { bad.push_back(std::move(s)); };
  const auto n = static_cast<std::uint32_t>(nodes_.size());

  // Nodes: strictly ascending GUID, index maps consistent.
  for (std::uint32_t i = 0; i < n; ++i) {
    if (i > 0 && nodes_[i - 1].guid >= nodes_[i].guid)
      err("nodes not strictly sorted by GUID at " + std::to_string(i));
    const auto it = by_guid_.find(nodes_[i].guid);
    if (it == by_guid_.end() || it->second != NodeId{i})
      err("GUID index wrong for node " + std::to_string(i));
  }
  if (by_guid_.size() != n) err("GUID index has stale entries");

  // Ports: CSR monotone, numbers ascending per node, within the node's port count.
  if (port_begin_.size() != n + 1 || port_begin_.back() != ports_.size()) err("port CSR malformed");
  for (std::uint32_t i = 0; i < n && port_begin_.size() == n + 1; ++i) {
    for (std::uint32_t p = port_begin_[i]; p < port_begin_[i + 1]; ++p) {
      if (ports_[p].node != NodeId{i}) err("port " + std::to_string(p) + " owner wrong");
      if (p > port_begin_[i] && ports_[p - 1].rec.number >= ports_[p].rec.number)
        err("ports of node " + std::to_string(i) + " not strictly ascending");
      if (nodes_[i].num_ports && ports_[p].rec.number > nodes_[i].num_ports)
        err("port number beyond port count on node " + std::to_string(i));
    }
  }

  // Links: both ends point back, ends ordered, no port in two links.
  std::vector<int> uses(ports_.size(), 0);
  for (std::uint32_t l = 0; l < links_.size(); ++l) {
    const Link& k = links_[l];
    if (idx(k.a) >= ports_.size() || idx(k.b) >= ports_.size()) {
      err("link " + std::to_string(l) + " has a bad port");
      continue;
    }
    if (ports_[idx(k.a)].link != LinkId{l} || ports_[idx(k.b)].link != LinkId{l})
      err("link " + std::to_string(l) + " not referenced by its ports");
    if (ports_[idx(k.a)].node != k.node_a || ports_[idx(k.b)].node != k.node_b)
      err("link " + std::to_string(l) + " node ends wrong");
    const auto ka = std::pair(nodes_[idx(k.node_a)].guid, ports_[idx(k.a)].rec.number);
    const auto kb = std::pair(nodes_[idx(k.node_b)].guid, ports_[idx(k.b)].rec.number);
    if (!(ka < kb)) err("link " + std::to_string(l) + " ends not ordered");
    if (l > 0 && !(links_[l - 1].a < k.a)) err("links not sorted by lower end");
    ++uses[idx(k.a)];
    ++uses[idx(k.b)];
  }
  for (std::uint32_t p = 0; p < ports_.size(); ++p) {
    if (uses[p] > 1) err("port " + std::to_string(p) + " in several links");
    if ((uses[p] == 1) != (ports_[p].link != kNoLink))
      err("port " + std::to_string(p) + " link flag wrong");
  }

  // Hosts: natural order, each CA in exactly one host, named after its description.
  std::set<std::uint32_t> seen_cas;
  for (std::uint32_t h = 0; h < hosts_.size(); ++h) {
    if (h > 0 && !hostlist::natural_less(hosts_[h - 1].name, hosts_[h].name))
      err("hosts not in natural order at " + hosts_[h].name);
    if (hosts_[h].hcas.empty()) err("host " + hosts_[h].name + " has no HCA");
    for (NodeId ca : hosts_[h].hcas) {
      if (nodes_[idx(ca)].type != NodeType::kCa) err("host " + hosts_[h].name + " holds a non-CA");
      if (node_host_[idx(ca)] != HostId{h}) err("host index wrong for " + hosts_[h].name);
      if (!seen_cas.insert(idx(ca)).second) err("CA in two hosts: " + hosts_[h].name);
    }
  }
  if (seen_cas.size() != cas_.size()) err("some CA belongs to no host");

  // Domains: ordered by first host, hosts ascending, each host in at most one.
  if (!domains_.empty() && host_domain_.size() != hosts_.size()) err("host domains sized wrong");
  std::vector<std::uint32_t> member(hosts_.size(), kNone);
  for (std::uint32_t d = 0; d < domains_.size(); ++d) {
    const auto& dom = domains_[d];
    if (!domain_name_problem(dom.name).empty()) err("domain name invalid: " + dom.name);
    if (dom.hosts.empty()) err("domain " + dom.name + " has no host");
    if (d > 0 && !dom.hosts.empty() && !domains_[d - 1].hosts.empty() &&
        !(domains_[d - 1].hosts.front() < dom.hosts.front()))
      err("domains not ordered by first host at " + dom.name);
    for (std::size_t i = 0; i < dom.hosts.size(); ++i) {
      const HostId h = dom.hosts[i];
      if (idx(h) >= hosts_.size()) {
        err("domain " + dom.name + " names a host out of range");
        continue;
      }
      if (i > 0 && !(dom.hosts[i - 1] < h)) err("domain " + dom.name + " hosts not ascending");
      if (member[idx(h)] != kNone) err("host " + hosts_[idx(h)].name + " in two domains");
      member[idx(h)] = d;
    }
  }
  if (!domains_.empty() && member != host_domain_) err("host domain index wrong");

  // Classification: level = 1 + hops to the nearest CA.
  const Topology& t = topo_;
  if (t.level.size() != n || t.switch_name.size() != n || t.node_pod.size() != n) {
    err("topology arrays sized wrong");
    return bad;
  }
  std::set<std::string> names;
  for (NodeId s : switches_) {
    const auto lv = t.level[idx(s)];
    const auto ports = ports_of(s);
    int min_nb = 1000;
    bool has_ca = false;
    for (std::size_t k = 0; k < ports.size(); ++k) {
      const NodeId peer = peer_node(PortId{port_begin_[idx(s)] + static_cast<std::uint32_t>(k)});
      if (peer == kNoNode) continue;
      if (nodes_[idx(peer)].type == NodeType::kCa) has_ca = true;
      if (nodes_[idx(peer)].type == NodeType::kSwitch && t.level[idx(peer)] > 0)
        min_nb = std::min<int>(min_nb, t.level[idx(peer)]);
    }
    // (A leaf may have no CA: its hosts are down; classification says so in a warning.)
    if (lv > 1 && (has_ca || min_nb != lv - 1))
      err("switch " + t.switch_name[idx(s)] + " level " + std::to_string(lv) + " inconsistent");
    if (t.switch_name[idx(s)].empty() || !names.insert(t.switch_name[idx(s)]).second)
      err("switch name empty or duplicate: " + t.switch_name[idx(s)]);
    if (lv == 1 && t.node_pod[idx(s)] == kNone) err("leaf " + t.switch_name[idx(s)] + " in no pod");
  }
  for (NodeId ca : cas_)
    for (const Port& p : ports_of(ca)) {
      if (p.link == kNoLink) continue;
      const Link& l = links_[idx(p.link)];
      const NodeId peer = l.node_a == ca ? l.node_b : l.node_a;
      if (nodes_[idx(peer)].type == NodeType::kSwitch && t.level[idx(peer)] != 1)
        err("CA " + str::quoted(nodes_[idx(ca)].description, kNameExcerpt) +
            " hangs off a switch that is not a leaf");
    }
  for (std::uint32_t p = 0; p < t.pods.size(); ++p)
    for (NodeId l : t.pods[p].leaves)
      if (t.node_pod[idx(l)] != p) err("pod membership inconsistent");
  if (t.leaf_stats.size() != t.leaves.size()) err("leaf stats size wrong");
  return bad;
}

std::string port_name(const Fabric& f, PortId p) {
  const Port& port = f.port(p);
  const NodeRecord& n = f.node(port.node);
  return (n.type == NodeType::kSwitch ? f.topology().switch_name[idx(port.node)] : n.description) +
         "[" + std::to_string(port.rec.number) + "]";
}

}  // namespace fabricplace::fabric
