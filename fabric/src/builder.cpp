// SPDX-License-Identifier: GPL-2.0-or-later
#include "fabricplace/fabric/builder.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "fabricplace/common/hostlist.hpp"
#include "fabricplace/common/limits.hpp"
#include "fabricplace/common/strings.hpp"
#include "fabricplace/fabric/slurm_tree.hpp"

namespace fabricplace::fabric {
namespace {

std::string describe(Guid guid, PortNum port) {
  return str::guid_hex(guid) + "[" + std::to_string(port) + "]";
}

template <class Map>
std::string describe(const Map& nodes, Guid guid, PortNum port) {
  const auto it = nodes.find(guid);
  if (it == nodes.end() || it->second.rec.description.empty()) return describe(guid, port);
  return str::quoted(it->second.rec.description, kNameExcerpt) + describe(guid, port).substr(18);
}

// Field-wise merge: a zero/empty field takes the other's value; two different non-zero
// values conflict. Returns the name of the first conflicting field, or nullptr.
template <class T>
const char* merge_field(T& into, const T& from, const char* name) {
  if (from == T{} || into == from) return nullptr;
  if (into == T{}) {
    into = from;
    return nullptr;
  }
  return name;
}

const char* merge_node(NodeRecord& into, const NodeRecord& from) {
  if (into.type != from.type) return "type";
  const char* bad = nullptr;
  auto m = [&](auto& a, const auto& b, const char* name) {
    if (!bad) bad = merge_field(a, b, name);
  };
  m(into.description, from.description, "description");
  m(into.num_ports, from.num_ports, "port count");
  m(into.vendor_id, from.vendor_id, "vendor id");
  m(into.device_id, from.device_id, "device id");
  m(into.system_image_guid, from.system_image_guid, "system image GUID");
  m(into.lid, from.lid, "LID");
  m(into.lmc, from.lmc, "LMC");
  into.enhanced_port0 = into.enhanced_port0 || from.enhanced_port0;
  return bad;
}

const char* merge_port(PortRecord& into, const PortRecord& from) {
  const char* bad = merge_field(into.guid, from.guid, "port GUID");
  if (!bad) bad = merge_field(into.lid, from.lid, "LID");
  if (!bad) bad = merge_field(into.lmc, from.lmc, "LMC");
  return bad;
}

// Keys of `groups` in hostlist::natural_less order. Most host names are a prefix and a
// number ("node0042"); those compare by a precomputed (value, width) when their prefixes
// match, which is what natural_less would decide, without rescanning the strings.
template <class Map>
std::vector<std::string> natural_sorted_keys(const Map& groups) {
  struct Key {
    const std::string* name;
    std::string_view prefix;
    std::uint64_t value = 0;
    std::size_t width = 0;
    bool simple = false;
  };
  std::vector<Key> keys;
  keys.reserve(groups.size());
  for (const auto& [name, unused] : groups) {
    Key k{&name, name};
    const auto d = name.find_first_of("0123456789");
    if (d != std::string::npos && name.size() - d <= 18 &&
        name.find_first_not_of("0123456789", d) == std::string::npos) {
      k.prefix = std::string_view(name).substr(0, d);
      k.value = std::stoull(name.substr(d));
      k.width = name.size() - d;
      k.simple = true;
    }
    keys.push_back(k);
  }
  std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
    if (a.simple && b.simple && a.prefix == b.prefix)
      return a.value != b.value ? a.value < b.value : a.width < b.width;
    return hostlist::natural_less(*a.name, *b.name);
  });
  std::vector<std::string> out;
  out.reserve(keys.size());
  for (const Key& k : keys) out.push_back(*k.name);
  return out;
}

}  // namespace

std::string_view to_string(LinkLayer layer) {
  return layer == LinkLayer::kEthernet ? "ethernet" : "infiniband";
}

std::string_view to_string(NodeType type) {
  switch (type) {
    case NodeType::kSwitch:
      return "switch";
    case NodeType::kCa:
      return "ca";
    case NodeType::kRouter:
      return "router";
  }
  return "?";
}

