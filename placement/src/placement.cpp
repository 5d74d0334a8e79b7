// SPDX-License-Identifier: GPL-2.0-or-later
#include "fabricplace/placement/placement.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <numeric>
#include <unordered_map>
#include <utility>

#include "fabricplace/common/settings.hpp"
#include "fabricplace/common/strings.hpp"

namespace fabricplace::placement {
namespace {

using fabric::HostId;
using fabric::idx;
using fabric::kNone;
using fabric::NodeId;
using fabric::PortId;

struct WeightKey {
  const char* name;
  double Weights::*field;
};
constexpr WeightKey kWeightKeys[] = {
    {"slowdown", &Weights::slowdown},
    {"contention", &Weights::contention},
    {"leaves", &Weights::leaves},
    {"pods", &Weights::pods},
    {"ring_crossings", &Weights::ring_crossings},
    {"leftover", &Weights::leftover},
    {"fresh_block", &Weights::fresh_block},
    {"tp_split", &Weights::tp_split},
    {"unhealthy_capacity", &Weights::unhealthy_capacity},
};
// Weights of the count-based score before issue #14, and the baselines' penalty per host on
// a bad host link: links now enter through their capacity.
constexpr const char* kRetired[] = {"uplink",           "oversubscription", "degraded_uplink",
                                    "unhealthy_uplink", "lost_uplink",      "unhealthy_host"};

std::string plural(std::uint32_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

// Per leaf switch: its uplinks that are degraded, unhealthy or lost.
struct UplinkFaults {
  std::uint32_t degraded = 0, unhealthy = 0, lost = 0;
};

// The leaf whose uplink a lost link (Topology::lost_links, one port of it) was: the port's
// own switch when it is a leaf that was linked to a switch, or, listed from the upper end,
// the leaf it was linked to; kNoNode when it was no leaf uplink.
NodeId lost_uplink_leaf(const fabric::Fabric& f, fabric::PortId p) {
  const auto& t = f.topology();
  const auto& port = f.port(p);
  if (f.node(port.node).type != fabric::NodeType::kSwitch ||
      port.health.was_linked_type != fabric::NodeType::kSwitch)
    return fabric::kNoNode;
  const auto level = t.level[idx(port.node)];
  if (level == 1) return port.node;
  if (level > 1)
    if (const auto peer = f.find_guid(port.health.was_linked_to); peer && t.level[idx(*peer)] == 1)
      return *peer;
  return fabric::kNoNode;
}

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
  for (fabric::PortId p : t.lost_links)
    if (const auto leaf = lost_uplink_leaf(f, p); leaf != fabric::kNoNode) ++out[idx(leaf)].lost;
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
        for (const char* retired : kRetired)
          if (name == retired)
            return fail(ErrorCode::kSyntax,
                        std::string(retired) +
                            " is no longer a weight: links enter the objective through their "
                            "capacity (rate as read, unhealthy_capacity for links past their "
                            "error thresholds; docs/placement.md); remove the line",
                        file, line);
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
        if (key->field == &Weights::unhealthy_capacity && !(v > 0 && v <= 1))
          return fail(ErrorCode::kSyntax,
                      "unhealthy_capacity: expected a fraction of the link's rate, more than 0 "
                      "and at most 1, got " +
                          str::quoted(value, 40),
                      file, line);
        w.*(key->field) = v;
        return {};
      });
  if (!r) return std::unexpected(r.error());
  return w;
}

