// SPDX-License-Identifier: GPL-2.0-or-later
#include "fabricplace/fabric/slurm_tree.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>
#include <set>

#include "fabricplace/common/hostlist.hpp"

namespace fabricplace::fabric {
namespace {

std::string level_word(int level) {
  return level == 1   ? "leaf"
         : level == 2 ? "spine"
         : level == 3 ? "core"
                      : "level" + std::to_string(level);
}

// Longest common prefix, cut back to its last separator ("su01-r0-leaf", "su01-r1-leaf"
// -> "su01").
std::string common_stem(const std::vector<std::string>& names) {
  if (names.empty()) return {};
  std::string p = names.front();
  for (const auto& n : names) {
    std::size_t k = 0;
    while (k < p.size() && k < n.size() && p[k] == n[k]) ++k;
    p.resize(k);
  }
  const auto cut = p.find_last_of("-_.");
  if (cut == std::string::npos) return {};
  p.resize(cut);
  return p;
}

std::string group_name(const std::vector<std::string>& members, int level, bool virtual_leaf,
                       std::size_t ordinal, const std::set<std::string>& used) {
  std::vector<std::string> candidates;
  if (members.size() == 1) {
    candidates.push_back(members.front());
  } else {
    if (!virtual_leaf) {
      // "spine[01-04]" -> "spine01-04": a hostlist would be split by Slurm's parser.
      std::string c;
      for (char ch : hostlist::compress(members))
        if (ch == ',')
          c += '_';
        else if (ch != '[' && ch != ']')
          c += ch;
      if (c.size() <= 40) candidates.push_back(c);
    }
    if (auto stem = common_stem(members); !stem.empty()) candidates.push_back(stem);
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%02zu", ordinal + 1);
  candidates.push_back((virtual_leaf ? std::string("railgroup") : level_word(level) + "group") +
                       buf);
  for (const auto& c : candidates)
    if (!used.contains(c)) return c;
  std::string last = candidates.back();
  for (int k = 2;; ++k)
    if (!used.contains(last + "_" + std::to_string(k))) return last + "_" + std::to_string(k);
}

// LinkSpeed= of a Slurm switch: the rate of every link below its members (to hosts, or to
// the members of its child switches), in Gb/s, when they share one rate that was read and
// that fabricplace reads back from a number (a 4x InfiniBand rate). Slurm reads the value
// as a number and does not use it.
std::optional<long> link_speed(const Fabric& f, const SlurmSwitch& s) {
  const Topology& t = f.topology();
  std::optional<LinkRate> rate;
  for (NodeId m : s.members) {
    const PortId first = f.first_port(m);
    const auto ports = f.ports_of(m);
    for (std::uint32_t k = 0; k < ports.size(); ++k) {
      const NodeId peer = f.peer_node(PortId{idx(first) + k});
      if (peer == kNoNode) continue;
      const bool below = s.level == 1 ? f.node(peer).type == NodeType::kCa
                                      : f.node(peer).type == NodeType::kSwitch &&
                                            t.level[idx(peer)] + 1 == t.level[idx(m)];
      if (!below) continue;
      const Link& l = f.link(ports[k].link);
      if (l.assumed.rate || (rate && *rate != l.rate)) return std::nullopt;
      rate = l.rate;
    }
  }
  if (!rate || rate->is_ethernet() || rate->width != LinkWidth::k4x || !rate->known())
    return std::nullopt;
  return std::lround(rate->gbps());
}

}  // namespace

SlurmTree slurm_tree(const Fabric& f) {
  const Topology& t = f.topology();
  SlurmTree tree;
  tree.virtual_leaves = t.rail_optimised;
  std::set<std::string> used;
  std::vector<std::uint32_t> group_of(f.num_nodes(), kNone);

  // Level 1. Leaves without hosts are left out: Slurm has nothing to place under them.
  std::vector<std::string> empty;
  if (t.rail_optimised) {
    for (std::size_t p = 0; p < t.pods.size(); ++p) {
      const auto& pod = t.pods[p];
      if (pod.hosts.empty()) {
        for (NodeId l : pod.leaves) empty.push_back(t.switch_name[idx(l)]);
        continue;
      }
      SlurmSwitch s;
      s.level = 1;
      s.members = pod.leaves;
      s.hosts = pod.hosts;
      std::vector<std::string> names;
      for (NodeId l : pod.leaves) names.push_back(t.switch_name[idx(l)]);
      s.name = group_name(names, 1, true, p, used);
      used.insert(s.name);
      for (NodeId l : pod.leaves)
        group_of[idx(l)] = static_cast<std::uint32_t>(tree.switches.size());
      tree.switches.push_back(std::move(s));
    }
  } else {
    // A dual-homed host sits under its first HCA's leaf only: Slurm keeps one.
    std::vector<std::vector<HostId>> hosts_of(f.num_nodes());
    for (std::uint32_t h = 0; h < f.num_hosts(); ++h)
      if (t.host_leaf[h] != kNoNode) hosts_of[idx(t.host_leaf[h])].push_back(HostId{h});
    for (NodeId l : t.leaves) {
      if (hosts_of[idx(l)].empty()) {
        empty.push_back(t.switch_name[idx(l)]);
        continue;
      }
      SlurmSwitch s;
      s.level = 1;
      s.members = {l};
      s.hosts = hosts_of[idx(l)];
      s.name = t.switch_name[idx(l)];
      used.insert(s.name);
      group_of[idx(l)] = static_cast<std::uint32_t>(tree.switches.size());
      tree.switches.push_back(std::move(s));
    }
  }

  // Upper levels: switches of one level that share a child Slurm switch are merged.
  for (int level = 2; level <= t.max_level; ++level) {
    std::vector<NodeId> at;
    for (NodeId s : f.switches())
      if (t.level[idx(s)] == level) at.push_back(s);
    std::vector<std::vector<std::uint32_t>> kids(at.size());
    std::map<std::uint32_t, std::size_t> first_parent;  // child group -> first switch index in `at`
    std::vector<std::size_t> uf(at.size());
    std::iota(uf.begin(), uf.end(), 0);
    auto find = [&](std::size_t x) {
      while (uf[x] != x) x = uf[x] = uf[uf[x]];
      return x;
    };
    for (std::size_t i = 0; i < at.size(); ++i) {
      const PortId first = f.first_port(at[i]);
      const auto ports = f.ports_of(at[i]);
      for (std::uint32_t k = 0; k < ports.size(); ++k) {
        const NodeId peer = f.peer_node(PortId{idx(first) + k});
        if (peer == kNoNode || f.node(peer).type != NodeType::kSwitch) continue;
        if (t.level[idx(peer)] + 1 != level || group_of[idx(peer)] == kNone) continue;
        const auto g = group_of[idx(peer)];
        kids[i].push_back(g);
        auto [it, inserted] = first_parent.try_emplace(g, i);
        if (!inserted) {
          const auto a = find(i), b = find(it->second);
          if (a != b) uf[std::max(a, b)] = std::min(a, b);
        }
      }
    }
    std::map<std::size_t, std::uint32_t> slurm_of_root;
    std::size_t ordinal = 0;
    for (std::size_t i = 0; i < at.size(); ++i) {
      if (kids[i].empty()) continue;  // reaches nothing below (warned by classification)
      const auto root = find(i);
      auto [it, inserted] =
          slurm_of_root.try_emplace(root, static_cast<std::uint32_t>(tree.switches.size()));
      if (inserted) {
        SlurmSwitch s;
        s.level = static_cast<std::uint8_t>(level);
        tree.switches.push_back(std::move(s));
      }
      auto& s = tree.switches[it->second];
      s.members.push_back(at[i]);
      s.children.insert(s.children.end(), kids[i].begin(), kids[i].end());
      group_of[idx(at[i])] = it->second;
    }
    for (const auto& [root, si] : slurm_of_root) {
      (void)root;
      auto& s = tree.switches[si];
      std::sort(s.children.begin(), s.children.end());
      s.children.erase(std::unique(s.children.begin(), s.children.end()), s.children.end());
      for (auto c : s.children) tree.switches[c].parent = si;
    }
    // Names in topology.conf order.
    for (auto& s : tree.switches) {
      if (s.level != level) continue;
      std::vector<std::string> names;
      for (NodeId m : s.members) names.push_back(t.switch_name[idx(m)]);
      s.name = group_name(names, level, false, ordinal++, used);
      used.insert(s.name);
    }
  }

  if (!empty.empty())
    tree.warnings.push_back("leaves without hosts are left out: " + hostlist::compress(empty));
  std::vector<std::string> orphans;
  std::vector<bool> placed(f.num_hosts(), false);
  for (const auto& s : tree.switches)
    for (HostId h : s.hosts) placed[idx(h)] = true;
  for (std::uint32_t h = 0; h < f.num_hosts(); ++h)
    if (!placed[h]) orphans.push_back(f.host(HostId{h}).name);
  if (!orphans.empty())
    tree.warnings.push_back("hosts under no leaf switch are left out of the topology: " +
                            hostlist::compress(orphans));
  std::size_t roots = 0;
  for (const auto& s : tree.switches) roots += s.parent == kNone;
  if (roots > 1)
    tree.warnings.push_back(std::to_string(roots) +
                            " top-level switches: Slurm cannot place a job across them");
  return tree;
}

Result<void> check_slurm_topology(const SlurmTree& tree) {
  for (const auto& s : tree.switches)
    if (s.level == 1 && !s.hosts.empty()) return {};
  return fail(ErrorCode::kUnsupported,
              "no host is under a leaf switch: Slurm's topology would have no switch and no "
              "block, leaving every node outside it (slurmctld 25.11 does not start on such a "
              "file); nothing written");
}

std::string to_slurm_topology(const Fabric& f, const SlurmTree& tree, bool with_link_speed) {
  std::string out;
  out += "# Slurm topology.conf (TopologyPlugin=topology/tree), written by fabricplace\n";
  out += "# from: " + f.origin() + "\n";
  out += "# Slurm keeps one parent per switch: parallel switches sharing children are one\n";
  if (with_link_speed) {
    out += "# Slurm switch (members listed in the comment above it). LinkSpeed= (unused by\n";
    out += "# Slurm): the Gb/s of every link below the switch, where they share a 4x InfiniBand\n";
    out += "# rate (200 = 4xHDR); fabricplace reads it back.\n";
  } else {
    out += "# Slurm switch (members listed in the comment above it). No LinkSpeed= (Slurm does\n";
    out += "# not use it): link rates and health are in fabric.json, so they never rewrite this.\n";
  }
  if (tree.virtual_leaves)
    out += "# Rail-optimised fabric: one virtual leaf per rail group (scalable unit).\n";
  for (const auto& m : f.topology().incomplete)
    out += "# WARNING: INCOMPLETE fabric (a partial discovery), so this file lacks: " + m + "\n";
  for (const auto& w : tree.warnings) out += "# warning: " + w + "\n";
  int last_level = 0;
  for (const auto& s : tree.switches) {
    if (s.level != last_level) {
      out += "\n# level " + std::to_string(s.level) + " (" + level_word(s.level) +
             (s.level == 1 && tree.virtual_leaves ? ", virtual" : "") + ")\n";
      last_level = s.level;
    }
    if (s.members.size() > 1) {
      std::vector<std::string> names;
      for (NodeId m : s.members) names.push_back(f.topology().switch_name[idx(m)]);
      out += "# " + s.name + " = " + hostlist::compress(names) + "\n";
    }
    out += "SwitchName=" + s.name;
    if (!s.hosts.empty()) {
      std::vector<std::string> names;
      for (HostId h : s.hosts) names.push_back(f.host(h).name);
      out += " Nodes=" + hostlist::compress(names);
    }
    if (!s.children.empty()) {
      std::vector<std::string> names;
      for (auto c : s.children) names.push_back(tree.switches[c].name);
      out += " Switches=" + hostlist::compress(names);
    }
    if (const auto gbps = with_link_speed ? link_speed(f, s) : std::nullopt)
      out += " LinkSpeed=" + std::to_string(*gbps);
    out += "\n";
  }
  return out;
}

std::string to_slurm_features(const Fabric& f, const SlurmTree& tree) {
  std::string out;
  out += "# Slurm node features, one line per leaf, written by fabricplace\n";
  out += "# from: " + f.origin() + "\n";
  out += "# Each host gets its leaf's name and, above it, the names of its Slurm switches up to\n";
  out += "# (not including) the root, so `-C leaf01` or `-C [leaf01|leaf02]` keeps a job\n";
  out += "# inside one leaf. Add Features= to these NodeName lines in slurm.conf, or apply live:\n";
  out += "#   scontrol update NodeName=NODES AvailableFeatures=F ActiveFeatures=F\n";
  if (f.has_domains())
    out +=
        "# A host in an NVLink domain also gets the domain's name, last (`-C nvl01`): one\n"
        "# line per leaf and domain.\n";
  for (const auto& s : tree.switches) {
    if (s.level != 1 || s.hosts.empty()) continue;
    std::string features = s.name;
    for (auto p = s.parent; p != kNone && tree.switches[p].parent != kNone;
         p = tree.switches[p].parent)
      features += "," + tree.switches[p].name;
    // The leaf's hosts by domain (or none), in the order each first appears among them.
    std::vector<std::pair<std::uint32_t, std::vector<std::string>>> groups;
    for (HostId h : s.hosts) {
      const auto d = f.domain_of(h);
      auto it = std::find_if(groups.begin(), groups.end(), [&](auto& g) { return g.first == d; });
      if (it == groups.end()) it = groups.insert(groups.end(), {d, {}});
      it->second.push_back(f.host(h).name);
    }
    for (const auto& [d, names] : groups)
      out += "NodeName=" + hostlist::compress(names) + " Features=" + features +
             (d == kNone ? std::string() : "," + f.domains()[d].name) + "\n";
  }
  return out;
}

BlockKind block_kind(const Fabric& fabric, const SlurmTree& tree) {
  if (fabric.has_domains()) return BlockKind::kDomain;
  return tree.virtual_leaves ? BlockKind::kRailGroup : BlockKind::kLeaf;
}

std::string_view block_noun(BlockKind k, bool plural) {
  switch (k) {
    case BlockKind::kLeaf:
      return plural ? "leaves" : "leaf";
    case BlockKind::kRailGroup:
      return plural ? "rail groups" : "rail group";
    case BlockKind::kDomain:
      return plural ? "NVLink domains" : "NVLink domain";
  }
  return plural ? "blocks" : "block";
}

std::string_view block_tag(BlockKind k) {
  switch (k) {
    case BlockKind::kLeaf:
      return "leaf";
    case BlockKind::kRailGroup:
      return "rail-group";
    case BlockKind::kDomain:
      return "domain";
  }
  return "block";
}

std::optional<BlockKind> parse_block_tag(std::string_view tag) {
  for (auto k : {BlockKind::kLeaf, BlockKind::kRailGroup, BlockKind::kDomain})
    if (block_tag(k) == tag) return k;
  return std::nullopt;
}

}  // namespace fabricplace::fabric