std::pair<std::string_view, std::string_view> split_ca_description(std::string_view desc) {
  desc = str::trim(desc);
  const auto sp = desc.find_first_of(" \t");
  std::string_view host = desc.substr(0, sp), dev;
  if (sp != std::string_view::npos) dev = str::trim(desc.substr(sp + 1));
  // Slurm knows hosts by their short name: "node001.cluster.example mlx5_0" is node001. An
  // address ("10.0.0.1") is kept whole.
  const auto dot = host.find('.');
  if (dot != std::string_view::npos && dot > 0 &&
      host.find_first_not_of("0123456789.") != std::string_view::npos)
    host = host.substr(0, dot);
  return {host, dev};
}

FabricBuilder::FabricBuilder(std::string origin) : origin_(str::sanitize(origin)) {}

void FabricBuilder::set_origin(std::string_view origin) {
  origin_ = str::sanitize(origin);
}
void FabricBuilder::add_warning(std::string_view warning) {
  warnings_.push_back(str::sanitize(warning));
}
void FabricBuilder::add_incomplete(std::string_view what) {
  incomplete_.push_back(str::sanitize(what));
}

const FabricBuilder::PortEntry* FabricBuilder::find_port(const NodeEntry& node, PortNum number) {
  const auto it = std::lower_bound(node.ports.begin(), node.ports.end(), number,
                                   [](const PortEntry& e, PortNum v) { return e.rec.number < v; });
  return it != node.ports.end() && it->rec.number == number ? &*it : nullptr;
}

bool FabricBuilder::is_linked(Guid guid, PortNum port) const {
  const auto it = nodes_.find(guid);
  if (it == nodes_.end()) return false;
  const PortEntry* e = find_port(it->second, port);
  return e && e->linked;
}

bool FabricBuilder::has_port(Guid guid, PortNum port) const {
  const auto it = nodes_.find(guid);
  return it != nodes_.end() && find_port(it->second, port) != nullptr;
}

const NodeRecord* FabricBuilder::find_node(Guid guid) const {
  const auto it = nodes_.find(guid);
  return it == nodes_.end() ? nullptr : &it->second.rec;
}

Result<void> FabricBuilder::add_node(const NodeRecord& node) {
  // Text that reaches every output (topology.conf, host maps, rank files, JSON): valid UTF-8
  // without control characters, so no input can add a line to a file written from it.
  if (node.description.size() > kMaxDescriptionBytes)
    return fail(ErrorCode::kSyntax, "node " + str::guid_hex(node.guid) + ": description " +
                                        str::quoted(node.description) + " of " +
                                        std::to_string(node.description.size()) +
                                        " bytes, expected at most " +
                                        std::to_string(kMaxDescriptionBytes));
  if (auto bad = str::invalid_utf8_at(node.description); bad != std::string::npos)
    return fail(ErrorCode::kSyntax, "node " + str::guid_hex(node.guid) + ": description " +
                                        str::quoted(node.description) +
                                        " is not valid UTF-8 (byte " + std::to_string(bad + 1) +
                                        ")");
  if (auto bad = str::control_char_at(node.description); bad != std::string::npos)
    return fail(ErrorCode::kSyntax, "node " + str::guid_hex(node.guid) + ": description " +
                                        str::quoted(node.description) +
                                        " holds a control character (byte " +
                                        std::to_string(bad + 1) + ")");
  // A host name goes into Slurm's files (Nodes=, features, host maps, hostfiles) and shell
  // text (the torchrun environment users source, MASTER_ADDR): none of the characters that
  // mean something there ("no#de002" would end a topology.conf line, "a,b" make two hosts,
  // "n1;touch${IFS}x" run a command).
  if (node.type == NodeType::kCa)
    if (const auto host = split_ca_description(node.description).first; !host.empty())
      if (auto why = str::host_name_problem(host))
        return fail(ErrorCode::kSyntax, "node " + str::guid_hex(node.guid) + ": host name " +
                                            str::quoted(host) + " (from its description) " + *why);
  auto [it, inserted] = nodes_.try_emplace(node.guid);
  if (inserted) {
    if (nodes_.size() > limits().nodes) {
      nodes_.erase(it);
      return fail(ErrorCode::kUnsupported,
                  "more than " + std::to_string(limits().nodes) +
                      " nodes (switches and HCAs) in one fabric (FABRICPLACE_MAX_NODES raises "
                      "the limit)");
    }
    it->second.rec = node;
    return {};
  }
  NodeRecord merged = it->second.rec;
  if (const char* field = merge_node(merged, node))
    return fail(ErrorCode::kDuplicate, "duplicate GUID " + str::guid_hex(node.guid) + " (" +
                                           str::quoted(node.description) + "): " + field +
                                           " differs from the earlier node " +
                                           str::quoted(it->second.rec.description));
  it->second.rec = std::move(merged);
  return {};
}