namespace {

// On a fabric with NVLink domains the unit a TP (EP) group must not leave is the domain, not
// the leaf: the blocks become the domains (docs/placement.md, "NVLink domains"). A domain's
// block has the hosts of the domain that are in some leaf block, leaf by leaf in the leaf
// blocks' order (so a ring through it is leaf-contiguous), the leaves, uplinks and faults
// of every leaf block it touches, and the pod and tier-2 group of its first one; a block
// that touches a leaf block without uplinks has none (its hosts there could not send out).
// A host in no domain (a tray the fabric manager has not registered, a node without
// multi-node NVLink) is a block of its own, under its name: its NVLink ends at the node, so
// no group that spans hosts may use it, while a one-node job may. Blocks come in the order
// their first host appears, leaf block by leaf block.
void by_domain(const fabric::Fabric& f, Context& c) {
  const Blocks leaf = std::move(c.blocks);
  const auto up = std::move(c.block_up), down = std::move(c.block_down);
  const auto tier2 = std::move(c.block_tier2);
  const auto why = std::move(c.uplink_why);
  const auto faults = std::move(c.uplink_faults);
  Blocks& b = c.blocks;
  b = Blocks{};
  b.of_host.assign(f.num_hosts(), kNone);
  std::vector<std::vector<std::uint32_t>> under;  // per block: its leaf blocks, in order
  std::vector<std::uint32_t> of_domain(f.domains().size(), kNone);
  for (std::uint32_t k = 0; k < leaf.size(); ++k) {
    for (HostId h : leaf.hosts[k]) {
      const auto d = f.domain_of(h);
      std::uint32_t alone = kNone;
      std::uint32_t& nb = d == kNone ? alone : of_domain[d];
      if (nb == kNone) {
        nb = static_cast<std::uint32_t>(b.size());
        b.name.push_back(d == kNone ? f.host(h).name : f.domains()[d].name);
        b.hosts.emplace_back();
        b.pod.push_back(leaf.pod[k]);
        b.component.push_back(leaf.component[k]);
        under.emplace_back();
      }
      b.hosts[nb].push_back(h);
      b.of_host[idx(h)] = nb;
      if (under[nb].empty() || under[nb].back() != k) under[nb].push_back(k);
    }
  }
  const std::size_t n = b.size();
  b.leaves.resize(n);
  c.block_up.assign(n, {});
  c.block_down.assign(n, {});
  c.block_tier2.assign(n, kNone);
  c.uplink_why.assign(n, {});
  c.uplink_faults.assign(n, 0);
  for (std::size_t k = 0; k < n; ++k) {
    bool isolated = false;
    for (auto lk : under[k]) {
      b.leaves[k].insert(b.leaves[k].end(), leaf.leaves[lk].begin(), leaf.leaves[lk].end());
      b.component[k] = std::min(b.component[k], leaf.component[lk]);
      isolated = isolated || up[lk].empty();
      c.block_up[k].insert(c.block_up[k].end(), up[lk].begin(), up[lk].end());
      c.block_down[k].insert(c.block_down[k].end(), down[lk].begin(), down[lk].end());
      c.uplink_faults[k] += faults[lk];
      if (!why[lk].empty())
        c.uplink_why[k] += (c.uplink_why[k].empty() ? "" : "; ") +
                           (under[k].size() > 1 ? leaf.name[lk] + ": " : std::string()) + why[lk];
    }
    c.block_tier2[k] = tier2[under[k].front()];
    if (isolated) {
      c.block_up[k].clear();
      c.block_down[k].clear();
    }
  }
  c.link_block.assign(c.link_block.size(), kNone);
  for (std::uint32_t k = static_cast<std::uint32_t>(n); k-- > 0;)  // the first block wins
    for (const auto* v : {&c.block_up[k], &c.block_down[k]})
      for (auto d : *v) c.link_block[d] = k;
}

}  // namespace

