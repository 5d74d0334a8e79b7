// SPDX-License-Identifier: GPL-2.0-or-later
// Classification: levels, names, leaves, pods, rails, oversubscription, degraded links and
// connected parts. Definitions are in docs/fabric-model.md; each step below says which.
#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <tuple>
#include <unordered_map>

#include "fabricplace/common/hostlist.hpp"
#include "fabricplace/common/limits.hpp"
#include "fabricplace/common/strings.hpp"
#include "fabricplace/fabric/builder.hpp"

namespace fabricplace::fabric {
namespace {

struct UnionFind {
  std::vector<std::uint32_t> parent;
  explicit UnionFind(std::size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0u); }
  std::uint32_t find(std::uint32_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void unite(std::uint32_t a, std::uint32_t b) {
    a = find(a);
    b = find(b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);  // root = smallest index
  }
};

bool slurm_safe(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == '.';
}

// "MF0;leaf01:MQM8700/U1" -> "leaf01"; other descriptions are sanitised whole.
std::string name_from_description(std::string_view desc) {
  std::string_view core = desc;
  if (const auto semi = core.find(';'); semi != std::string_view::npos) {
    core.remove_prefix(semi + 1);
    if (const auto colon = core.find(':'); colon != std::string_view::npos)
      core = core.substr(0, colon);
  }
  std::string out;
  for (char c : str::trim(core)) {
    if (slurm_safe(c))
      out += c;
    else if (!out.empty() && out.back() != '_')
      out += '_';
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out;
}

void name_switches(const Fabric& f, Topology& t) {
  std::unordered_map<std::string, int> count;
  for (NodeId s : f.switches()) {
    auto& name = t.switch_name[idx(s)];
    name = name_from_description(f.node(s).description);
    // Room for the suffixes below (at most "-" + 6 and "-" + 16 hex digits), so every name
    // written to topology.conf reads back (kMaxNameBytes). The name is ASCII: cut anywhere.
    if (name.size() > kMaxNameBytes - 24) name.resize(kMaxNameBytes - 24);
    if (name.empty()) name = "sw-" + str::guid_hex(f.node(s).guid).substr(2);
    ++count[name];
  }
  std::set<std::string> used;
  for (NodeId s : f.switches()) {
    auto& name = t.switch_name[idx(s)];
    if (count[name] > 1) {
      const std::string full = str::guid_hex(f.node(s).guid).substr(2);
      name += "-" + full.substr(full.size() - 6);
    }
    if (!used.insert(name).second) {
      name += "-" + str::guid_hex(f.node(s).guid).substr(2);
      used.insert(name);
    }
  }
}

// Switch-to-switch and switch-to-CA neighbours via links, per port.
template <class Fn>
void for_each_peer(const Fabric& f, NodeId n, Fn&& fn) {
  const PortId first = f.first_port(n);
  const auto ports = f.ports_of(n);
  for (std::uint32_t k = 0; k < ports.size(); ++k) {
    const PortId pid{idx(first) + k};
    if (ports[k].link == kNoLink) continue;
    fn(f.peer_node(pid), f.link(ports[k].link));
  }
}

}  // namespace

void classify(const Fabric& f, Topology& t) {
  const std::size_t n = f.num_nodes();
  t = Topology{};
  t.level.assign(n, 0);
  t.switch_name.assign(n, {});
  t.ca_leaf.assign(n, kNoNode);
  t.node_pod.assign(n, kNone);
  t.node_rail.assign(n, kNone);
  t.host_pod.assign(f.num_hosts(), kNone);
  t.host_leaves.assign(f.num_hosts(), {});
  t.host_leaf.assign(f.num_hosts(), kNoNode);
  auto is_switch = [&](NodeId x) { return f.node(x).type == NodeType::kSwitch; };
  auto is_ca = [&](NodeId x) { return f.node(x).type == NodeType::kCa; };

  name_switches(f, t);

  // 1. Levels: multi-source BFS through switches only, from the switches with a CA (leaves,
  //    level 1) and, in a second pass, also from hostless leaves (1b).
  auto bfs = [&](const std::vector<NodeId>& seeds) {
    std::fill(t.level.begin(), t.level.end(), std::uint8_t{0});
    std::deque<NodeId> queue;
    for (NodeId s : seeds)
      if (t.level[idx(s)] == 0) {
        t.level[idx(s)] = 1;
        queue.push_back(s);
      }
    while (!queue.empty()) {
      const NodeId s = queue.front();
      queue.pop_front();
      for_each_peer(f, s, [&](NodeId peer, const Link&) {
        if (is_switch(peer) && t.level[idx(peer)] == 0) {
          t.level[idx(peer)] = static_cast<std::uint8_t>(std::min(255, t.level[idx(s)] + 1));
          queue.push_back(peer);
        }
      });
    }
  };
  std::vector<NodeId> seeds;
  for (NodeId ca : f.cas())
    for_each_peer(f, ca, [&](NodeId peer, const Link&) {
      if (is_switch(peer)) seeds.push_back(peer);
    });
  std::sort(seeds.begin(), seeds.end());
  seeds.erase(std::unique(seeds.begin(), seeds.end()), seeds.end());
  bfs(seeds);

  // 1b. A leaf whose HCAs are all down (a rack powered off, a spare; a whole pod) is 3 or
  //     more hops from the nearest CA and would pass for a core. Cabling tells them apart:
  //     leaves use fixed ports for their uplinks (hosts on 1-20, spines on 21-40), while a
  //     core's or spine's links start at port 1. So a switch without CAs, 3+ hops out, whose
  //     linked ports are all uplink ports of some real leaf, is taken as a leaf without hosts.
  {
    std::set<std::vector<PortNum>> uplink_ports;  // per real leaf: its ports to switches
    auto switch_ports = [&](NodeId s) {
      std::vector<PortNum> v;
      const PortId first = f.first_port(s);
      const auto ports = f.ports_of(s);
      for (std::uint32_t k = 0; k < ports.size(); ++k) {
        const NodeId peer = f.peer_node(PortId{idx(first) + k});
        if (peer != kNoNode && is_switch(peer)) v.push_back(ports[k].rec.number);
      }
      return v;
    };
    for (NodeId s : seeds) uplink_ports.insert(switch_ports(s));
    std::vector<NodeId> hostless;
    for (NodeId s : f.switches()) {
      if (t.level[idx(s)] < 3) continue;
      const auto mine = switch_ports(s);
      if (mine.empty()) continue;
      const auto match =
          std::find_if(uplink_ports.begin(), uplink_ports.end(), [&](const auto& up) {
            return std::includes(up.begin(), up.end(), mine.begin(), mine.end());
          });
      if (match != uplink_ports.end()) hostless.push_back(s);
    }
    if (!hostless.empty()) {
      seeds.insert(seeds.end(), hostless.begin(), hostless.end());
      bfs(seeds);
      std::vector<std::string> names;
      for (NodeId s : hostless) names.push_back(t.switch_name[idx(s)]);
      t.warnings.push_back(std::to_string(names.size()) +
                           " switch(es) without any active HCA link are taken as leaves without "
                           "hosts (their links use leaf uplink ports): " +
                           hostlist::compress(names));
    }
  }
  for (NodeId s : f.switches()) {
    t.max_level = std::max(t.max_level, t.level[idx(s)]);
    if (t.level[idx(s)] == 1) t.leaves.push_back(s);
    if (t.level[idx(s)] == 0)
      t.warnings.push_back("switch " + t.switch_name[idx(s)] + " (" +
                           str::guid_hex(f.node(s).guid) + ") has no path to any HCA");
  }

  // 2. Leaves of CAs and hosts. A host's primary leaf is that of its first connected HCA.
  std::map<std::string, int> desc_count;
  for (NodeId ca : f.cas()) {
    ++desc_count[f.node(ca).description];
    bool linked = false;
    for_each_peer(f, ca, [&](NodeId peer, const Link&) {
      linked = true;
      if (is_switch(peer) && t.ca_leaf[idx(ca)] == kNoNode) t.ca_leaf[idx(ca)] = peer;
      const HostId h = f.host_of(ca);
      if (is_switch(peer)) t.host_leaves[idx(h)].push_back(peer);
    });
    if (!linked)
      t.warnings.push_back("HCA " + str::quoted(f.node(ca).description, kNameExcerpt) +
                           " has no active link");
  }
  for (const auto& [desc, c] : desc_count)
    if (c > 1)
      t.warnings.push_back(std::to_string(c) + " HCAs share the node description " +
                           str::quoted(desc, kNameExcerpt) + ": host grouping is ambiguous");
  std::size_t connected = 0, several_hcas = 0, several_leaves = 0;
  for (std::uint32_t h = 0; h < f.num_hosts(); ++h) {
    std::size_t linked_hcas = 0;
    for (NodeId ca : f.host(HostId{h}).hcas)
      if (t.ca_leaf[idx(ca)] != kNoNode) {
        if (linked_hcas++ == 0) t.host_leaf[h] = t.ca_leaf[idx(ca)];
      }
    auto& v = t.host_leaves[h];
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    connected += !v.empty();
    several_hcas += linked_hcas > 1;
    several_leaves += v.size() > 1;
    if (v.empty())
      t.warnings.push_back("host " + f.host(HostId{h}).name + " reaches no leaf switch");
  }
  // Rail-optimised: at least half the hosts have several connected HCAs, and most of those
  // reach a different leaf with each. Hosts that lost HCAs (absent from a dump) do not count
  // against it; a few dual-homed hosts (storage, login) on a single-rail fabric do not make
  // one: they are listed and placed under their first HCA's leaf.
  t.rail_optimised =
      connected > 0 && 2 * several_hcas >= connected && 2 * several_leaves > several_hcas;
  if (!t.rail_optimised && several_leaves > 0) {
    std::vector<std::string> names;
    for (std::uint32_t h = 0; h < f.num_hosts(); ++h)
      if (t.host_leaves[h].size() > 1) names.push_back(f.host(HostId{h}).name);
    t.warnings.push_back(std::to_string(several_leaves) +
                         " host(s) reach several leaves on a single-rail fabric (dual-homed); "
                         "each is placed under its first HCA's leaf: " +
                         hostlist::compress(names));
  }

  // 3. Pods. Trees: connected parts of the leaf+spine layer (levels 1 and 2).
  //    Rail-optimised: rail groups. Two leaves are in one group when at least half of the
  //    hosts of the smaller one reach both: every host of a scalable unit reaches all its
  //    rail leaves, even with a rail or two down, while a miscabled HCA links two units
  //    through a single host and must not merge them. A leaf whose hosts are all down is a
  //    group of its own (nothing tells which unit it belongs to).
  UnionFind uf(n);
  if (t.rail_optimised) {
    std::vector<std::uint32_t> leaf_hosts(n, 0);
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> shared;  // leaf pair -> hosts
    for (const auto& v : t.host_leaves) {
      for (NodeId l : v) ++leaf_hosts[idx(l)];
      for (std::size_t a = 0; a < v.size(); ++a)
        for (std::size_t b = a + 1; b < v.size(); ++b) ++shared[{idx(v[a]), idx(v[b])}];
    }
    for (const auto& [pair, both] : shared)
      if (2 * both >= std::min(leaf_hosts[pair.first], leaf_hosts[pair.second]))
        uf.unite(pair.first, pair.second);
  } else {
    for (const Link& l : f.links()) {
      const auto la = t.level[idx(l.node_a)], lb = t.level[idx(l.node_b)];
      if (la >= 1 && la <= 2 && lb >= 1 && lb <= 2) uf.unite(idx(l.node_a), idx(l.node_b));
    }
  }
  std::unordered_map<std::uint32_t, std::uint32_t> root_pod;
  for (NodeId leaf : t.leaves) {
    const auto root = uf.find(idx(leaf));
    auto [it, inserted] = root_pod.try_emplace(root, static_cast<std::uint32_t>(t.pods.size()));
    if (inserted) t.pods.emplace_back();
    t.pods[it->second].leaves.push_back(leaf);
    t.node_pod[idx(leaf)] = it->second;
  }
  // Upper levels take the pod their children share (children = neighbours one level down).
  std::vector<std::vector<NodeId>> by_level(t.max_level + 1);
  for (NodeId s : f.switches()) by_level[t.level[idx(s)]].push_back(s);
  auto inherit = [&](std::vector<std::uint32_t>& tag) {
    for (std::size_t lv = 2; lv < by_level.size(); ++lv)
      for (NodeId s : by_level[lv]) {
        std::uint32_t common = kNone;
        bool mixed = false, any = false;
        for_each_peer(f, s, [&](NodeId peer, const Link&) {
          if (!is_switch(peer) || std::size_t{t.level[idx(peer)]} + 1 != lv) return;
          const auto v = tag[idx(peer)];
          if (!any) {
            common = v;
            any = true;
          } else if (v != common) {
            mixed = true;
          }
        });
        tag[idx(s)] = (any && !mixed) ? common : kNone;
      }
  };
  inherit(t.node_pod);
  for (NodeId s : f.switches())
    if (t.level[idx(s)] >= 2 && t.node_pod[idx(s)] != kNone)
      t.pods[t.node_pod[idx(s)]].spines.push_back(s);
  std::vector<std::string> partial, miscabled, spanning;
  for (std::uint32_t h = 0; h < f.num_hosts(); ++h) {
    const auto& v = t.host_leaves[h];
    if (v.empty()) continue;
    // The pod owning most of this host's leaves (ties: its primary leaf's pod).
    std::map<std::uint32_t, int> votes;
    for (NodeId l : v) ++votes[t.node_pod[idx(l)]];
    std::uint32_t pod = t.node_pod[idx(t.host_leaf[h])];
    for (const auto& [p, c] : votes)
      if (c > votes[pod]) pod = p;
    if (votes.size() > 1 && !t.rail_optimised) {
      spanning.push_back(f.host(HostId{h}).name);
    } else if (t.rail_optimised) {
      const auto& pod_leaves = t.pods[pod].leaves;
      const bool inside =
          std::all_of(v.begin(), v.end(), [&](NodeId l) { return t.node_pod[idx(l)] == pod; });
      if (!inside)
        miscabled.push_back(f.host(HostId{h}).name);
      else if (v.size() < pod_leaves.size())
        partial.push_back(f.host(HostId{h}).name);
    }
    t.host_pod[h] = pod;
    t.pods[pod].hosts.push_back(HostId{h});
  }
  if (!miscabled.empty())
    t.warnings.push_back(std::to_string(miscabled.size()) +
                         " host(s) have HCAs on leaves of another rail group (miscabled?): " +
                         hostlist::compress(miscabled));
  if (!spanning.empty())
    t.warnings.push_back(std::to_string(spanning.size()) +
                         " host(s) reach leaves of several pods; each is placed in the pod of "
                         "most of its leaves: " +
                         hostlist::compress(spanning));
  if (!partial.empty())
    t.warnings.push_back(std::to_string(partial.size()) +
                         " host(s) reach only some of their rail group's leaves (a rail down?): " +
                         hostlist::compress(partial));

  // 4. Rails (rail-optimised only): rail k = device k in natural order of device names.
  if (t.rail_optimised) {
    std::set<std::string, decltype(&hostlist::natural_less)> devices(hostlist::natural_less);
    for (NodeId ca : f.cas())
      devices.insert(std::string(split_ca_description(f.node(ca).description).second));
    std::map<std::string, std::uint32_t> rail_of_device;
    for (const auto& d : devices) {
      rail_of_device.emplace(d, static_cast<std::uint32_t>(t.rails.size()));
      t.rails.push_back(Topology::Rail{d, {}});
    }
    for (NodeId leaf : t.leaves) {
      std::map<std::uint32_t, int> votes;
      for_each_peer(f, leaf, [&](NodeId peer, const Link&) {
        if (is_ca(peer))
          ++votes[rail_of_device.at(
              std::string(split_ca_description(f.node(peer).description).second))];
      });
      if (votes.empty()) continue;
      auto best = std::max_element(votes.begin(), votes.end(), [](const auto& a, const auto& b) {
        return a.second < b.second;  // ties: the lower rail (map order)
      });
      if (votes.size() > 1)
        t.warnings.push_back("leaf " + t.switch_name[idx(leaf)] + " mixes HCAs of " +
                             std::to_string(votes.size()) + " rails; taken as rail " +
                             t.rails[best->first].device);
      t.node_rail[idx(leaf)] = best->first;
      t.rails[best->first].leaves.push_back(leaf);
    }
    inherit(t.node_rail);
  }

  // 5. Oversubscription where bandwidth narrows going up: per leaf (host-facing : uplinks),
  //    per switch above the leaves (from the level below : uplinks) and per pod (its hosts'
  //    links : its links out to a higher level). A figure counting a link whose rate or
  //    count was assumed is assumed.
  for (const Link& l : f.links())
    if (l.rate.is_ethernet()) {
      t.link_layer = LinkLayer::kEthernet;
      break;
    }
  auto ratio = [](double down, double up) {
    return up > 0 ? down / up : std::numeric_limits<double>::infinity();
  };
  for (NodeId leaf : t.leaves) {
    Topology::LeafStats st{leaf};
    std::set<std::uint32_t> hosts;
    for_each_peer(f, leaf, [&](NodeId peer, const Link& l) {
      if (is_ca(peer)) {  // routers are neither hosts nor uplinks
        ++st.down_links;
        st.down_gbps += l.rate.gbps();
        st.assumed = st.assumed || l.assumed.any();
        hosts.insert(idx(f.host_of(peer)));
      } else if (is_switch(peer) && t.level[idx(peer)] > 1) {
        ++st.up_links;
        st.up_gbps += l.rate.gbps();
        st.assumed = st.assumed || l.assumed.any();
      }
    });
    st.hosts = static_cast<std::uint32_t>(hosts.size());
    st.oversubscription = ratio(st.down_gbps, st.up_gbps);
    t.leaf_stats.push_back(st);
  }
  for (std::size_t lv = 2; lv < by_level.size(); ++lv)
    for (NodeId s : by_level[lv]) {
      Topology::SwitchStats st{s};
      for_each_peer(f, s, [&](NodeId peer, const Link& l) {
        if (!is_switch(peer)) return;
        const std::size_t pl = t.level[idx(peer)];
        if (pl + 1 == lv) {
          ++st.down_links;
          st.down_gbps += l.rate.gbps();
        } else if (pl > lv) {
          ++st.up_links;
          st.up_gbps += l.rate.gbps();
        } else {
          return;
        }
        st.assumed = st.assumed || l.assumed.any();
      });
      if (st.up_links == 0 || st.down_links == 0) continue;  // the top, or reaches nothing below
      st.oversubscription = ratio(st.down_gbps, st.up_gbps);
      t.switch_stats.push_back(st);
    }
  {
    std::vector<Topology::PodStats> pods(t.pods.size());
    for (std::uint32_t p = 0; p < pods.size(); ++p) pods[p].pod = p;
    for (const Link& l : f.links()) {
      for (const auto& [x, y] : {std::pair(l.node_a, l.node_b), std::pair(l.node_b, l.node_a)}) {
        const auto p = t.node_pod[idx(x)];
        if (p == kNone || !is_switch(x)) continue;
        auto& st = pods[p];
        if (is_ca(y) && t.level[idx(x)] == 1) {
          ++st.host_links;
          st.host_gbps += l.rate.gbps();
        } else if (is_switch(y) && t.node_pod[idx(y)] != p && t.level[idx(y)] > t.level[idx(x)]) {
          ++st.up_links;
          st.up_gbps += l.rate.gbps();
        } else {
          continue;
        }
        st.assumed = st.assumed || l.assumed.any();
      }
    }
    for (auto& st : pods) {
      if (st.up_links == 0 || st.host_links == 0) continue;
      st.oversubscription = ratio(st.host_gbps, st.up_gbps);
      t.pod_stats.push_back(st);
    }
  }

  // 6. Degraded links: active width or speed below the tier's nominal rate, the most common
  //    (width, speed) of its links (ties: the faster), so the nominal is a rate links have.
  //    A rate the source only assumes (--link-speed where a topology.conf or tiers CSV states
  //    none) was never measured: it neither sets the nominal where a read rate exists nor
  //    counts as degraded.
  using RateKey = std::tuple<LinkWidth, LinkSpeed, std::uint32_t>;
  std::map<std::pair<int, int>, std::map<RateKey, int>> tally;
  // Routers get a tier of their own (pseudo-level kRouterTier), apart from host links.
  auto tier_level = [&](NodeId x) {
    return f.node(x).type == NodeType::kRouter ? int{Topology::kRouterTier} : int{t.level[idx(x)]};
  };
  auto tier_of = [&](const Link& l) {
    const int a = tier_level(l.node_a), b = tier_level(l.node_b);
    return std::pair(std::min(a, b), std::max(a, b));
  };
  std::map<std::pair<int, int>, std::map<RateKey, int>> assumed_tally;  // tiers with no read rate
  for (const Link& l : f.links()) {
    auto& rates = l.assumed.rate ? assumed_tally[tier_of(l)] : tally[tier_of(l)];
    if (l.rate.known()) ++rates[{l.rate.width, l.rate.speed, l.rate.ethernet_gbps}];
  }
  for (auto& [key, rates] : assumed_tally)
    if (tally[key].empty()) tally[key] = rates;
  auto mode = [](const std::map<RateKey, int>& m) {
    LinkRate best;
    int best_n = -1;
    for (const auto& [k, c] : m) {
      const LinkRate r{std::get<0>(k), std::get<1>(k), std::get<2>(k)};
      if (c > best_n || (c == best_n && r.gbps() >= best.gbps())) {
        best = r;
        best_n = c;
      }
    }
    return best;
  };
  std::map<std::pair<int, int>, std::size_t> tier_index;
  for (const auto& [key, tl] : tally) {
    tier_index[key] = t.tiers.size();
    t.tiers.push_back(Topology::Tier{static_cast<std::uint8_t>(key.first),
                                     static_cast<std::uint8_t>(key.second), mode(tl), 0, 0, 0});
  }
  for (std::uint32_t li = 0; li < f.num_links(); ++li) {
    const Link& l = f.link(LinkId{li});
    auto& tier = t.tiers[tier_index[tier_of(l)]];
    ++tier.links;
    tier.assumed += l.assumed.any();
    std::string reason;
    if (l.assumed.rate) continue;
    if (!l.rate.known()) {
      reason = "rate unknown (" + l.rate.to_string() + ")";
    } else if (l.rate.is_ethernet() || tier.nominal.is_ethernet()) {
      if (l.rate.gbps() < tier.nominal.gbps())
        reason = "rate " + l.rate.to_string() + " < " + tier.nominal.to_string();
    } else {
      if (l.rate.width < tier.nominal.width)
        reason = "width " + std::string(to_string(l.rate.width)) + " < " +
                 std::string(to_string(tier.nominal.width));
      if (l.rate.speed < tier.nominal.speed)
        reason += (reason.empty() ? "" : ", ") + std::string("speed ") +
                  std::string(to_string(l.rate.speed)) + " < " +
                  std::string(to_string(tier.nominal.speed));
    }
    if (reason.empty()) continue;
    ++tier.degraded;
    t.degraded_links.push_back(Topology::Degraded{LinkId{li}, tier.nominal, reason});
  }

  // 6b. Health read from the fabric: error counters past their thresholds, links lost since
  //     the previous discovery.
  for (std::uint32_t li = 0; li < f.num_links(); ++li) {
    const Link& l = f.link(LinkId{li});
    Topology::Unhealthy u{LinkId{li}, {}};
    for (PortId end : {l.a, l.b}) {
      const Port& p = f.port(end);
      const NodeRecord& owner = f.node(p.node);
      const std::string where =
          (owner.type == NodeType::kSwitch ? t.switch_name[idx(p.node)] : owner.description) + "[" +
          std::to_string(p.rec.number) + "]";
      for (const auto& problem : p.health.problems) u.problems.push_back(where + ": " + problem);
    }
    if (!u.problems.empty()) t.unhealthy_links.push_back(std::move(u));
  }
  // A lost cable is reported once, from its lower end (the hosts behind it are below that).
  auto lost_level = [&](NodeId x) {
    return std::pair(is_switch(x) ? int{t.level[idx(x)]} : 0, f.node(x).guid);
  };
  for (std::uint32_t pi = 0; pi < f.num_ports(); ++pi) {
    const Port& p = f.port(PortId{pi});
    if (p.link != kNoLink || p.health.was_linked_to == 0) continue;
    if (const auto peer = f.find_guid(p.health.was_linked_to)) {  // else: gone, report from here
      const auto peer_ports = f.ports_of(*peer);
      const bool peer_reports =
          std::any_of(peer_ports.begin(), peer_ports.end(), [&](const Port& q) {
            return q.rec.number == p.health.was_linked_port && q.link == kNoLink &&
                   q.health.was_linked_to == f.node(p.node).guid;
          });
      if (peer_reports && lost_level(*peer) < lost_level(p.node)) continue;
    }
    t.lost_links.push_back(PortId{pi});
  }

  // 7. Connected parts, and hosts whose HCAs reach an unusual set of them.
  UnionFind cc(n);
  for (const Link& l : f.links()) cc.unite(idx(l.node_a), idx(l.node_b));
  t.node_component.assign(n, kNone);
  std::unordered_map<std::uint32_t, std::uint32_t> comp_id;
  for (std::uint32_t i = 0; i < n; ++i) {
    auto [it, inserted] = comp_id.try_emplace(cc.find(i), t.num_components);
    if (inserted) ++t.num_components;
    t.node_component[i] = it->second;
  }
  std::map<std::vector<std::uint32_t>, std::pair<int, std::uint32_t>>
      sets;  // set -> (count, first host)
  std::vector<std::vector<std::uint32_t>> host_sets(f.num_hosts());
  for (std::uint32_t h = 0; h < f.num_hosts(); ++h) {
    auto& s = host_sets[h];
    for (NodeId ca : f.host(HostId{h}).hcas) s.push_back(t.node_component[idx(ca)]);
    std::sort(s.begin(), s.end());
    s.erase(std::unique(s.begin(), s.end()), s.end());
    auto [it, inserted] = sets.try_emplace(s, std::pair(0, h));
    ++it->second.first;
  }
  const std::vector<std::uint32_t>* usual = nullptr;
  std::pair<int, std::uint32_t> usual_key{-1, 0};
  for (const auto& [s, cnt] : sets)
    if (cnt.first > usual_key.first ||
        (cnt.first == usual_key.first && cnt.second < usual_key.second)) {
      usual = &s;
      usual_key = cnt;
    }
  for (std::uint32_t h = 0; h < f.num_hosts(); ++h)
    if (usual && host_sets[h] != *usual) t.split_hosts.push_back(HostId{h});
  if (!t.split_hosts.empty()) {
    std::vector<std::string> names;
    for (HostId h : t.split_hosts) names.push_back(f.host(h).name);
    t.warnings.push_back(std::to_string(names.size()) +
                         " host(s) reach a different set of fabric parts than most hosts: " +
                         hostlist::compress(names));
  }
}

}  // namespace fabricplace::fabric