Result<FabricBuilder::PortEntry*> FabricBuilder::port_entry(NodeEntry& node, PortNum number) {
  // Sorted by number, memory in proportion to the ports listed (a port numbered 65535 costs
  // one entry, not 65536).
  auto it = std::lower_bound(node.ports.begin(), node.ports.end(), number,
                             [](const PortEntry& e, PortNum v) { return e.rec.number < v; });
  if (it == node.ports.end() || it->rec.number != number) {
    if (num_ports_ >= limits().ports)
      return fail(ErrorCode::kUnsupported,
                  "more than " + std::to_string(limits().ports) +
                      " ports in one fabric (FABRICPLACE_MAX_PORTS raises the limit)");
    ++num_ports_;
    it = node.ports.insert(it, PortEntry{});
    it->rec.number = number;
  }
  return &*it;
}

Result<void> FabricBuilder::add_port(Guid node, const PortRecord& port) {
  const auto it = nodes_.find(node);
  if (it == nodes_.end())
    return fail(ErrorCode::kReference,
                "port " + describe(node, port.number) + " belongs to no known node");
  auto e = port_entry(it->second, port.number);
  if (!e) return std::unexpected(e.error());
  auto& entry = **e;
  if (const char* field = merge_port(entry.rec, port))
    return fail(ErrorCode::kDuplicate,
                "port " + describe(node, port.number) + " declared twice: " + field + " differs");
  return {};
}

Result<void> FabricBuilder::add_link(Guid a, PortNum pa, Guid b, PortNum pb, LinkRate rate,
                                     Assumed assumed) {
  const auto ia = nodes_.find(a);
  const auto ib = nodes_.find(b);
  if (ia == nodes_.end() || ib == nodes_.end())
    return fail(ErrorCode::kReference, "link " + describe(a, pa) + " - " + describe(b, pb) +
                                           ": node " + str::guid_hex(ia == nodes_.end() ? a : b) +
                                           " is not defined");
  if (a == b && pa == pb)
    return fail(ErrorCode::kReference, "port " + describe(a, pa) + " is linked to itself");
  auto pea = port_entry(ia->second, pa);
  if (!pea) return std::unexpected(pea.error());
  auto peb = port_entry(ib->second, pb);
  if (!peb) return std::unexpected(peb.error());
  if (a == b) pea = port_entry(ia->second, pa);  // the second insert may have moved it
  auto& ea = **pea;
  auto& eb = **peb;
  auto check = [&](const PortEntry& e, Guid self, PortNum sp, Guid peer,
                   PortNum pp) -> Result<void> {
    if (!e.linked) return {};
    if (e.peer != peer || e.peer_port != pp)
      return fail(ErrorCode::kReference, "port " + describe(nodes_, self, sp) + " is linked to " +
                                             describe(nodes_, e.peer, e.peer_port) + " and to " +
                                             describe(nodes_, peer, pp));
    return {};
  };
  if (auto r = check(ea, a, pa, b, pb); !r) return r;
  if (auto r = check(eb, b, pb, a, pa); !r) return r;
  if (ea.linked) {
    // A reading wins over an assumption; two readings that differ give the lower one.
    if (assumed.rate && !ea.assumed.rate) {
      rate = ea.rate;
    } else if (assumed.rate == ea.assumed.rate && ea.rate != rate) {
      const LinkRate lower = lower_rate(ea.rate, rate);
      warnings_.push_back("link " + describe(nodes_, a, pa) + " - " + describe(nodes_, b, pb) +
                          " is read as " + ea.rate.to_string() + " and as " + rate.to_string() +
                          "; taking " + lower.to_string());
      rate = lower;
    }
    assumed.rate = assumed.rate && ea.assumed.rate;
    assumed.count = assumed.count && ea.assumed.count;
  }
  ea.linked = eb.linked = true;
  ea.peer = b;
  ea.peer_port = pb;
  eb.peer = a;
  eb.peer_port = pa;
  ea.rate = eb.rate = rate;
  ea.assumed = eb.assumed = assumed;
  return {};
}

