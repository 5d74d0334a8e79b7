// SPDX-License-Identifier: GPL-2.0-or-later
#include "fabricplace/fabric/diff.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <tuple>

#include "fabricplace/common/hostlist.hpp"
#include "fabricplace/common/strings.hpp"
#include "fabricplace/fabric/builder.hpp"
#include "fabricplace/fabric/slurm_tree.hpp"
#include "fabricplace/fabric/sources.hpp"

namespace fabricplace::fabric {
namespace {

int level_of(const Fabric& f, NodeId n) {
  return f.node(n).type == NodeType::kSwitch ? int{f.topology().level[idx(n)]} : 0;
}

}  // namespace

std::string link_name(const Fabric& f, const Link& l) {
  return level_of(f, l.node_b) < level_of(f, l.node_a)
             ? port_name(f, l.b) + " - " + port_name(f, l.a)
             : port_name(f, l.a) + " - " + port_name(f, l.b);
}

namespace {

// What names a link's end across sources: a switch's name, a CA's host, a router's
// description.
std::string end_name(const Fabric& f, NodeId n) {
  switch (f.node(n).type) {
    case NodeType::kSwitch:
      return f.topology().switch_name[idx(n)];
    case NodeType::kCa:
      return f.host(f.host_of(n)).name;
    case NodeType::kRouter:
      break;
  }
  return f.node(n).description;
}

// The key that matches a link across the two fabrics. By identity: its two ports, each by
// port GUID (node GUID for switches, whose ports share it) and number, so a plain dump and a
// -p dump (which names CAs by port GUID) agree. By name: the names of its two ends, lower
// level first, so all parallel links of a switch pair share one key.
std::string link_key(const Fabric& f, const Link& l, bool by_name) {
  if (by_name) {
    std::string a = end_name(f, l.node_a), b = end_name(f, l.node_b);
    if (std::pair(level_of(f, l.node_b), b) < std::pair(level_of(f, l.node_a), a)) std::swap(a, b);
    return a + " - " + b;
  }
  auto end = [&](PortId p) {
    const Port& port = f.port(p);
    const Guid g = f.node(port.node).type == NodeType::kSwitch || port.rec.guid == 0
                       ? f.node(port.node).guid
                       : port.rec.guid;
    return std::pair(g, port.rec.number);
  };
  auto x = end(l.a), y = end(l.b);
  if (y < x) std::swap(x, y);
  return str::guid_hex(x.first) + ":" + std::to_string(x.second) + "-" + str::guid_hex(y.first) +
         ":" + std::to_string(y.second);
}

// Links by key; by name, a switch pair's parallel links share one, fastest first.
struct Group {
  std::vector<LinkId> links;
  bool count_assumed = false, rate_assumed = false;
};
std::map<std::string, Group> groups(const Fabric& f, bool by_name) {
  std::map<std::string, Group> out;
  for (std::uint32_t i = 0; i < f.num_links(); ++i) {
    const Link& l = f.link(LinkId{i});
    auto& g = out[link_key(f, l, by_name)];
    g.links.push_back(LinkId{i});
    g.count_assumed = g.count_assumed || l.assumed.count;
    g.rate_assumed = g.rate_assumed || l.assumed.rate;
  }
  for (auto& [key, g] : out)
    std::stable_sort(g.links.begin(), g.links.end(), [&](LinkId x, LinkId y) {
      return f.link(x).rate.gbps() > f.link(y).rate.gbps();
    });
  return out;
}

std::string host_leaves(const Fabric& f, HostId h) {
  std::string s;
  for (NodeId l : f.topology().host_leaves[idx(h)])
    s += (s.empty() ? "" : ",") + f.topology().switch_name[idx(l)];
  return s.empty() ? "(none)" : s;
}

std::string ratio(double r) {
  if (!std::isfinite(r)) return "no uplink";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f:1", r);
  return buf;
}

// Per key: the problems of its links (counters past their thresholds), and whether counters
// were read on any of them: only there can health be compared.
std::map<std::string, std::string> problems_by_key(const Fabric& f, bool by_name) {
  std::map<std::string, std::string> out;
  for (const auto& u : f.topology().unhealthy_links) {
    auto& s = out[link_key(f, f.link(u.link), by_name)];
    for (const auto& p : u.problems) s += (s.empty() ? "" : "; ") + p;
  }
  return out;
}
std::set<std::string> keys_with_counters(const Fabric& f, bool by_name) {
  std::set<std::string> out;
  for (const Link& l : f.links())
    if (f.port(l.a).health.has_counters || f.port(l.b).health.has_counters)
      out.insert(link_key(f, l, by_name));
  return out;
}

}  // namespace

bool synthetic_identity(const Fabric& f) {
  if (f.num_nodes() == 0) return false;
  for (const NodeRecord& n : f.nodes()) {
    const Guid top = n.guid >> 32;
    if (top != (kSyntheticSwitchGuids >> 32) && top != (kSyntheticCaGuids >> 32)) return false;
  }
  return true;
}

bool FabricDiff::empty() const {
  return added.empty() && removed.empty() && degraded.empty() && recovered.empty() &&
         rerated.empty() && oversubscription.empty() && moved.empty() && hosts_added.empty() &&
         hosts_removed.empty() && switches_added.empty() && switches_removed.empty() &&
         unhealthy.empty() && healthy_again.empty() && domains.empty();
}

namespace {

FabricDiff diff_as_read(const Fabric& a, const Fabric& b);

bool from_topology_conf(const Fabric& f) {
  return f.origin().starts_with("slurm-topology ");
}

// `f` as its own topology.conf export reads back: what a topology.conf of it can hold (Slurm's
// tree gives every switch one parent, so parallel upper switches become one; it holds no
// link counts). Nothing when the export merges no switch, or does not read back.
std::optional<Fabric> as_topology_conf(const Fabric& f) {
  const SlurmTree tree = slurm_tree(f);
  // Where the export keeps every switch as it is (one parent each, no virtual leaves), the
  // fabric is compared as read: that keeps the rates a topology.conf could not restate.
  const bool merges =
      tree.virtual_leaves || std::any_of(tree.switches.begin(), tree.switches.end(),
                                         [](const SlurmSwitch& s) { return s.members.size() > 1; });
  if (!merges) return std::nullopt;
  const std::string text = to_slurm_topology(f, tree);
  FabricBuilder b("slurm-topology (" + f.origin() + ", as its topology.conf export)");
  SourceOptions o;
  if (auto r = read_slurm_topology(text, f.origin(), o, b); !r) return std::nullopt;
  auto built = b.build();
  if (!built) return std::nullopt;
  return std::move(*built);
}

}  // namespace

// One side read from a topology.conf and the other not: the other is compared as its
// topology.conf reads, since a topology.conf cannot say more (a Clos whose ToRs reach two
// aggregation switches is one Slurm switch above them there). Real changes a topology.conf
// can hold (a host moved, a switch gone, a stated LinkSpeed) still show.
FabricDiff diff(const Fabric& a, const Fabric& b) {
  if (from_topology_conf(a) != from_topology_conf(b)) {
    const bool old_is_conf = from_topology_conf(a);
    const Fabric& other = old_is_conf ? b : a;
    if (auto projected = as_topology_conf(other)) {
      FabricDiff d = old_is_conf ? diff_as_read(a, *projected) : diff_as_read(*projected, b);
      d.notes.insert(d.notes.begin(),
                     std::string("the ") + (old_is_conf ? "OLD" : "NEW") +
                         " fabric is a topology.conf: the " + (old_is_conf ? "NEW" : "OLD") +
                         " one is compared as its topology.conf export reads (one parent per "
                         "switch, no link counts)");
      return d;
    }
  }
  return diff_as_read(a, b);
}

namespace {

FabricDiff diff_as_read(const Fabric& a, const Fabric& b) {
  FabricDiff d;
  const bool syn_a = synthetic_identity(a), syn_b = synthetic_identity(b);
  const bool by_name = syn_a || syn_b;
  d.by_name = by_name;
  if (by_name)
    d.notes.push_back(
        std::string("links are matched by switch and host names: ") +
        (syn_a && syn_b ? "neither fabric has any"
         : syn_a        ? "the OLD fabric has no"
                        : "the NEW fabric has no") +
        " InfiniBand identity (a topology.conf or tiers CSV makes up GUIDs and ports)");
  // Links. A link count or rate that one side only assumes is not compared.
  std::size_t unread = 0;
  const auto in_a = groups(a, by_name), in_b = groups(b, by_name);
  auto name_of = [&](const Fabric& f, LinkId id, const std::string& key) {
    return by_name ? key : link_name(f, f.link(id));
  };
  for (const auto& [k, ga] : in_a)
    if (!in_b.contains(k))
      for (LinkId id : ga.links)
        d.removed.push_back({name_of(a, id, k), a.link(id).rate.to_string(), {}});
  for (const auto& [k, gb] : in_b) {
    const auto it = in_a.find(k);
    if (it == in_a.end()) {
      for (LinkId id : gb.links)
        d.added.push_back({name_of(b, id, k), {}, b.link(id).rate.to_string()});
      continue;
    }
    const Group& ga = it->second;
    const bool counts = !ga.count_assumed && !gb.count_assumed;
    const bool rates = !ga.rate_assumed && !gb.rate_assumed;
    const std::size_t na = ga.links.size(), nb = gb.links.size(), m = std::min(na, nb);
    if (!counts && na != nb) ++unread;
    bool rate_skipped = false;
    for (std::size_t i = 0; i < m; ++i) {
      const LinkRate ra = a.link(ga.links[i]).rate, rb = b.link(gb.links[i]).rate;
      if (ra == rb) continue;
      if (!rates) {
        rate_skipped = true;
        continue;
      }
      FabricDiff::LinkChange c{name_of(b, gb.links[i], k), ra.to_string(), rb.to_string()};
      if (rb.gbps() < ra.gbps())
        d.degraded.push_back(c);
      else if (rb.gbps() > ra.gbps())
        d.recovered.push_back(c);
      else
        d.rerated.push_back(c);
    }
    unread += rate_skipped;
    if (!counts) continue;
    for (std::size_t i = m; i < na; ++i)
      d.removed.push_back({name_of(a, ga.links[i], k), a.link(ga.links[i]).rate.to_string(), {}});
    for (std::size_t i = m; i < nb; ++i)
      d.added.push_back({name_of(b, gb.links[i], k), {}, b.link(gb.links[i]).rate.to_string()});
  }
  // Health by counters.
  const auto pa = problems_by_key(a, by_name), pb = problems_by_key(b, by_name);
  for (const auto& [k, problems] : pb) {
    const auto it = pa.find(k);
    if (it == pa.end() || it->second != problems)
      d.unhealthy.push_back(name_of(b, in_b.at(k).links.front(), k) + ": " + problems);
  }
  const auto read_b = keys_with_counters(b, by_name);
  for (const auto& [k, problems] : pa)
    if (!pb.contains(k) && in_b.contains(k) && read_b.contains(k))
      d.healthy_again.push_back(name_of(b, in_b.at(k).links.front(), k));
  d.before_incomplete = a.topology().incomplete;
  d.after_incomplete = b.topology().incomplete;
  // Switches (by GUID, or by name) and leaves.
  auto switch_key = [&](const Fabric& f, NodeId s) {
    return by_name ? f.topology().switch_name[idx(s)] : str::guid_hex(f.node(s).guid);
  };
  std::set<std::string> sw_a, sw_b;
  for (NodeId s : a.switches()) sw_a.insert(switch_key(a, s));
  for (NodeId s : b.switches()) sw_b.insert(switch_key(b, s));
  for (NodeId s : a.switches())
    if (!sw_b.contains(switch_key(a, s)))
      d.switches_removed.push_back(a.topology().switch_name[idx(s)]);
  for (NodeId s : b.switches())
    if (!sw_a.contains(switch_key(b, s)))
      d.switches_added.push_back(b.topology().switch_name[idx(s)]);
  std::map<std::string, const Topology::LeafStats*> over_a;
  for (const auto& st : a.topology().leaf_stats) over_a[switch_key(a, st.leaf)] = &st;
  std::size_t unread_ratios = 0;
  for (const auto& st : b.topology().leaf_stats) {
    const auto it = over_a.find(switch_key(b, st.leaf));
    if (it == over_a.end()) continue;
    const double x = it->second->oversubscription, y = st.oversubscription;
    const bool same = (std::isinf(x) && std::isinf(y)) || std::fabs(x - y) < 1e-9;
    if (same) continue;
    if (it->second->assumed || st.assumed) {
      ++unread_ratios;
      continue;
    }
    d.oversubscription.push_back({b.topology().switch_name[idx(st.leaf)], x, y});
  }
  if (unread + unread_ratios > 0)
    d.notes.push_back("not compared, because one side only assumes them: " +
                      std::to_string(unread) + " link count(s) or rate(s), " +
                      std::to_string(unread_ratios) + " leaf oversubscription figure(s)");
  // Hosts.
  for (std::uint32_t h = 0; h < a.num_hosts(); ++h) {
    const auto& name = a.host(HostId{h}).name;
    const auto other = b.find_host(name);
    if (!other) {
      d.hosts_removed.push_back(name);
      continue;
    }
    const std::string before = host_leaves(a, HostId{h}), after = host_leaves(b, *other);
    if (before != after) d.moved.push_back({name, before, after});
  }
  for (std::uint32_t h = 0; h < b.num_hosts(); ++h)
    if (!a.find_host(b.host(HostId{h}).name)) d.hosts_added.push_back(b.host(HostId{h}).name);
  // NVLink domains, by name: their hosts as hostlists.
  auto domains = [](const Fabric& f) {
    std::map<std::string, std::string> out;
    for (const auto& dom : f.domains()) {
      std::vector<std::string> names;
      for (HostId h : dom.hosts) names.push_back(f.host(h).name);
      out[dom.name] = hostlist::compress(names);
    }
    return out;
  };
  const auto da = domains(a), db = domains(b);
  for (const auto& [name, hosts] : da) {
    const auto it = db.find(name);
    if (it == db.end())
      d.domains.push_back({name, hosts, ""});
    else if (it->second != hosts)
      d.domains.push_back({name, hosts, it->second});
  }
  for (const auto& [name, hosts] : db)
    if (!da.contains(name)) d.domains.push_back({name, "", hosts});
  return d;
}

}  // namespace

std::string diff_text(const FabricDiff& d) {
  std::string o;
  for (const auto& [side, list] :
       {std::pair("OLD", &d.before_incomplete), std::pair("NEW", &d.after_incomplete)}) {
    if (list->empty()) continue;
    o += "WARNING: the " + std::string(side) +
         " fabric is INCOMPLETE (a partial discovery published with --allow-partial); what it "
         "lacks shows as " +
         (std::string(side) == "NEW" ? "removed" : "added") + ":\n";
    for (const auto& what : *list) o += "  " + what + "\n";
  }
  for (const auto& n : d.notes) o += "note: " + n + "\n";
  if (d.empty()) return o + "no changes\n";
  auto links = [&](const char* what, const std::vector<FabricDiff::LinkChange>& v) {
    for (const auto& c : v) {
      o += std::string(what) + " " + c.link;
      if (!c.before.empty() && !c.after.empty())
        o += ": " + c.before + " -> " + c.after;
      else
        o += ": " + (c.before.empty() ? c.after : c.before);
      o += "\n";
    }
  };
  links("removed", d.removed);
  links("added", d.added);
  links("degraded", d.degraded);
  links("recovered", d.recovered);
  links("rerated", d.rerated);
  for (const auto& u : d.unhealthy) o += "unhealthy " + u + "\n";
  for (const auto& u : d.healthy_again) o += "healthy again " + u + "\n";
  for (const auto& c : d.oversubscription)
    o += "oversubscription " + c.leaf + ": " + ratio(c.before) + " -> " + ratio(c.after) + "\n";
  for (const auto& m : d.moved) o += "moved " + m.host + ": " + m.before + " -> " + m.after + "\n";
  if (!d.hosts_removed.empty()) o += "hosts removed: " + hostlist::compress(d.hosts_removed) + "\n";
  if (!d.hosts_added.empty()) o += "hosts added: " + hostlist::compress(d.hosts_added) + "\n";
  if (!d.switches_removed.empty())
    o += "switches removed: " + hostlist::compress(d.switches_removed) + "\n";
  if (!d.switches_added.empty())
    o += "switches added: " + hostlist::compress(d.switches_added) + "\n";
  for (const auto& c : d.domains)
    o += c.before.empty()  ? "domain added " + c.domain + ": " + c.after + "\n"
         : c.after.empty() ? "domain removed " + c.domain + ": " + c.before + "\n"
                           : "domain " + c.domain + ": " + c.before + " -> " + c.after + "\n";
  return o;
}

std::string diff_json(const FabricDiff& d) {
  using nlohmann::ordered_json;
  ordered_json j;
  j["changed"] = !d.empty();
  j["matched_by"] = d.by_name ? "name" : "guid";
  j["notes"] = d.notes;
  j["incomplete"] = {{"old", d.before_incomplete}, {"new", d.after_incomplete}};
  auto links = [](const std::vector<FabricDiff::LinkChange>& v) {
    ordered_json a = ordered_json::array();
    for (const auto& c : v)
      a.push_back({{"link", c.link}, {"before", c.before}, {"after", c.after}});
    return a;
  };
  j["removed"] = links(d.removed);
  j["added"] = links(d.added);
  j["degraded"] = links(d.degraded);
  j["recovered"] = links(d.recovered);
  j["rerated"] = links(d.rerated);
  j["unhealthy"] = d.unhealthy;
  j["healthy_again"] = d.healthy_again;
  j["oversubscription"] = ordered_json::array();
  for (const auto& c : d.oversubscription)
    j["oversubscription"].push_back(
        {{"leaf", c.leaf},
         {"before", std::isfinite(c.before) ? ordered_json(c.before) : ordered_json(nullptr)},
         {"after", std::isfinite(c.after) ? ordered_json(c.after) : ordered_json(nullptr)}});
  j["moved"] = ordered_json::array();
  for (const auto& m : d.moved)
    j["moved"].push_back({{"host", m.host}, {"before", m.before}, {"after", m.after}});
  j["hosts_removed"] = d.hosts_removed;
  j["hosts_added"] = d.hosts_added;
  j["switches_removed"] = d.switches_removed;
  j["switches_added"] = d.switches_added;
  j["domains"] = ordered_json::array();
  for (const auto& c : d.domains)
    j["domains"].push_back({{"domain", c.domain}, {"before", c.before}, {"after", c.after}});
  return j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace fabricplace::fabric
