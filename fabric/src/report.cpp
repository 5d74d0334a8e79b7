// SPDX-License-Identifier: GPL-2.0-or-later
#include "fabricplace/fabric/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "fabricplace/common/hostlist.hpp"
#include "fabricplace/common/strings.hpp"

namespace fabricplace::fabric {
namespace {

std::string ratio(double r) {
  if (!std::isfinite(r)) return "no uplink";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f:1", r);
  return buf;
}

std::string names_of(const Fabric& f, const std::vector<HostId>& hosts) {
  std::vector<std::string> names;
  for (HostId h : hosts) names.push_back(f.host(h).name);
  return hostlist::compress(names);
}
std::string switch_names(const Fabric& f, const std::vector<NodeId>& sws) {
  std::vector<std::string> names;
  for (NodeId s : sws) names.push_back(f.topology().switch_name[idx(s)]);
  return hostlist::compress(names);
}

// The ends of a link, lower level first ("leaf01[21] - spine01[1]").
std::pair<std::pair<NodeId, PortId>, std::pair<NodeId, PortId>> ends_low_first(const Fabric& f,
                                                                               const Link& l) {
  const auto& t = f.topology();
  auto level = [&](NodeId n) {
    return f.node(n).type == NodeType::kSwitch ? int{t.level[idx(n)]} : 0;
  };
  if (level(l.node_b) < level(l.node_a)) return {{l.node_b, l.b}, {l.node_a, l.a}};
  return {{l.node_a, l.a}, {l.node_b, l.b}};
}

// Links whose rate, and switch pairs whose link count, the source did not state.
struct AssumedCounts {
  std::size_t rate = 0;   ///< links
  std::size_t count = 0;  ///< switch pairs
};
AssumedCounts assumed_counts(const Fabric& f) {
  AssumedCounts a;
  std::set<std::pair<NodeId, NodeId>> pairs;
  for (const Link& l : f.links()) {
    a.rate += l.assumed.rate;
    if (l.assumed.count) pairs.emplace(std::min(l.node_a, l.node_b), std::max(l.node_a, l.node_b));
  }
  a.count = pairs.size();
  return a;
}
std::string assumed_text(const AssumedCounts& a) {
  std::string s;
  if (a.rate) s = "the rates of " + std::to_string(a.rate) + " links";
  if (a.count)
    s += (s.empty() ? "" : ", ") + std::string("the link counts of ") + std::to_string(a.count) +
         " switch pairs (one link each)";
  return s;
}

// A group of switches (or pods) with the same figures, sorted by ratio (no uplink and no
// hosts last), then by the first name.
struct RatioGroup {
  double sort = 0;
  std::string ratio, detail;
  bool assumed = false;
  std::vector<std::string> names;
};
void print_groups(std::vector<RatioGroup> groups, const std::function<void(std::string)>& line) {
  // Same figures -> one group.
  std::map<std::tuple<std::string, std::string, bool>, std::size_t> at;
  std::vector<RatioGroup> merged;
  for (auto& g : groups) {
    const auto key = std::tuple(g.ratio, g.detail, g.assumed);
    if (auto it = at.find(key); it != at.end()) {
      merged[it->second].names.push_back(g.names.front());
      continue;
    }
    at.emplace(key, merged.size());
    merged.push_back(std::move(g));
  }
  std::sort(merged.begin(), merged.end(), [](const RatioGroup& a, const RatioGroup& b) {
    if (a.sort != b.sort) return a.sort < b.sort;
    return hostlist::natural_less(a.names.front(), b.names.front());
  });
  for (const auto& g : merged)
    line("    " + hostlist::compress(g.names) + ": " + g.ratio + (g.assumed ? " assumed" : "") +
         " (" + g.detail + ")");
}

void print_oversubscription(const Fabric& f, const std::function<void(std::string)>& line) {
  const Topology& t = f.topology();
  auto sort_value = [](double r) {
    return std::isfinite(r) ? r : std::numeric_limits<double>::max();
  };
  line("  oversubscription per leaf (host-facing : uplink bandwidth):");
  std::vector<RatioGroup> leaves;
  for (const auto& st : t.leaf_stats) {
    RatioGroup g;
    g.sort =
        st.hosts == 0 ? std::numeric_limits<double>::infinity() : sort_value(st.oversubscription);
    g.ratio = st.hosts == 0 ? std::string("no hosts") : ratio(st.oversubscription);
    g.detail = std::to_string(st.hosts) + " hosts, " + std::to_string(st.down_links) + " down / " +
               std::to_string(st.up_links) + " up links";
    g.assumed = st.assumed;
    g.names = {t.switch_name[idx(st.leaf)]};
    leaves.push_back(std::move(g));
  }
  print_groups(std::move(leaves), line);
  std::map<int, std::vector<RatioGroup>> upper;  // per level
  for (const auto& st : t.switch_stats) {
    RatioGroup g;
    g.sort = sort_value(st.oversubscription);
    g.ratio = ratio(st.oversubscription);
    g.detail =
        std::to_string(st.down_links) + " down / " + std::to_string(st.up_links) + " up links";
    g.assumed = st.assumed;
    g.names = {t.switch_name[idx(st.node)]};
    upper[t.level[idx(st.node)]].push_back(std::move(g));
  }
  for (auto& [level, groups] : upper) {
    const std::string word = tier_name(level, level).substr(0, tier_name(level, level).find('-'));
    line("  oversubscription per " + word + " (bandwidth from below : uplink bandwidth):");
    print_groups(std::move(groups), line);
  }
  if (!t.pod_stats.empty()) {
    line("  oversubscription per pod (its hosts' bandwidth : its uplink bandwidth):");
    std::vector<RatioGroup> pods;
    for (const auto& st : t.pod_stats) {
      RatioGroup g;
      g.sort = sort_value(st.oversubscription);
      g.ratio = ratio(st.oversubscription);
      g.detail = std::to_string(t.pods[st.pod].hosts.size()) + " hosts, " +
                 std::to_string(st.host_links) + " host / " + std::to_string(st.up_links) +
                 " up links";
      g.assumed = st.assumed;
      g.names = {"pod" + std::to_string(st.pod + 1)};
      pods.push_back(std::move(g));
    }
    print_groups(std::move(pods), line);
  }
}

// Per domain: the leaves its hosts hang off (their primary leaf), ascending, and its pods.
std::vector<NodeId> domain_leaves(const Fabric& f, const Domain& d) {
  std::set<NodeId> leaves;
  for (HostId h : d.hosts)
    if (const NodeId l = f.topology().host_leaf[idx(h)]; l != kNoNode) leaves.insert(l);
  return {leaves.begin(), leaves.end()};
}
std::vector<std::uint32_t> domain_pods(const Fabric& f, const Domain& d) {
  std::set<std::uint32_t> pods;
  for (HostId h : d.hosts)
    if (const auto p = f.topology().host_pod[idx(h)]; p != kNone) pods.insert(p);
  return {pods.begin(), pods.end()};
}

// "4 GPUs" or "GPUs not known".
std::string gpus_text(std::uint32_t g) {
  return g ? std::to_string(g) + " GPU" + (g == 1 ? "" : "s") : std::string("GPUs not known");
}

void print_domains(const Fabric& f, const std::function<void(std::string)>& line) {
  const auto doms = f.domains();
  if (doms.empty()) return;  // most fabrics: nothing to say
  std::size_t in = 0, straddle = 0;
  for (const auto& d : doms) {
    in += d.hosts.size();
    straddle += domain_leaves(f, d).size() > 1;
  }
  std::vector<HostId> none;
  for (std::uint32_t h = 0; h < f.num_hosts(); ++h)
    if (f.domain_of(HostId{h}) == kNone) none.push_back(HostId{h});
  line("  NVLink domains: " + std::to_string(doms.size()) + ", " + std::to_string(in) +
       " hosts in them" + (straddle ? ", " + std::to_string(straddle) + " across leaves" : "") +
       (none.empty() ? "" : "; hosts in none: " + names_of(f, none)));
  for (const auto& d : doms) {
    const auto leaves = domain_leaves(f, d);
    std::string where = leaves.empty()
                            ? std::string("no leaf")
                            : (leaves.size() == 1 ? "leaf " : "leaves ") + switch_names(f, leaves);
    if (f.topology().rail_optimised) {
      std::string pods;
      for (auto p : domain_pods(f, d)) pods += (pods.empty() ? "" : ",") + std::to_string(p + 1);
      where = "rail group (pod) " + pods;
    }
    line("    " + d.name + ": " + std::to_string(d.hosts.size()) + " hosts " +
         names_of(f, d.hosts) + " of " + gpus_text(d.gpus_per_host) +
         (d.gpus_per_host ? " (" + std::to_string(d.gpus_per_host * d.hosts.size()) + " in all)"
                          : "") +
         ", " + where);
  }
}
}  // namespace

std::string tier_name(int lo, int hi) {
  auto word = [](int l) {
    if (l == Topology::kRouterTier) return std::string("router");
    return l == 0   ? std::string("host")
           : l == 1 ? "leaf"
           : l == 2 ? "spine"
           : l == 3 ? "core"
                    : "L" + std::to_string(l);
  };
  return word(lo) + "-" + word(hi);
}

std::vector<HostId> hosts_behind(const Fabric& f, LinkId link) {
  const Topology& t = f.topology();
  const Link& l = f.link(link);
  const auto level = [&](NodeId n) {
    return f.node(n).type == NodeType::kSwitch ? t.level[idx(n)] : 0;
  };
  return hosts_below(f, level(l.node_a) <= level(l.node_b) ? l.node_a : l.node_b);
}

std::vector<HostId> hosts_below(const Fabric& f, NodeId low) {
  const Topology& t = f.topology();
  std::vector<HostId> out;
  if (f.node(low).type == NodeType::kCa) return {f.host_of(low)};
  if (f.node(low).type != NodeType::kSwitch) return {};
  // Walk down from the lower end to the CAs below it.
  std::vector<bool> seen(f.num_nodes(), false);
  std::deque<NodeId> q{low};
  seen[idx(low)] = true;
  while (!q.empty()) {
    const NodeId s = q.front();
    q.pop_front();
    const PortId first = f.first_port(s);
    for (std::uint32_t k = 0; k < f.ports_of(s).size(); ++k) {
      const NodeId peer = f.peer_node(PortId{idx(first) + k});
      if (peer == kNoNode || seen[idx(peer)]) continue;
      if (f.node(peer).type == NodeType::kCa) {
        seen[idx(peer)] = true;
        out.push_back(f.host_of(peer));
      } else if (f.node(peer).type == NodeType::kSwitch &&
                 t.level[idx(peer)] + 1 == t.level[idx(s)]) {
        seen[idx(peer)] = true;
        q.push_back(peer);
      }
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// The far end of a lost link, by name, and the hosts that lost it: the host itself when the
// far end was an HCA (it may be gone, powered off), else the hosts below the near end.
std::pair<std::string, std::string> lost_peer(const Fabric& f, PortId p) {
  const Port& port = f.port(p);
  const PortHealth& h = port.health;
  const auto peer = f.find_guid(h.was_linked_to);
  std::string name = h.was_linked_desc.empty() ? str::guid_hex(h.was_linked_to) : h.was_linked_desc;
  if (peer && f.node(*peer).type == NodeType::kSwitch) name = f.topology().switch_name[idx(*peer)];
  if (!peer && h.was_linked_type == NodeType::kSwitch && !h.was_linked_desc.empty()) {
    // "MF0;spine02:MQM8700/U1" -> spine02, as switch names are made.
    const auto semi = h.was_linked_desc.find(';');
    const auto colon = h.was_linked_desc.find(':', semi == std::string::npos ? 0 : semi);
    if (semi != std::string::npos && colon != std::string::npos)
      name = h.was_linked_desc.substr(semi + 1, colon - semi - 1);
  }
  std::string hosts;
  if (h.was_linked_type == NodeType::kCa) {
    hosts = std::string(split_ca_description(h.was_linked_desc).first);
  } else {
    std::vector<std::string> names;
    for (HostId x : hosts_below(f, port.node)) names.push_back(f.host(x).name);
    hosts = hostlist::compress(names);
  }
  return {name, hosts.empty() ? std::string("none") : hosts};
}

std::string show_text(const Fabric& f) {
  const Topology& t = f.topology();
  std::string o;
  auto line = [&](const std::string& s) { o += s + "\n"; };
  std::size_t routers = f.num_nodes() - f.switches().size() - f.cas().size();
  line("fabric: " + f.origin());
  line("  " + std::to_string(f.switches().size()) + " switches, " + std::to_string(f.cas().size()) +
       " HCAs" + (routers ? ", " + std::to_string(routers) + " routers" : "") + ", " +
       std::to_string(f.num_links()) + " links, " + std::to_string(f.num_hosts()) + " hosts");
  std::map<int, std::vector<NodeId>> by_level;
  for (NodeId s : f.switches()) by_level[t.level[idx(s)]].push_back(s);
  std::string lv = "  levels:";
  for (const auto& [l, sws] : by_level)
    lv +=
        " " +
        (l == 0 ? std::string("unreached") : tier_name(l, l).substr(0, tier_name(l, l).find('-'))) +
        " " + std::to_string(sws.size()) + (l == by_level.rbegin()->first ? "" : ",");
  line(lv);
  if (t.num_components > 1) line("  connected parts: " + std::to_string(t.num_components));
  line(std::string("  link layer: ") +
       (f.link_layer() == LinkLayer::kEthernet ? "Ethernet" : "InfiniBand"));
  if (const auto a = assumed_counts(f); a.rate + a.count > 0)
    line("  assumed (not in the source): " + assumed_text(a) +
         "; figures from them say \"assumed\"");
  line(std::string("  ") + (t.rail_optimised ? "rail-optimised: " + std::to_string(t.rails.size()) +
                                                   " rails, pods are rail groups"
                                             : "single-rail"));
  line("  pods: " + std::to_string(t.pods.size()));
  for (std::size_t p = 0; p < t.pods.size(); ++p) {
    const auto& pod = t.pods[p];
    line("    pod " + std::to_string(p + 1) + ": " + std::to_string(pod.leaves.size()) +
         " leaves " + switch_names(f, pod.leaves) +
         (pod.spines.empty() ? ""
                             : ", " + std::to_string(pod.spines.size()) + " spines " +
                                   switch_names(f, pod.spines)) +
         ", " + std::to_string(pod.hosts.size()) + " hosts " + names_of(f, pod.hosts));
  }
  for (const auto& r : t.rails)
    line("    rail " + r.device + ": leaves " + switch_names(f, r.leaves));

  print_domains(f, line);
  print_oversubscription(f, line);
  line("  link tiers (nominal = most common rate):");
  for (const auto& tier : t.tiers)
    line("    " + tier_name(tier.lower, tier.upper) + ": " + std::to_string(tier.links) +
         " links, nominal " + tier.nominal.to_string() + ", " + std::to_string(tier.degraded) +
         " degraded" +
         (tier.assumed ? ", " + std::to_string(tier.assumed) + " with assumed values" : ""));
  // Link health: degraded rates, error counters past their thresholds, lost links.
  const std::size_t problems =
      t.degraded_links.size() + t.unhealthy_links.size() + t.lost_links.size();
  auto behind = [&](const std::vector<HostId>& hs) {
    const std::string s = names_of(f, hs);
    return s.empty() ? std::string("none") : s;
  };
  auto link_text = [&](LinkId id) {
    const auto [lo, hi] = ends_low_first(f, f.link(id));
    return port_name(f, lo.second) + " <-> " + port_name(f, hi.second);
  };
  if (problems == 0) {
    line("  link health: no problems");
  } else {
    line("  link health: " + std::to_string(problems) + " problem(s)");
    for (const auto& d : t.degraded_links)
      line("    degraded " + link_text(d.link) + ": " + f.link(d.link).rate.to_string() +
           ", nominal " + d.nominal.to_string() + " (" + d.reason +
           "); hosts behind: " + behind(hosts_behind(f, d.link)));
    for (const auto& u : t.unhealthy_links) {
      std::string what;
      for (const auto& p : u.problems) what += (what.empty() ? "" : "; ") + p;
      // Counters that could not be read are not errors seen, but health unknown.
      const bool unread = std::all_of(
          u.problems.begin(), u.problems.end(),
          [](const std::string& p) { return p.ends_with("PortCounters could not be read"); });
      line(std::string(unread ? "    unknown " : "    errors ") + link_text(u.link) + ": " + what +
           "; hosts behind: " + behind(hosts_behind(f, u.link)));
    }
    for (PortId p : t.lost_links) {
      const Port& port = f.port(p);
      const auto [peer_name, hosts] = lost_peer(f, p);
      line("    down " + port_name(f, p) + ": linked to " + peer_name + "[" +
           std::to_string(port.health.was_linked_port) +
           "] in the previous discovery; hosts behind: " + hosts);
    }
  }
  if (!t.incomplete.empty()) {
    line("  INCOMPLETE: this fabric was published with parts missing:");
    for (const auto& what : t.incomplete) line("    " + what);
  }
  if (t.warnings.empty()) {
    line("  warnings: none");
  } else {
    line("  warnings: " + std::to_string(t.warnings.size()));
    for (const auto& w : t.warnings) line("    " + w);
  }
  return o;
}

std::string show_json(const Fabric& f) {
  using nlohmann::ordered_json;
  const Topology& t = f.topology();
  auto opt = [](std::uint32_t v) {
    return v == kNone ? ordered_json(nullptr) : ordered_json(v + 1);
  };
  ordered_json j;
  j["origin"] = f.origin();
  std::size_t routers = f.num_nodes() - f.switches().size() - f.cas().size();
  j["counts"] = {{"switches", f.switches().size()},
                 {"hcas", f.cas().size()},
                 {"routers", routers},
                 {"links", f.num_links()},
                 {"hosts", f.num_hosts()}};
  j["link_layer"] = to_string(f.link_layer());
  const auto assumed = assumed_counts(f);
  j["assumed"] = {{"rate_links", assumed.rate}, {"count_switch_pairs", assumed.count}};
  j["max_level"] = t.max_level;
  j["rail_optimised"] = t.rail_optimised;
  j["components"] = t.num_components;
  j["pods"] = ordered_json::array();
  for (std::size_t p = 0; p < t.pods.size(); ++p) {
    ordered_json pj;
    pj["pod"] = p + 1;
    pj["leaves"] = ordered_json::array();
    for (NodeId l : t.pods[p].leaves) pj["leaves"].push_back(t.switch_name[idx(l)]);
    pj["spines"] = ordered_json::array();
    for (NodeId s : t.pods[p].spines) pj["spines"].push_back(t.switch_name[idx(s)]);
    pj["hosts"] = names_of(f, t.pods[p].hosts);
    j["pods"].push_back(pj);
  }
  j["rails"] = ordered_json::array();
  for (const auto& r : t.rails) {
    ordered_json rj{{"device", r.device}, {"leaves", ordered_json::array()}};
    for (NodeId l : r.leaves) rj["leaves"].push_back(t.switch_name[idx(l)]);
    j["rails"].push_back(rj);
  }
  j["domains"] = ordered_json::array();
  for (const auto& d : f.domains()) {
    ordered_json leaves = ordered_json::array(), pods = ordered_json::array();
    for (NodeId l : domain_leaves(f, d)) leaves.push_back(t.switch_name[idx(l)]);
    for (auto p : domain_pods(f, d)) pods.push_back(p + 1);
    j["domains"].push_back(
        {{"name", d.name},
         {"hosts", names_of(f, d.hosts)},
         {"host_count", d.hosts.size()},
         {"gpus_per_host", d.gpus_per_host ? ordered_json(d.gpus_per_host) : ordered_json(nullptr)},
         {"leaves", leaves},
         {"pods", pods}});
  }
  j["switches"] = ordered_json::array();
  for (NodeId s : f.switches())
    j["switches"].push_back(
        {{"name", t.switch_name[idx(s)]},
         {"guid", str::guid_hex(f.node(s).guid)},
         {"desc", f.node(s).description},
         {"level", t.level[idx(s)]},
         {"pod", opt(t.node_pod[idx(s)])},
         {"rail", t.node_rail[idx(s)] == kNone ? ordered_json(nullptr)
                                               : ordered_json(t.node_rail[idx(s)])}});
  j["leaves"] = ordered_json::array();
  for (const auto& st : t.leaf_stats) {
    std::vector<HostId> hs;
    for (std::uint32_t h = 0; h < f.num_hosts(); ++h)
      if (std::find(t.host_leaves[h].begin(), t.host_leaves[h].end(), st.leaf) !=
          t.host_leaves[h].end())
        hs.push_back(HostId{h});
    j["leaves"].push_back(
        {{"name", t.switch_name[idx(st.leaf)]},
         {"hosts", names_of(f, hs)},
         {"host_count", st.hosts},
         {"down_links", st.down_links},
         {"up_links", st.up_links},
         {"down_gbps", st.down_gbps},
         {"up_gbps", st.up_gbps},
         {"oversubscription", std::isfinite(st.oversubscription) ? ordered_json(st.oversubscription)
                                                                 : ordered_json(nullptr)},
         {"assumed", st.assumed}});
  }
  j["upper_switches"] = ordered_json::array();
  for (const auto& st : t.switch_stats)
    j["upper_switches"].push_back({{"name", t.switch_name[idx(st.node)]},
                                   {"level", t.level[idx(st.node)]},
                                   {"down_links", st.down_links},
                                   {"up_links", st.up_links},
                                   {"down_gbps", st.down_gbps},
                                   {"up_gbps", st.up_gbps},
                                   {"oversubscription", st.oversubscription},
                                   {"assumed", st.assumed}});
  j["pod_uplinks"] = ordered_json::array();
  for (const auto& st : t.pod_stats)
    j["pod_uplinks"].push_back({{"pod", st.pod + 1},
                                {"host_count", t.pods[st.pod].hosts.size()},
                                {"host_links", st.host_links},
                                {"up_links", st.up_links},
                                {"host_gbps", st.host_gbps},
                                {"up_gbps", st.up_gbps},
                                {"oversubscription", st.oversubscription},
                                {"assumed", st.assumed}});
  j["hosts"] = ordered_json::array();
  for (std::uint32_t h = 0; h < f.num_hosts(); ++h) {
    ordered_json leaves = ordered_json::array();
    for (NodeId l : t.host_leaves[h]) leaves.push_back(t.switch_name[idx(l)]);
    const NodeId primary = t.host_leaf[h];
    j["hosts"].push_back(
        {{"name", f.host(HostId{h}).name},
         {"leaf",
          primary == kNoNode ? ordered_json(nullptr) : ordered_json(t.switch_name[idx(primary)])},
         {"leaves", leaves},
         {"pod", opt(t.host_pod[h])},
         {"domain", f.domain_of(HostId{h}) == kNone
                        ? ordered_json(nullptr)
                        : ordered_json(f.domains()[f.domain_of(HostId{h})].name)}});
  }
  j["hcas"] = ordered_json::array();
  for (NodeId ca : f.cas()) {
    const NodeId leaf = t.ca_leaf[idx(ca)];
    j["hcas"].push_back(
        {{"desc", f.node(ca).description},
         {"guid", str::guid_hex(f.node(ca).guid)},
         {"host", f.host(f.host_of(ca)).name},
         {"leaf", leaf == kNoNode ? ordered_json(nullptr) : ordered_json(t.switch_name[idx(leaf)])},
         {"leaf_desc",
          leaf == kNoNode ? ordered_json(nullptr) : ordered_json(f.node(leaf).description)}});
  }
  j["tiers"] = ordered_json::array();
  for (const auto& tier : t.tiers)
    j["tiers"].push_back({{"tier", tier_name(tier.lower, tier.upper)},
                          {"links", tier.links},
                          {"nominal", tier.nominal.to_string()},
                          {"degraded", tier.degraded},
                          {"assumed", tier.assumed > 0}});
  j["degraded_links"] = ordered_json::array();
  for (const auto& d : t.degraded_links) {
    const Link& l = f.link(d.link);
    const auto [lo, hi] = ends_low_first(f, l);
    j["degraded_links"].push_back({{"a", port_name(f, lo.second)},
                                   {"b", port_name(f, hi.second)},
                                   {"rate", l.rate.to_string()},
                                   {"nominal", d.nominal.to_string()},
                                   {"reason", d.reason},
                                   {"hosts_behind", names_of(f, hosts_behind(f, d.link))}});
  }
  j["unhealthy_links"] = ordered_json::array();
  for (const auto& u : t.unhealthy_links) {
    const auto [lo, hi] = ends_low_first(f, f.link(u.link));
    j["unhealthy_links"].push_back({{"a", port_name(f, lo.second)},
                                    {"b", port_name(f, hi.second)},
                                    {"problems", u.problems},
                                    {"hosts_behind", names_of(f, hosts_behind(f, u.link))}});
  }
  j["lost_links"] = ordered_json::array();
  for (PortId p : t.lost_links) {
    const Port& port = f.port(p);
    const auto [peer_name, hosts] = lost_peer(f, p);
    j["lost_links"].push_back({{"port", port_name(f, p)},
                               {"was_linked_to", peer_name},
                               {"was_linked_guid", str::guid_hex(port.health.was_linked_to)},
                               {"was_linked_port", port.health.was_linked_port},
                               {"hosts_behind", hosts}});
  }
  j["incomplete"] = t.incomplete;
  std::vector<std::string> split;
  for (HostId h : t.split_hosts) split.push_back(f.host(h).name);
  j["split_hosts"] = hostlist::compress(split);
  j["warnings"] = t.warnings;
  return j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace fabricplace::fabric