Result<void> FabricBuilder::set_port_health(Guid node, PortNum port, const PortHealth& health) {
  const auto it = nodes_.find(node);
  if (it == nodes_.end())
    return fail(ErrorCode::kReference,
                "port " + describe(node, port) + " belongs to no known node");
  if (health.was_linked_desc.size() > 0 &&
      (str::invalid_utf8_at(health.was_linked_desc) != std::string::npos ||
       str::control_char_at(health.was_linked_desc) != std::string::npos))
    return fail(ErrorCode::kSyntax, "port " + describe(node, port) + ": former peer description " +
                                        str::quoted(health.was_linked_desc) +
                                        " is not printable UTF-8");
  auto pe = port_entry(it->second, port);
  if (!pe) return std::unexpected(pe.error());
  auto& h = (*pe)->health;
  if (health.has_counters) {
    h.has_counters = true;
    h.counters = health.counters;
  }
  for (const auto& raw : health.problems)
    if (std::string p = str::sanitize(raw);
        std::find(h.problems.begin(), h.problems.end(), p) == h.problems.end())
      h.problems.push_back(std::move(p));
  if (health.was_linked_to != 0) {
    h.was_linked_to = health.was_linked_to;
    h.was_linked_port = health.was_linked_port;
    h.was_linked_desc = health.was_linked_desc;
    h.was_linked_type = health.was_linked_type;
  }
  return {};
}

std::unordered_set<std::string> FabricBuilder::host_names() const {
  std::unordered_set<std::string> out;
  for (const auto& [guid, e] : nodes_) {
    if (e.rec.type != NodeType::kCa) continue;
    std::string host(split_ca_description(e.rec.description).first);
    if (host.empty()) host = "ca-" + str::guid_hex(guid).substr(2);
    out.insert(std::move(host));
  }
  return out;
}

void FabricBuilder::add_domain_host(std::string_view domain, std::string_view host,
                                    std::uint32_t gpus, int line) {
  domain_hosts_.push_back(DomainHost{std::string(domain), std::string(host), gpus, line});
}

Result<void> FabricBuilder::merge(const Fabric& other, bool with_domains) {
  for (const auto& n : other.nodes())
    if (auto r = add_node(n); !r) return r;
  for (const auto& p : other.ports()) {
    if (auto r = add_port(other.node(p.node).guid, p.rec); !r) return r;
    if (!p.health.empty())
      if (auto r = set_port_health(other.node(p.node).guid, p.rec.number, p.health); !r) return r;
  }
  for (const auto& what : other.topology().incomplete) add_incomplete(what);
  if (with_domains)
    for (const auto& d : other.domains())
      for (HostId h : d.hosts) add_domain_host(d.name, other.host(h).name, d.gpus_per_host);
  for (const auto& l : other.links()) {
    const auto& pa = other.port(l.a);
    const auto& pb = other.port(l.b);
    if (auto r = add_link(other.node(pa.node).guid, pa.rec.number, other.node(pb.node).guid,
                          pb.rec.number, l.rate, l.assumed);
        !r)
      return r;
  }
  return {};
}