Context prepare(const fabric::Fabric& f, const Weights& w, const routes::Model* routes) {
  const auto& t = f.topology();
  Context c;
  c.fabric = &f;
  c.weights = w;
  c.routes = routes;
  c.capacity = link_capacity(f, w.unhealthy_capacity);
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

  // Uplinks of each block (ring traffic between blocks crosses them), and of each pod to
  // the tier above it.
  const auto is_switch = [&](NodeId n) { return f.node(n).type == fabric::NodeType::kSwitch; };
  c.block_up.resize(b.size());
  c.block_down.resize(b.size());
  c.block_tier2.assign(b.size(), kNone);
  for (std::size_t k = 0; k < b.size(); ++k)
    for (NodeId l : b.leaves[k])
      for (const auto& port : f.ports_of(l)) {
        if (port.link == fabric::kNoLink) continue;
        const PortId pid{static_cast<std::uint32_t>(&port - f.ports().data())};
        const NodeId peer = f.peer_node(pid);
        if (!is_switch(peer) || t.level[idx(peer)] <= t.level[idx(l)]) continue;
        const auto d = routes::dir_link(f, pid);
        c.block_up[k].push_back(d);
        c.block_down[k].push_back(d ^ 1u);
      }
  std::vector<std::uint32_t> tier2_of_pod(t.pods.size(), kNone);
  for (std::uint32_t pod = 0; pod < t.pods.size(); ++pod) {
    std::vector<routes::DirLink> up, down;
    for (NodeId sp : t.pods[pod].spines)
      for (const auto& port : f.ports_of(sp)) {
        if (port.link == fabric::kNoLink) continue;
        const PortId pid{static_cast<std::uint32_t>(&port - f.ports().data())};
        const NodeId peer = f.peer_node(pid);
        if (!is_switch(peer) || t.node_pod[idx(peer)] == pod ||
            t.level[idx(peer)] <= t.level[idx(sp)])
          continue;
        const auto d = routes::dir_link(f, pid);
        up.push_back(d);
        down.push_back(d ^ 1u);
      }
    if (up.empty()) continue;
    tier2_of_pod[pod] = static_cast<std::uint32_t>(c.tier2_up.size());
    c.tier2_up.push_back(std::move(up));
    c.tier2_down.push_back(std::move(down));
  }
  for (std::size_t k = 0; k < b.size(); ++k)
    if (!b.leaves[k].empty())
      if (const auto pod = t.node_pod[idx(b.leaves[k].front())]; pod != kNone)
        c.block_tier2[k] = tier2_of_pod[pod];
  c.link_block.assign(2 * f.num_links(), kNone);
  c.link_tier2.assign(2 * f.num_links(), kNone);
  for (std::uint32_t k = 0; k < b.size(); ++k)
    for (const auto* v : {&c.block_up[k], &c.block_down[k]})
      for (auto d : *v) c.link_block[d] = k;
  for (std::uint32_t t2 = 0; t2 < c.tier2_up.size(); ++t2)
    for (const auto* v : {&c.tier2_up[t2], &c.tier2_down[t2]})
      for (auto d : *v) c.link_tier2[d] = t2;

  // What --explain says about each block's uplinks.
  std::vector<std::uint32_t> stats_of(f.num_nodes(), kNone);
  for (std::uint32_t i = 0; i < t.leaves.size(); ++i) stats_of[idx(t.leaves[i])] = i;
  const auto faults = uplink_faults(f);
  for (std::size_t k = 0; k < b.size(); ++k) {
    double worst_os = 0;
    UplinkFaults total;
    bool isolated = c.block_up[k].empty(), assumed = false;
    for (NodeId l : b.leaves[k]) {
      const auto& st = t.leaf_stats[stats_of[idx(l)]];
      assumed |= st.assumed;
      const auto& fl = faults[idx(l)];
      if (st.up_links == 0 || std::isinf(st.oversubscription)) isolated = true;
      worst_os = std::max(worst_os, st.oversubscription);
      total.degraded += fl.degraded;
      total.unhealthy += fl.unhealthy;
      total.lost += fl.lost;
    }
    // A rail group missing a rail's uplinks cannot carry that rail's traffic out.
    if (isolated) {
      c.block_up[k].clear();
      c.block_down[k].clear();
    }
    std::string why;
    auto add = [&](const std::string& s) { why += (why.empty() ? "" : ", ") + s; };
    if (isolated) add("no uplink");
    // A ratio from assumed link counts or rates (a tiers CSV or topology.conf without them)
    // is said to be assumed.
    if (!isolated && worst_os > 1)
      add(fmt(worst_os) + ":1 oversubscribed" + (assumed ? ", assumed" : ""));
    if (total.degraded) add(plural(total.degraded, "degraded uplink"));
    if (total.unhealthy) add(plural(total.unhealthy, "unhealthy uplink"));
    if (total.lost) add(plural(total.lost, "lost uplink"));
    c.uplink_why.push_back(why);
    c.uplink_faults.push_back(total.degraded + total.unhealthy + total.lost);
  }

  // How thin each pod's links to the tier above are: its leaves' uplink bandwidth as built
  // (a degraded or lost leaf uplink at its nominal rate: it must not make its pod look
  // thicker) over
  // the pod's own uplink capacity as it is (a degraded or unhealthy core link makes its pod
  // thinner); at least 1.
  std::uint32_t pods = 0;
  for (std::size_t k = 0; k < b.size(); ++k) pods = std::max(pods, b.pod[k] + 1);
  c.pod_scarcity.assign(pods, 1.0);
  auto built = routes::link_gbps(f);  // per link
  for (const auto& dl : t.degraded_links)
    if (const double g = dl.nominal.gbps(); g > 0) built[idx(dl.link)] = g;
  std::vector<double> below(c.tier2_up.size(), 0);
  for (std::size_t k = 0; k < b.size(); ++k)
    if (c.block_tier2[k] != kNone)
      for (auto d : c.block_up[k]) below[c.block_tier2[k]] += built[d / 2];
  // A leaf uplink lost since the previous discovery counts too, at the rate of that leaf's
  // fastest remaining uplink as built (a lost link has no rate): like a degraded one, it
  // must not make its pod look thicker.
  if (!t.lost_links.empty()) {
    std::vector<std::uint32_t> block_of_leaf(f.num_nodes(), kNone);
    for (std::uint32_t k = 0; k < b.size(); ++k)
      for (NodeId n : b.leaves[k]) block_of_leaf[idx(n)] = k;
    for (fabric::PortId p : t.lost_links) {
      const auto leaf = lost_uplink_leaf(f, p);
      if (leaf == fabric::kNoNode) continue;
      const auto k = block_of_leaf[idx(leaf)];
      if (k == kNone || c.block_tier2[k] == kNone) continue;
      double widest = 0;
      for (const auto& port : f.ports_of(leaf)) {
        if (port.link == fabric::kNoLink) continue;
        const auto& l = f.link(port.link);
        if (t.level[idx(l.node_a == leaf ? l.node_b : l.node_a)] > 1)
          widest = std::max(widest, built[idx(port.link)]);
      }
      below[c.block_tier2[k]] += widest;
    }
  }
  c.pod_assumed.assign(pods, 0);
  auto assumed = [&](routes::DirLink d) { return f.link(fabric::LinkId{d / 2}).assumed.any(); };
  for (std::size_t k = 0; k < b.size(); ++k) {
    const auto t2 = c.block_tier2[k];
    if (t2 == kNone) continue;
    double up = 0;
    for (auto d : c.tier2_up[t2]) up += c.capacity.gbps[d];
    if (up > 0) c.pod_scarcity[b.pod[k]] = std::max(c.pod_scarcity[b.pod[k]], below[t2] / up);
    auto& a = c.pod_assumed[b.pod[k]];
    for (const auto* v : {&c.block_up[k], &c.tier2_up[t2]})
      for (auto d : *v) a = a || assumed(d);
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

  if (f.has_domains()) by_domain(f, c);
  c.blocks.kind = fabric::block_kind(f, c.tree);
  c.block_run.assign(c.blocks.size(), 0);
  for (std::size_t k = 0; k < c.blocks.size(); ++k) {
    const auto& hs = c.blocks.hosts[k];
    bool run = !hs.empty();
    for (std::size_t i = 1; run && i < hs.size(); ++i) run = idx(hs[i]) == idx(hs[i - 1]) + 1;
    c.block_run[k] = run;
  }

  // In the order Context::block_group and tier2_group index.
  std::vector<std::vector<routes::DirLink>> groups;
  groups.reserve(2 * (c.block_up.size() + c.tier2_up.size()));
  for (const auto* v : {&c.block_up, &c.block_down, &c.tier2_up, &c.tier2_down})
    groups.insert(groups.end(), v->begin(), v->end());
  c.groups = link_groups(c.capacity, routes && routes->kind() == routes::Kind::kAdaptive, groups);
  return c;
}

std::vector<std::uint8_t> usable_hosts(const Context& c, const JobRequest& job,
                                       const NodeStates& states, bool healthy_only) {
  thread_local BlockCounts counts;  // not needed here; the counting pass is the fast one
  return usable_hosts(c, job, states, healthy_only, counts);
}

std::vector<std::uint8_t> usable_hosts(const Context& c, const JobRequest& job,
                                       const NodeStates& states, bool healthy_only,
                                       BlockCounts& counts) {
  // Usable: free (HostState::kFree), in a block, not excluded, and with `healthy_only` on
  // sound host links (Context::healthy); tested block by block, with the counts. A block's hosts
  // are mostly one run of consecutive ids: such a run is tested eight hosts at a time, in the bytes
  // of one word (HostState::kFree is 0; `healthy` is 0 or 1).
  static_assert(static_cast<int>(HostState::kFree) == 0);
  const std::size_t n = states.state.size();
  std::vector<std::uint8_t> ok(n, 0);
  const auto* st = reinterpret_cast<const std::uint8_t*>(states.state.data());
  const auto* good = c.healthy.data();
  auto* out = ok.data();
  auto& usable = counts.usable;
  auto& free = counts.free;
  const std::size_t blocks = c.blocks.size();
  usable.assign(blocks, 0);
  free.assign(blocks, 0);
  constexpr std::uint64_t kLow7 = 0x7f7f7f7f7f7f7f7full, kOnes = 0x0101010101010101ull;
  // Per byte of x: 1 where it is zero, else 0.
  auto zero_bytes = [](std::uint64_t x) { return (~(((x & kLow7) + kLow7) | x) >> 7) & kOnes; };
  auto sum_bytes = [](std::uint64_t x) { return static_cast<std::uint32_t>((x * kOnes) >> 56); };
  for (std::size_t k = 0; k < blocks; ++k) {
    const auto& hs = c.blocks.hosts[k];
    if (hs.empty()) continue;
    std::uint32_t u_count = 0, f_count = 0;
    const auto lo = idx(hs.front());
    const auto hi = idx(hs.back()) + 1;
    // One run of ids (Context::block_run, and still its size: a context edited since).
    if (k < c.block_run.size() && c.block_run[k] && hi - lo == hs.size() && hi <= n) {
      std::size_t h = lo;
      for (; h + 8 <= hi; h += 8) {
        std::uint64_t s8 = 0, g8 = 0;
        std::memcpy(&s8, st + h, 8);
        const std::uint64_t f8 = zero_bytes(s8);
        std::uint64_t u8 = f8;
        if (healthy_only) {
          std::memcpy(&g8, good + h, 8);
          u8 &= ~zero_bytes(g8) & kOnes;
        }
        std::memcpy(out + h, &u8, 8);
        u_count += sum_bytes(u8);
        f_count += sum_bytes(f8);
      }
      for (; h < hi; ++h) {
        const std::uint8_t is_free = st[h] == 0 ? 1 : 0;
        const std::uint8_t u = is_free & (!healthy_only | (good[h] != 0));
        out[h] = u;
        u_count += u;
        f_count += is_free;
      }
    } else {
      for (HostId hid : hs) {
        const auto h = idx(hid);
        if (h >= n) continue;
        const std::uint8_t is_free = st[h] == 0 ? 1 : 0;
        const std::uint8_t u = is_free & (!healthy_only | (good[h] != 0));
        out[h] = u;
        u_count += u;
        f_count += is_free;
      }
    }
    usable[k] = u_count;
    free[k] = f_count;
  }
  const auto* of = c.blocks.of_host.data();
  for (HostId h : job.exclude)
    if (std::exchange(ok[idx(h)], 0)) --usable[of[idx(h)]];
  return ok;
}

double score_of(const Weights& w, const Measures& m) {
  const double s = m.bandwidth.routed ? m.bandwidth.slowdown : kNoRoute;
  // With pipeline stages, the crossings are those of the job's whole traffic pattern.
  const auto crossings = m.pp_inter_leaf ? m.pp_inter_leaf : m.ring_inter_leaf;
  return w.slowdown * m.hosts * (s - 1) + w.contention * m.bandwidth.others + w.leaves * m.leaves +
         w.pods * (m.pods + m.thin_core) + w.ring_crossings * crossings + w.leftover * m.leftover +
         w.fresh_block * m.fresh_blocks + w.tp_split * m.tp_groups_split;
}

std::vector<std::pair<HostId, HostId>> job_edges(std::span<const HostId> ranked, std::uint32_t pp) {
  std::vector<std::pair<HostId, HostId>> out;
  const std::size_t n = ranked.size();
  if (pp <= 1 || n % pp != 0) {
    for (std::size_t i = 0; n > 1 && i < n; ++i) out.emplace_back(ranked[i], ranked[(i + 1) % n]);
    return out;
  }
  const std::size_t per = n / pp;
  for (std::size_t s = 0; s < pp; ++s) {
    const auto* stage = ranked.data() + s * per;
    for (std::size_t i = 0; per > 1 && i < per; ++i)
      out.emplace_back(stage[i], stage[(i + 1) % per]);
    if (s + 1 < pp)
      for (std::size_t i = 0; i < per; ++i) {
        out.emplace_back(stage[i], stage[per + i]);
        out.emplace_back(stage[per + i], stage[i]);
      }
  }
  return out;
}

std::vector<std::uint32_t> pods_of(const Context& c, std::span<const std::uint32_t> blocks) {
  const auto& b = c.blocks;
  std::vector<std::uint32_t> pods;
  for (auto k : blocks)
    if (k != kNone) pods.push_back(b.pod[k]);
  std::sort(pods.begin(), pods.end());
  pods.erase(std::unique(pods.begin(), pods.end()), pods.end());
  return pods;
}

double thin_core_of_pods(const Context& c, std::span<const std::uint32_t> pods) {
  double extra = 0;
  if (pods.size() > 1)
    for (auto p : pods) extra += c.pod_scarcity[p] - 1;
  return extra;
}

bool core_assumed_of_pods(const Context& c, std::span<const std::uint32_t> pods) {
  if (pods.size() < 2) return false;
  for (auto p : pods)
    if (c.pod_assumed[p] && c.pod_scarcity[p] > 1) return true;
  return false;
}

RingMeasures measure_ring(const Blocks& b, std::span<const HostId> ring,
                          std::uint32_t group_nodes) {
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
                   std::vector<HostId> ranked, std::string policy, const Traffic* traffic) {
  const Blocks& b = c.blocks;
  Placement p;
  p.policy = std::move(policy);
  p.feasible = true;
  p.hosts = std::move(ranked);
  const std::size_t n = p.hosts.size();
  const std::uint32_t g = job.group_nodes();
  Measures& m = p.measures;
  m.hosts = static_cast<std::uint32_t>(n);

  const auto ring = measure_ring(b, p.hosts, g);
  m.leaves = ring.leaves;
  m.pods = ring.pods;
  m.ring_inter_leaf = ring.inter_leaf;
  m.ring_inter_pod = ring.inter_pod;
  m.tp_groups_split = ring.tp_groups_split;
  if (ring.pods > 1) {
    const auto pods = pods_of(c, ring.blocks);
    m.thin_core = thin_core_of_pods(c, pods);
    m.core_assumed = core_assumed_of_pods(c, pods);
  }
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
  std::vector<std::uint32_t> taken_in(b.size(), 0);
  std::uint32_t taken = 0;
  for (HostId h : p.hosts)
    if (const auto k = b.of_host[idx(h)]; k != kNone && states.free(h)) ++taken, ++taken_in[k];
  std::uint32_t free_in_used = 0;
  for (std::size_t k = 0; k < b.size(); ++k) {
    if (!used[k]) continue;
    std::uint32_t free = 0;
    for (HostId h : b.hosts[k])
      if (states.free(h)) ++free;
    free_in_used += free;
    if (free == b.hosts[k].size() && taken_in[k] < free) ++m.fresh_blocks;
  }
  m.leftover = free_in_used - taken;
  if (job.pp > 1 && n % job.pp == 0) {
    const auto edges = job_edges(p.hosts, job.pp);
    for (const auto& [x, y] : edges) m.pp_inter_leaf += b.of_host[idx(x)] != b.of_host[idx(y)];
    const std::size_t per = n / job.pp;
    for (std::size_t s = 0; s < job.pp; ++s) {
      bool one = true;
      for (std::size_t i = 1; i < per; ++i)
        one = one && b.of_host[idx(p.hosts[s * per + i])] == b.of_host[idx(p.hosts[s * per])];
      m.stages_in_block += one;
    }
    if (c.routes) m.bandwidth = forecast_edges(*c.routes, c.capacity, traffic, edges, job.salt);
  } else if (c.routes) {
    m.bandwidth = forecast_ring(*c.routes, c.capacity, traffic, p.hosts, job.salt);
  }
  p.score = score_of(c.weights, m);
  return p;
}

std::vector<HostId> ring_order(const Blocks& b, std::vector<HostId> hosts) {
  // Within a block, the block's own host order: index order, and for an NVLink domain leaf
  // by leaf (Blocks::hosts), so the ring is domain-contiguous, then leaf-contiguous.
  std::unordered_map<std::uint32_t, std::uint32_t> pos;
  std::vector<char> seen(b.size(), 0);
  for (HostId h : hosts) {
    const auto k = b.of_host[idx(h)];
    if (k == kNone || std::exchange(seen[k], 1)) continue;
    for (std::uint32_t i = 0; i < b.hosts[k].size(); ++i) pos[idx(b.hosts[k][i])] = i;
  }
  auto key = [&](HostId h) {
    const auto k = b.of_host[idx(h)];
    const auto it = pos.find(idx(h));
    return std::tuple(k == kNone ? kNone : b.pod[k], k, it == pos.end() ? idx(h) : it->second,
                      idx(h));
  };
  std::sort(hosts.begin(), hosts.end(), [&](HostId x, HostId y) { return key(x) < key(y); });
  return hosts;
}

ThinTier thinnest_tier(const Context& c) {
  const auto& b = c.blocks;
  double hosts = 0, leaf_up = 0;
  std::vector<double> pod_hosts(c.tier2_up.size(), 0);
  // Each uplink once: the blocks of NVLink domains under one leaf share its uplinks.
  std::vector<char> counted(c.link_block.size(), 0);
  for (std::size_t k = 0; k < b.size(); ++k) {
    if (!c.uplinked(k)) continue;
    const double n = static_cast<double>(b.hosts[k].size());
    hosts += n;
    for (auto d : c.block_up[k])
      if (!std::exchange(counted[d], 1)) leaf_up += c.capacity.gbps[d];
    if (c.block_tier2[k] != fabric::kNone) pod_hosts[c.block_tier2[k]] += n;
  }
  ThinTier t;
  if (hosts == 0) return t;
  t.ratio = leaf_up / (hosts * c.capacity.host_gbps);
  double pod_up = 0, beneath = 0;
  for (std::size_t g = 0; g < c.tier2_up.size(); ++g) {
    if (pod_hosts[g] == 0) continue;
    beneath += pod_hosts[g];
    for (auto d : c.tier2_up[g]) pod_up += c.capacity.gbps[d];
  }
  if (beneath > 0) {
    const double r = pod_up / (beneath * c.capacity.host_gbps);
    if (r < t.ratio) t = {2, r};
  }
  return t;
}

}  // namespace fabricplace::placement
