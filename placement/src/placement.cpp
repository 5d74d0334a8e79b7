#include "fabricplace/placement/placement.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>

#include "fabricplace/common/settings.hpp"
#include "fabricplace/common/strings.hpp"

namespace fabricplace::placement {
namespace {

using fabric::HostId;
using fabric::idx;
using fabric::kNone;
using fabric::NodeId;

struct WeightKey {
  const char* name;
  double Weights::*field;
};
constexpr WeightKey kWeightKeys[] = {
    {"leaves", &Weights::leaves},
    {"pods", &Weights::pods},
    {"ring_crossings", &Weights::ring_crossings},
    {"uplink", &Weights::uplink},
    {"leftover", &Weights::leftover},
    {"tp_split", &Weights::tp_split},
    {"unhealthy_host", &Weights::unhealthy_host},
    {"oversubscription", &Weights::oversubscription},
    {"degraded_uplink", &Weights::degraded_uplink},
    {"unhealthy_uplink", &Weights::unhealthy_uplink},
    {"lost_uplink", &Weights::lost_uplink},
};

std::string plural(std::uint32_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

// Per leaf switch: its uplinks that are degraded, unhealthy or lost.
struct UplinkFaults {
  std::uint32_t degraded = 0, unhealthy = 0, lost = 0;
};

std::vector<UplinkFaults> uplink_faults(const fabric::Fabric& f) {
  const auto& t = f.topology();
  std::vector<UplinkFaults> out(f.num_nodes());
  auto leaf_end = [&](fabric::LinkId id) -> NodeId {
    const auto& l = f.link(id);
    const auto la = t.level[idx(l.node_a)], lb = t.level[idx(l.node_b)];
    if (f.node(l.node_a).type != fabric::NodeType::kSwitch ||
        f.node(l.node_b).type != fabric::NodeType::kSwitch)
      return fabric::kNoNode;
    if (la == 1 && lb > 1) return l.node_a;
    if (lb == 1 && la > 1) return l.node_b;
    return fabric::kNoNode;
  };
  for (const auto& d : t.degraded_links)
    if (auto n = leaf_end(d.link); n != fabric::kNoNode) ++out[idx(n)].degraded;
  for (const auto& u : t.unhealthy_links)
    if (auto n = leaf_end(u.link); n != fabric::kNoNode) ++out[idx(n)].unhealthy;
  for (fabric::PortId p : t.lost_links) {
    const auto& port = f.port(p);
    if (t.level[idx(port.node)] == 1 && port.health.was_linked_type == fabric::NodeType::kSwitch)
      ++out[idx(port.node)].lost;
  }
  return out;
}

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

}  // namespace

Result<Weights> parse_weights(std::string_view text, const std::string& file) {
  Weights w;
  auto r = for_each_setting(
      text, file, "name = weight",
      [&](std::string_view name, std::string_view value, int line) -> Result<void> {
        const WeightKey* key = nullptr;
        for (const auto& k : kWeightKeys)
          if (name == k.name) key = &k;
        if (!key) {
          std::string all;
          for (const auto& k : kWeightKeys) all += (all.empty() ? "" : ", ") + std::string(k.name);
          return fail(ErrorCode::kSyntax,
                      "unknown weight " + str::quoted(name) + ", expected one of: " + all, file,
                      line);
        }
        double v = 0;
        const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
        if (ec != std::errc() || end != value.data() + value.size() || !(v >= 0) || std::isinf(v))
          return fail(ErrorCode::kSyntax,
                      str::excerpt(name, 40) + ": expected a non-negative number, got " +
                          str::quoted(value, 40),
                      file, line);
        w.*(key->field) = v;
        return {};
      });
  if (!r) return std::unexpected(r.error());
  return w;
}

Context prepare(const fabric::Fabric& f, const Weights& w) {
  const auto& t = f.topology();
  Context c;
  c.fabric = &f;
  c.weights = w;
  c.tree = fabric::slurm_tree(f);

  Blocks& b = c.blocks;
  b.of_host.assign(f.num_hosts(), kNone);
  for (const auto& s : c.tree.switches) {
    if (s.level != 1) continue;
    const auto k = static_cast<std::uint32_t>(b.size());
    b.name.push_back(s.name);
    b.hosts.push_back(s.hosts);
    b.leaves.push_back(s.members);
    std::uint32_t comp = kNone;
    for (NodeId l : s.members) comp = std::min(comp, t.node_component[idx(l)]);
    b.component.push_back(comp);
    // Pod: the spine group above the block in the Slurm tree (a ring between pods crosses
    // the tier above). Classification pods would make every rail group its own pod.
    b.pod.push_back(s.parent == kNone ? 0 : s.parent);
    for (HostId h : s.hosts) b.of_host[idx(h)] = k;
  }

  // Criterion 4: what a ring edge pays for crossing a block's uplinks.
  std::vector<std::uint32_t> stats_of(f.num_nodes(), kNone);
  for (std::uint32_t i = 0; i < t.leaves.size(); ++i) stats_of[idx(t.leaves[i])] = i;
  const auto faults = uplink_faults(f);
  for (std::size_t k = 0; k < b.size(); ++k) {
    double sum = 0, worst_os = 0;
    UplinkFaults total;
    bool isolated = false, assumed = false;
    for (NodeId l : b.leaves[k]) {
      const auto& st = t.leaf_stats[stats_of[idx(l)]];
      assumed |= st.assumed;
      const auto& fl = faults[idx(l)];
      if (st.up_links == 0 || std::isinf(st.oversubscription)) isolated = true;
      worst_os = std::max(worst_os, st.oversubscription);
      total.degraded += fl.degraded;
      total.unhealthy += fl.unhealthy;
      total.lost += fl.lost;
      if (!isolated)
        sum += w.oversubscription * std::max(0.0, st.oversubscription - 1) +
               w.degraded_uplink * fl.degraded + w.unhealthy_uplink * fl.unhealthy +
               w.lost_uplink * fl.lost;
    }
    // A rail group's ring traffic spreads evenly over its rails: the mean of its leaves.
    c.uplink.push_back(isolated ? kNoUplink : sum / static_cast<double>(b.leaves[k].size()));
    std::string why;
    auto add = [&](const std::string& s) { why += (why.empty() ? "" : ", ") + s; };
    if (isolated) add("no uplink");
    // A ratio from assumed link counts or rates (a tiers CSV or topology.conf without them)
    // is used as it is, and said to be assumed.
    if (!isolated && worst_os > 1)
      add(fmt(worst_os) + ":1 oversubscribed" + (assumed ? ", assumed" : ""));
    if (total.degraded) add(plural(total.degraded, "degraded uplink"));
    if (total.unhealthy) add(plural(total.unhealthy, "unhealthy uplink"));
    if (total.lost) add(plural(total.lost, "lost uplink"));
    c.uplink_why.push_back(why);
  }

  // Host links: every HCA link sound, none lost, none split off, every rail reached.
  c.healthy.assign(f.num_hosts(), 1);
  auto mark_link = [&](fabric::LinkId id) {
    const auto& l = f.link(id);
    for (NodeId n : {l.node_a, l.node_b})
      if (auto h = f.host_of(n); h != fabric::kNoHost) c.healthy[idx(h)] = 0;
  };
  for (const auto& d : t.degraded_links) mark_link(d.link);
  for (const auto& u : t.unhealthy_links) mark_link(u.link);
  for (fabric::PortId p : t.lost_links) {
    const auto& port = f.port(p);
    if (auto h = f.host_of(port.node); h != fabric::kNoHost) c.healthy[idx(h)] = 0;
  }
  for (HostId h : t.split_hosts) c.healthy[idx(h)] = 0;
  if (t.rail_optimised)
    for (std::uint32_t h = 0; h < f.num_hosts(); ++h)
      if (t.host_leaves[h].size() < t.rails.size()) c.healthy[h] = 0;
  return c;
}

std::vector<std::uint8_t> usable_hosts(const Context& c, const JobRequest& job,
                                       const NodeStates& states, bool healthy_only) {
  const std::size_t n = states.state.size();
  std::vector<std::uint8_t> ok(n);
  const auto* st = states.state.data();
  const auto* of = c.blocks.of_host.data();
  const auto* good = c.healthy.data();
  for (std::size_t h = 0; h < n; ++h)
    ok[h] = (st[h] == HostState::kFree) & (of[h] != kNone) & (!healthy_only | (good[h] != 0));
  for (HostId h : job.exclude) ok[idx(h)] = 0;
  return ok;
}

double score_of(const Weights& w, const Measures& m) {
  return w.leaves * m.leaves + w.pods * m.pods + w.ring_crossings * m.ring_inter_leaf +
         w.uplink * m.uplink_penalty + w.leftover * m.leftover + w.tp_split * m.tp_groups_split +
         w.unhealthy_host * m.unhealthy_hosts;
}

RingMeasures measure_ring(const Blocks& b, std::span<const HostId> ring, std::uint32_t group_nodes,
                          std::span<const double> uplink) {
  RingMeasures r;
  const std::size_t n = ring.size();
  const std::size_t g = std::max<std::uint32_t>(group_nodes, 1);
  auto block = [&](std::size_t i) { return b.of_host[idx(ring[i])]; };
  std::vector<char> used(b.size(), 0), pod_used;
  bool none_seen = false;
  for (std::size_t i = 0; i < n; ++i) {
    const auto k = block(i);
    if (k == kNone) {
      if (!none_seen) r.blocks.push_back(kNone);
      none_seen = true;
      continue;
    }
    if (used[k]) continue;
    used[k] = 1;
    ++r.leaves;
    r.blocks.push_back(k);
    if (b.pod[k] != kNone) {
      if (pod_used.size() <= b.pod[k]) pod_used.resize(b.pod[k] + 1, 0);
      if (!pod_used[b.pod[k]]) ++r.pods, pod_used[b.pod[k]] = 1;
    }
  }
  for (std::size_t i = 0; n > 1 && i < n; ++i) {
    const auto x = block(i), y = block((i + 1) % n);
    if (x == y) continue;
    ++r.inter_leaf;
    if (x == kNone || y == kNone) continue;
    if (b.pod[x] != b.pod[y]) ++r.inter_pod;
    if (!uplink.empty()) r.uplink_penalty += uplink[x] + uplink[y];
  }
  for (std::size_t i = 0; i < n; i += g)
    for (std::size_t j = i + 1; j < std::min(n, i + g); ++j)
      if (block(j) != block(i)) {
        ++r.tp_groups_split;
        break;
      }
  return r;
}

Placement evaluate(const Context& c, const JobRequest& job, const NodeStates& states,
                   std::vector<HostId> ranked, std::string policy) {
  const Blocks& b = c.blocks;
  Placement p;
  p.policy = std::move(policy);
  p.feasible = true;
  p.hosts = std::move(ranked);
  const std::size_t n = p.hosts.size();
  const std::uint32_t g = job.group_nodes();
  Measures& m = p.measures;

  const auto ring = measure_ring(b, p.hosts, g, c.uplink);
  m.leaves = ring.leaves;
  m.pods = ring.pods;
  m.ring_inter_leaf = ring.inter_leaf;
  m.ring_inter_pod = ring.inter_pod;
  m.tp_groups_split = ring.tp_groups_split;
  m.uplink_penalty = ring.uplink_penalty;
  std::vector<char> used(b.size(), 0);
  for (const auto k : ring.blocks)
    if (k != kNone) {
      used[k] = 1;
      p.leaves.push_back(b.name[k]);
    }
  for (HostId h : p.hosts)
    if (b.of_host[idx(h)] != kNone && !c.healthy[idx(h)]) ++m.unhealthy_hosts;
  // TP groups: g consecutive hosts; a group smaller than a node is listed once per group.
  const std::uint32_t per_host = job.groups_per_host();
  for (std::size_t i = 0; i < n; i += g) {
    std::vector<HostId> group(p.hosts.begin() + static_cast<long>(i),
                              p.hosts.begin() + static_cast<long>(std::min<std::size_t>(n, i + g)));
    for (std::uint32_t r = 1; r < per_host; ++r) p.tp_groups.push_back(group);
    p.tp_groups.push_back(std::move(group));
  }
  std::uint32_t free_in_used = 0;
  for (std::size_t k = 0; k < b.size(); ++k)
    if (used[k])
      for (HostId h : b.hosts[k])
        if (states.free(h)) ++free_in_used;
  std::uint32_t taken = 0;
  for (HostId h : p.hosts)
    if (b.of_host[idx(h)] != kNone && states.free(h)) ++taken;
  m.leftover = free_in_used - taken;
  p.score = score_of(c.weights, m);
  return p;
}

std::vector<HostId> ring_order(const Blocks& b, std::vector<HostId> hosts) {
  auto key = [&](HostId h) {
    const auto k = b.of_host[idx(h)];
    return std::tuple(k == kNone ? kNone : b.pod[k], k, idx(h));
  };
  std::sort(hosts.begin(), hosts.end(), [&](HostId x, HostId y) { return key(x) < key(y); });
  return hosts;
}

}  // namespace fabricplace::placement