Result<void> FabricBuilder::build_domains(Fabric& f) {
  auto entries = std::move(domain_hosts_);
  domain_hosts_.clear();
  if (entries.empty()) return {};
  std::unordered_map<std::string, std::uint32_t> index;  // domain name -> position in `doms`
  std::vector<Domain> doms;
  std::vector<std::uint32_t> of_host(f.hosts_.size(), kNone);
  for (const auto& e : entries) {
    if (auto why = domain_name_problem(e.domain); !why.empty())
      return fail(ErrorCode::kSyntax, "host " + str::quoted(e.host, 60) + ": " + why);
    // As hosts are named: a DNS domain dropped ("node001.example.org" -> "node001").
    auto h = f.find_host(e.host);
    if (!h) h = f.find_host(split_ca_description(e.host).first);
    if (!h)
      return fail(ErrorCode::kReference, "domain " + e.domain + " names host " +
                                             str::quoted(e.host, 60) +
                                             ", which is not in the fabric");
    if (e.gpus > kMaxGpusPerHost)
      return fail(ErrorCode::kUnsupported, "domain " + e.domain + ": host " + e.host + " has " +
                                               std::to_string(e.gpus) + " GPUs; at most " +
                                               std::to_string(kMaxGpusPerHost));
    const auto [it, fresh] = index.emplace(e.domain, static_cast<std::uint32_t>(doms.size()));
    if (fresh) doms.push_back(Domain{e.domain, {}, e.gpus});
    if (auto& l = domain_line_[e.domain]; l == 0 || (e.line != 0 && e.line < l)) l = e.line;
    Domain& d = doms[it->second];
    if (d.gpus_per_host != e.gpus)
      return fail(ErrorCode::kSyntax, "domain " + e.domain + " mixes GPU counts: host " + e.host +
                                          " has " + std::to_string(e.gpus) + ", another host " +
                                          std::to_string(d.gpus_per_host) +
                                          " (a domain's hosts are alike)");
    auto& mine = of_host[idx(*h)];
    if (mine == it->second) continue;  // the same pair again
    if (mine != kNone)
      return fail(ErrorCode::kSyntax,
                  "host " + e.host + " is in two domains: " + doms[mine].name + " and " + e.domain);
    mine = it->second;
    d.hosts.push_back(*h);
  }
  for (auto& d : doms) std::sort(d.hosts.begin(), d.hosts.end());
  std::sort(doms.begin(), doms.end(),
            [](const Domain& x, const Domain& y) { return x.hosts.front() < y.hosts.front(); });
  f.host_domain_.assign(f.hosts_.size(), kNone);
  for (std::uint32_t d = 0; d < doms.size(); ++d)
    for (HostId h : doms[d].hosts) f.host_domain_[idx(h)] = d;
  f.domains_ = std::move(doms);
  return {};
}

