#include "fabricplace/fabric/diff.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "fabricplace/common/hostlist.hpp"

namespace fabricplace::fabric {
namespace {

using LinkKey = std::tuple<Guid, PortNum, Guid, PortNum>;

LinkKey key_of(const Fabric& f, const Link& l) {
  return {f.node(l.node_a).guid, f.port(l.a).rec.number, f.node(l.node_b).guid,
          f.port(l.b).rec.number};
}

std::string link_name(const Fabric& f, const Link& l) {
  const auto level = [&](NodeId n) {
    return f.node(n).type == NodeType::kSwitch ? int{f.topology().level[idx(n)]} : 0;
  };
  return level(l.node_b) < level(l.node_a) ? port_name(f, l.b) + " - " + port_name(f, l.a)
                                           : port_name(f, l.a) + " - " + port_name(f, l.b);
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

// Links with counters read on at least one end: only there can health be compared.
std::set<LinkKey> links_with_counters(const Fabric& f) {
  std::set<LinkKey> out;
  for (const Link& l : f.links())
    if (f.port(l.a).health.has_counters || f.port(l.b).health.has_counters)
      out.insert(key_of(f, l));
  return out;
}

std::map<LinkKey, std::string> problems_by_link(const Fabric& f) {
  std::map<LinkKey, std::string> out;
  for (const auto& u : f.topology().unhealthy_links) {
    std::string s;
    for (const auto& p : u.problems) s += (s.empty() ? "" : "; ") + p;
    out[key_of(f, f.link(u.link))] = s;
  }
  return out;
}

}  // namespace

bool FabricDiff::empty() const {
  return added.empty() && removed.empty() && degraded.empty() && recovered.empty() &&
         rerated.empty() && oversubscription.empty() && moved.empty() && hosts_added.empty() &&
         hosts_removed.empty() && switches_added.empty() && switches_removed.empty() &&
         unhealthy.empty() && healthy_again.empty();
}

FabricDiff diff(const Fabric& a, const Fabric& b) {
  FabricDiff d;
  // Links.
  std::map<LinkKey, LinkId> in_a, in_b;
  for (std::uint32_t i = 0; i < a.num_links(); ++i)
    in_a.emplace(key_of(a, a.link(LinkId{i})), LinkId{i});
  for (std::uint32_t i = 0; i < b.num_links(); ++i)
    in_b.emplace(key_of(b, b.link(LinkId{i})), LinkId{i});
  for (const auto& [k, id] : in_a)
    if (!in_b.contains(k))
      d.removed.push_back({link_name(a, a.link(id)), a.link(id).rate.to_string(), {}});
  for (const auto& [k, id] : in_b) {
    const Link& lb = b.link(id);
    const auto it = in_a.find(k);
    if (it == in_a.end()) {
      d.added.push_back({link_name(b, lb), {}, lb.rate.to_string()});
      continue;
    }
    const LinkRate ra = a.link(it->second).rate, rb = lb.rate;
    if (ra == rb) continue;
    FabricDiff::LinkChange c{link_name(b, lb), ra.to_string(), rb.to_string()};
    if (rb.gbps() < ra.gbps())
      d.degraded.push_back(c);
    else if (rb.gbps() > ra.gbps())
      d.recovered.push_back(c);
    else
      d.rerated.push_back(c);
  }
  // Health by counters.
  const auto pa = problems_by_link(a), pb = problems_by_link(b);
  for (const auto& [k, problems] : pb) {
    const auto it = pa.find(k);
    if (it == pa.end() || it->second != problems)
      d.unhealthy.push_back(link_name(b, b.link(in_b.at(k))) + ": " + problems);
  }
  const auto read_b = links_with_counters(b);
  for (const auto& [k, problems] : pa)
    if (!pb.contains(k) && in_b.contains(k) && read_b.contains(k))
      d.healthy_again.push_back(link_name(b, b.link(in_b.at(k))));
  d.before_incomplete = a.topology().incomplete;
  d.after_incomplete = b.topology().incomplete;
  // Switches and leaves.
  for (NodeId s : a.switches())
    if (!b.find_guid(a.node(s).guid))
      d.switches_removed.push_back(a.topology().switch_name[idx(s)]);
  for (NodeId s : b.switches())
    if (!a.find_guid(b.node(s).guid)) d.switches_added.push_back(b.topology().switch_name[idx(s)]);
  std::map<Guid, double> over_a;
  for (const auto& st : a.topology().leaf_stats) over_a[a.node(st.leaf).guid] = st.oversubscription;
  for (const auto& st : b.topology().leaf_stats) {
    const auto it = over_a.find(b.node(st.leaf).guid);
    if (it == over_a.end()) continue;
    const double x = it->second, y = st.oversubscription;
    const bool same = (std::isinf(x) && std::isinf(y)) || std::fabs(x - y) < 1e-9;
    if (!same) d.oversubscription.push_back({b.topology().switch_name[idx(st.leaf)], x, y});
  }
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
  return d;
}

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
  return o;
}

std::string diff_json(const FabricDiff& d) {
  using nlohmann::ordered_json;
  ordered_json j;
  j["changed"] = !d.empty();
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
  return j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace fabricplace::fabric