Result<Fabric> FabricBuilder::build() {
  Fabric f;
  f.origin_ = std::move(origin_);

  // 1. Nodes by GUID.
  std::vector<NodeEntry*> order;
  order.reserve(nodes_.size());
  for (auto& [guid, entry] : nodes_) order.push_back(&entry);
  std::sort(order.begin(), order.end(),
            [](const NodeEntry* x, const NodeEntry* y) { return x->rec.guid < y->rec.guid; });
  f.nodes_.reserve(order.size());
  f.by_guid_.reserve(order.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) {
    f.nodes_.push_back(order[i]->rec);
    f.by_guid_.emplace(order[i]->rec.guid, NodeId{i});
    auto& n = f.nodes_.back();
    if (n.type == NodeType::kSwitch) f.switches_.push_back(NodeId{i});
    if (n.type == NodeType::kCa) f.cas_.push_back(NodeId{i});
    // A node never reports fewer ports than it uses.
    const auto& ports = order[i]->ports;
    if (n.num_ports != 0 && !ports.empty() && ports.back().rec.number > n.num_ports)
      return fail(ErrorCode::kReference, "node " + str::guid_hex(n.guid) + " (" +
                                             str::quoted(n.description) + ") has " +
                                             std::to_string(n.num_ports) + " ports but uses port " +
                                             std::to_string(ports.back().rec.number));
  }

  // 2. Ports (CSR by node, then by number).
  f.port_begin_.reserve(order.size() + 1);
  for (std::uint32_t i = 0; i < order.size(); ++i) {
    f.port_begin_.push_back(static_cast<std::uint32_t>(f.ports_.size()));
    for (const PortEntry& pe : order[i]->ports) {  // ascending port number
      Port p{NodeId{i}, pe.rec, kNoLink, pe.health};
      if (p.rec.guid == 0 && f.nodes_[i].type == NodeType::kSwitch) p.rec.guid = f.nodes_[i].guid;
      f.ports_.push_back(p);
    }
  }
  f.port_begin_.push_back(static_cast<std::uint32_t>(f.ports_.size()));

  // 3. Links, from their lower (GUID, port) end.
  auto find_port = [&](Guid guid, PortNum number) -> PortId {
    const NodeId n = f.by_guid_.at(guid);
    const auto b = f.ports_.begin() + f.port_begin_[idx(n)],
               e = f.ports_.begin() + f.port_begin_[idx(n) + 1];
    const auto it =
        std::lower_bound(b, e, number, [](const Port& p, PortNum v) { return p.rec.number < v; });
    return PortId{static_cast<std::uint32_t>(it - f.ports_.begin())};
  };
  for (std::uint32_t i = 0; i < order.size(); ++i) {
    for (std::uint32_t p = f.port_begin_[i]; p < f.port_begin_[i + 1]; ++p) {
      const PortEntry& pe = order[i]->ports[p - f.port_begin_[i]];
      if (!pe.linked) continue;
      const Guid self = f.nodes_[i].guid;
      if (std::pair(self, f.ports_[p].rec.number) > std::pair(pe.peer, pe.peer_port)) continue;
      const PortId other = find_port(pe.peer, pe.peer_port);
      const LinkId lid{static_cast<std::uint32_t>(f.links_.size())};
      f.links_.push_back(
          Link{PortId{p}, other, NodeId{i}, f.ports_[idx(other)].node, pe.rate, pe.assumed});
      f.ports_[p].link = lid;
      f.ports_[idx(other)].link = lid;
    }
  }
  nodes_.clear();
  // One fabric, one link layer: Ethernet rates and InfiniBand rates do not mix.
  {
    const Link* eth = nullptr;
    const Link* ib = nullptr;
    for (const Link& l : f.links_) {
      if (l.rate.is_ethernet() && !eth) eth = &l;
      if (!l.rate.is_ethernet() && l.rate.known() && !ib) ib = &l;
    }
    if (eth && ib) {
      auto name = [&](const Link& l) {
        return describe(f.nodes_[idx(l.node_a)].guid, f.ports_[idx(l.a)].rec.number) + " - " +
               describe(f.nodes_[idx(l.node_b)].guid, f.ports_[idx(l.b)].rec.number);
      };
      return fail(ErrorCode::kUnsupported, "link " + name(*eth) + " has the Ethernet rate " +
                                               eth->rate.to_string() + " and link " + name(*ib) +
                                               " the InfiniBand rate " + ib->rate.to_string() +
                                               ": a fabric has one link layer");
    }
  }

  // 4. Hosts: CAs grouped by hostname, natural order; each host's CAs by device name.
  std::unordered_map<std::string, std::vector<NodeId>> groups;
  for (NodeId ca : f.cas_) {
    const auto& desc = f.nodes_[idx(ca)].description;
    std::string host(split_ca_description(desc).first);
    if (host.empty()) host = "ca-" + str::guid_hex(f.nodes_[idx(ca)].guid).substr(2);
    groups[host].push_back(ca);
  }
  std::vector<std::string> names = natural_sorted_keys(groups);
  f.node_host_.assign(f.nodes_.size(), kNoHost);
  for (const auto& name : names) {
    Host h{name, std::move(groups.at(name))};
    std::sort(h.hcas.begin(), h.hcas.end(), [&](NodeId x, NodeId y) {
      const auto dx = split_ca_description(f.nodes_[idx(x)].description).second;
      const auto dy = split_ca_description(f.nodes_[idx(y)].description).second;
      if (dx != dy) return hostlist::natural_less(dx, dy);
      return x < y;
    });
    const HostId hid{static_cast<std::uint32_t>(f.hosts_.size())};
    for (NodeId ca : h.hcas) f.node_host_[idx(ca)] = hid;
    f.by_host_.emplace(h.name, hid);
    f.hosts_.push_back(std::move(h));
  }

  // 5. Domains: each host in one, one GPU count per domain; ordered by first host.
  if (auto r = build_domains(f); !r) return std::unexpected(r.error());

  // 6. Classification. Levels are 8-bit (leaf 1, spine 2, ...; real fabrics have 2 to 5): a
  // chain of 255 switches above its hosts is refused rather than wrapped.
  classify(f, f.topo_);
  for (NodeId s : f.switches_)
    if (f.topo_.level[idx(s)] == std::numeric_limits<std::uint8_t>::max())
      return fail(ErrorCode::kUnsupported,
                  "switch " + str::quoted(f.topo_.switch_name[idx(s)]) +
                      " is more than 254 switch levels above the nearest HCA: deeper than any "
                      "fabric (fat-trees have 2 to 5 levels)");
  f.topo_.incomplete = std::move(incomplete_);
  incomplete_.clear();
  // A domain across pods is one block for placement, but Slurm's pod-sized block of the
  // topology/block export (the pod of its first host) then holds hosts of another pod.
  for (const auto& d : f.domains_) {
    std::set<std::uint32_t> pods;
    for (HostId h : d.hosts)
      if (const auto p = f.topo_.host_pod[idx(h)]; p != kNone) pods.insert(p);
    if (pods.size() < 2) continue;
    std::string list;
    for (auto p : pods) list += (list.empty() ? "" : ", ") + std::to_string(p + 1);
    warnings_.push_back("NVLink domain " + d.name + " spans pods " + list +
                        ": one block for placement; the slurm-block export lists it under pod " +
                        std::to_string(*pods.begin() + 1) +
                        " (its first host's), so a pod-sized Slurm block that holds it reaches "
                        "into another pod");
  }
  f.topo_.warnings.insert(f.topo_.warnings.begin(), warnings_.begin(), warnings_.end());
  warnings_.clear();
  for (NodeId s : f.switches_) f.by_switch_name_.emplace(f.topo_.switch_name[idx(s)], s);
  // A domain is a block of placement and of Slurm's topology/block, named after it; so is a
  // leaf's rest of hosts in no domain, after the leaf: one name must not stand for both. And
  // a domain's name is a node feature beside its hosts' Slurm switches' names (merged ones
  // too: "spine1-2", "su01", "railgroup01"), so `-C NAME` must not reach other hosts.
  auto lines = std::move(domain_line_);
  domain_line_.clear();
  if (!f.domains_.empty()) {
    std::unordered_map<std::string, const SlurmSwitch*> slurm_names;
    const auto tree = slurm_tree(f);
    for (const auto& s : tree.switches) slurm_names.emplace(s.name, &s);
    for (const auto& d : f.domains_) {
      const int line = lines.contains(d.name) ? lines[d.name] : 0;
      if (f.by_switch_name_.contains(d.name))
        return fail(ErrorCode::kSyntax,
                    "domain " + d.name +
                        " has the name of a switch; a domain's name must differ from every "
                        "switch's (rename the domain)",
                    {}, line);
      if (const auto it = slurm_names.find(d.name); it != slurm_names.end()) {
        std::vector<std::string> members;
        for (NodeId m : it->second->members) members.push_back(f.topo_.switch_name[idx(m)]);
        return fail(ErrorCode::kSyntax,
                    "domain " + d.name + " has the name the Slurm topology gives switches " +
                        hostlist::compress(members) +
                        " (merged into one Slurm switch), so a feature constraint -C " + d.name +
                        " would match hosts outside the domain; a domain's name must differ "
                        "from every switch's, merged ones included (rename the domain)",
                    {}, line);
      }
    }
  }
  return f;
}

}  // namespace fabricplace::fabric
