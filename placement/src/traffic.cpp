// SPDX-License-Identifier: GPL-2.0-or-later
#include "fabricplace/placement/traffic.hpp"

#include <algorithm>
#include <limits>

namespace fabricplace::placement {
namespace {

using fabric::HostId;
using fabric::idx;
using routes::DirLink;
using routes::Load;

// Per-thread scratch of a forecast: the ring's own load per directed link (zero outside a
// call), the links it touched, and per running job the slowdown it would have.
struct Scratch {
  std::vector<Load> own;
  std::vector<DirLink> touched;
  std::vector<double> would;
  std::vector<std::uint32_t> slowed;
  std::vector<routes::LinkLoad> loads;
};
thread_local Scratch scratch;

// The forecast of the loads in scratch.loads over `t`'s (or no) background.
Forecast measure_loads(const Capacity& c, const Traffic* t) {
  auto& s = scratch;
  if (s.own.size() < c.gbps.size()) s.own.resize(c.gbps.size(), 0);
  s.touched.clear();
  for (const auto& [d, l] : s.loads) {
    if (s.own[d] == 0) s.touched.push_back(d);
    s.own[d] += l;
  }
  // A host link carries its own host's traffic only (nodes are exclusive): the fan-out of
  // one host's flows (a pipeline stage's ring edge and its stage-to-stage sends) shares its
  // NIC whatever the placement, and NCCL runs them in turn, not at once. It counts as one
  // ring edge at most, so that only a slower host link (degraded) slows the job there.
  for (DirLink d : s.touched)
    if (!c.interswitch[d]) s.own[d] = std::min<Load>(s.own[d], routes::kEdge);
  const std::span<const Load> bg = t ? t->load() : std::span<const Load>{};
  Forecast fc;
  double worst = -1;  // load per Gb/s, in ring edges
  // Equal utilisation: a switch-to-switch link (where jobs meet) before a host link, then the
  // lowest link.
  auto key = [&](DirLink d) { return std::pair(c.interswitch[d] ? 0 : 1, d); };
  for (DirLink d : s.touched) {
    const Load before = bg.empty() ? 0 : bg[d];
    const double u = routes::edges(before + s.own[d]) / c.gbps[d];
    if (u > worst || (u == worst && key(d) < key(fc.bottleneck))) {
      worst = u;
      fc.bottleneck = d;
      fc.before = routes::edges(before);
      fc.after = routes::edges(before + s.own[d]);
    }
  }
  if (!s.touched.empty()) fc.slowdown = std::max(1.0, c.host_gbps * worst);
  if (t && t->size() > 0) {
    if (s.would.size() < t->capacity_jobs()) s.would.resize(t->capacity_jobs(), 0);
    s.slowed.clear();
    for (DirLink d : s.touched) {
      const double u = c.host_gbps * routes::edges(bg[d] + s.own[d]) / c.gbps[d];
      if (u <= 1) continue;  // no running job slows below full speed here
      for (std::uint32_t j : t->on(d)) {
        if (u <= t->slowdown(j)) continue;
        if (s.would[j] == 0) s.slowed.push_back(j);
        s.would[j] = std::max(s.would[j], u);
      }
    }
    for (std::uint32_t j : s.slowed) {
      fc.others += t->nodes(j) * (s.would[j] - t->slowdown(j));
      s.would[j] = 0;
    }
    fc.slowed = static_cast<std::uint32_t>(s.slowed.size());
  }
  for (DirLink d : s.touched) s.own[d] = 0;
  return fc;
}

// The forecast of a ring or edges with no route.
Forecast unrouted() {
  Forecast fc;
  fc.routed = false;
  return fc;
}

}  // namespace

Capacity link_capacity(const fabric::Fabric& f, double unhealthy_capacity) {
  Capacity c;
  const auto per_link = routes::link_gbps(f);
  c.gbps.resize(2 * per_link.size());
  c.interswitch.resize(2 * per_link.size());
  for (std::size_t l = 0; l < per_link.size(); ++l) {
    c.gbps[2 * l] = c.gbps[2 * l + 1] = per_link[l];
    const auto& link = f.link(fabric::LinkId{static_cast<std::uint32_t>(l)});
    const bool sw = f.node(link.node_a).type == fabric::NodeType::kSwitch &&
                    f.node(link.node_b).type == fabric::NodeType::kSwitch;
    c.interswitch[2 * l] = c.interswitch[2 * l + 1] = sw;
  }
  const double factor = std::clamp(unhealthy_capacity, 1e-3, 1.0);
  for (const auto& u : f.topology().unhealthy_links) {
    c.gbps[2 * idx(u.link)] *= factor;
    c.gbps[2 * idx(u.link) + 1] *= factor;
  }
  // A ring edge's full speed: the host links' nominal rate, times the rails a host injects
  // over.
  double host = 0;
  for (const auto& tier : f.topology().tiers)
    if (tier.lower == 0 && tier.upper == 1) host = tier.nominal.gbps();
  if (host <= 0)
    for (double g : per_link) host = std::max(host, g);
  const auto& t = f.topology();
  if (t.rail_optimised && !t.rails.empty()) host *= static_cast<double>(t.rails.size());
  c.host_gbps = host > 0 ? host : 1;
  c.host_per_gbps.resize(c.gbps.size());
  for (std::size_t d = 0; d < c.gbps.size(); ++d) c.host_per_gbps[d] = c.host_gbps / c.gbps[d];
  return c;
}

double edge_slowdown(const Capacity& c, bool fluid, std::span<const Load> bg,
                     std::span<const DirLink> links) {
  if (links.empty()) return 1.0;
  const double per_edge = 1.0 / static_cast<double>(routes::kEdge);
  if (fluid) {
    double load = 0, gbps = 0;
    for (auto d : links) {
      load += bg.empty() ? 0.0 : static_cast<double>(bg[d]) * per_edge;
      gbps += c.gbps[d];
    }
    return std::max(1.0, c.host_gbps * (load + 1) / gbps);
  }
  const auto& hpg = c.host_per_gbps;
  double mean = 0;
  if (bg.empty()) {
    for (auto d : links) mean += std::max(1.0, hpg[d]);
  } else {
    for (auto d : links)
      mean += std::max(1.0, hpg[d] * (static_cast<double>(bg[d]) * per_edge + 1));
  }
  return mean / static_cast<double>(links.size());
}

LinkGroups link_groups(const Capacity& c, bool fluid,
                       std::span<const std::vector<DirLink>> groups) {
  LinkGroups g;
  g.fluid = fluid;
  g.start.push_back(0);
  std::vector<std::uint32_t> count(c.gbps.size() + 1, 0);
  for (const auto& v : groups) {
    g.links.insert(g.links.end(), v.begin(), v.end());
    g.start.push_back(static_cast<std::uint32_t>(g.links.size()));
    g.idle.push_back(edge_slowdown(c, fluid, {}, v));
    for (auto d : v) ++count[d + 1];
  }
  for (std::size_t d = 0; d < c.gbps.size(); ++d) count[d + 1] += count[d];
  g.link_start = count;
  g.member.resize(g.links.size());
  for (std::uint32_t i = 0; i < groups.size(); ++i)
    for (auto d : groups[i]) g.member[count[d]++] = i;
  return g;
}

Traffic::Traffic(const routes::Model& m, const Capacity& c, const LinkGroups* groups)
    : model_(&m), cap_(&c), groups_(groups), load_(c.gbps.size(), 0) {
  if (groups_) {
    group_slowdown_ = groups_->idle;
    group_dirty_.assign(groups_->size(), 0);
  }
}

void Traffic::regroup(std::span<const std::pair<DirLink, Load>> links) {
  if (!groups_) return;
  const auto& g = *groups_;
  for (const auto& [d, own] : links)
    for (auto i = g.link_start[d]; i < g.link_start[d + 1]; ++i)
      if (!group_dirty_[g.member[i]]) {
        group_dirty_[g.member[i]] = 1;
        dirty_.push_back(g.member[i]);
      }
  for (auto i : dirty_) {
    group_slowdown_[i] = edge_slowdown(*cap_, g.fluid, load_, g.links_of(i));
    group_dirty_[i] = 0;
  }
  dirty_.clear();
}

std::span<const std::uint32_t> Traffic::on(routes::DirLink d) const {
  if (d >= on_.size()) return {};
  return on_[d];
}

double Traffic::measure(const Job& j) const {
  double worst = 0;
  for (const auto& [d, own] : j.links)
    worst = std::max(worst, routes::edges(load_[d]) / cap_->gbps[d]);
  return std::max(1.0, cap_->host_gbps * worst);
}

std::optional<std::uint32_t> Traffic::add(std::span<const HostId> ring, std::uint64_t salt,
                                          std::string id) {
  auto& s = scratch;
  s.loads.clear();
  if (ring.size() >= 2 && !model_->ring_load(ring, salt, load_, s.loads)) return std::nullopt;
  std::uint32_t h;
  if (free_.empty()) {
    h = static_cast<std::uint32_t>(jobs_.size());
    jobs_.emplace_back();
  } else {
    h = free_.back();
    free_.pop_back();
  }
  Job& j = jobs_[h];
  j = Job{};
  j.id = std::move(id);
  j.nodes = static_cast<std::uint32_t>(ring.size());
  j.live = true;
  ++live_;
  if (s.own.size() < load_.size()) s.own.resize(load_.size(), 0);
  s.touched.clear();
  for (const auto& [d, l] : s.loads) {
    if (s.own[d] == 0) s.touched.push_back(d);
    s.own[d] += l;
  }
  std::sort(s.touched.begin(), s.touched.end());
  if (on_.size() < load_.size() && !s.touched.empty()) on_.resize(load_.size());
  for (DirLink d : s.touched) {
    j.links.emplace_back(d, s.own[d]);
    load_[d] += s.own[d];
    s.own[d] = 0;
    on_[d].push_back(h);
  }
  j.slowdown = measure(j);
  regroup(j.links);
  // Loads only grew: a job sharing a link now runs at most at that link's share.
  for (const auto& [d, own] : j.links) {
    const double u = cap_->host_gbps * routes::edges(load_[d]) / cap_->gbps[d];
    for (std::uint32_t k : on_[d])
      if (k != h) jobs_[k].slowdown = std::max(jobs_[k].slowdown, u);
  }
  return h;
}

std::vector<std::string> Traffic::add(std::span<const RunningJob> jobs) {
  std::vector<std::string> unrouted;
  for (const auto& j : jobs)
    if (!add(j.hosts, running_salt(j), j.id)) unrouted.push_back(j.id);
  return unrouted;
}

void Traffic::remove(std::uint32_t h) {
  Job& j = jobs_[h];
  if (!j.live) return;
  std::vector<std::uint32_t> affected;
  for (const auto& [d, own] : j.links) {
    load_[d] -= own;
    auto& v = on_[d];
    auto it = std::find(v.begin(), v.end(), h);
    *it = v.back();
    v.pop_back();
    affected.insert(affected.end(), v.begin(), v.end());
  }
  std::sort(affected.begin(), affected.end());
  affected.erase(std::unique(affected.begin(), affected.end()), affected.end());
  regroup(j.links);
  j.links.clear();
  j.links.shrink_to_fit();
  j.live = false;
  --live_;
  free_.push_back(h);
  for (std::uint32_t k : affected) jobs_[k].slowdown = measure(jobs_[k]);
}

Forecast forecast_ring(const routes::Model& m, const Capacity& c, const Traffic* traffic,
                       std::span<const HostId> ring, std::uint64_t salt) {
  auto& s = scratch;
  s.loads.clear();
  if (ring.size() < 2) return {};
  const std::span<const Load> bg = traffic ? traffic->load() : std::span<const Load>{};
  if (!m.ring_load(ring, salt, bg, s.loads)) return unrouted();
  return measure_loads(c, traffic);
}

Forecast forecast_edges(const routes::Model& m, const Capacity& c, const Traffic* traffic,
                        std::span<const std::pair<HostId, HostId>> edges, std::uint64_t salt,
                        EdgeCache* cache) {
  auto& s = scratch;
  s.loads.clear();
  const std::span<const Load> bg = traffic ? traffic->load() : std::span<const Load>{};
  constexpr std::uint32_t kUnrouted = std::numeric_limits<std::uint32_t>::max();
  // Appends the edge's loads to s.loads, from the cache where it has them; false: no route.
  auto route = [&](HostId a, HostId b) {
    if (!cache) return m.edge_load(a, b, salt, s.loads, bg);
    const std::uint64_t key = (std::uint64_t{idx(a)} << 32) | idx(b);
    auto [it, fresh] = cache->at.try_emplace(key, kUnrouted, kUnrouted);
    if (fresh) {
      const auto begin = static_cast<std::uint32_t>(cache->loads.size());
      if (m.edge_load(a, b, salt, cache->loads, bg))  // nothing appended when false
        it->second = {begin, static_cast<std::uint32_t>(cache->loads.size())};
    }
    const auto [first, last] = it->second;
    if (first == kUnrouted) return false;
    s.loads.insert(s.loads.end(), cache->loads.begin() + first, cache->loads.begin() + last);
    return true;
  };
  for (const auto& [a, b] : edges)
    if (a != b && !route(a, b)) return unrouted();
  return measure_loads(c, traffic);
}

std::string bottleneck_name(const fabric::Fabric& f, const Forecast& fc) {
  if (fc.bottleneck == fabric::kNone) return "none";
  return routes::dir_link_name(f, fc.bottleneck);
}

}  // namespace fabricplace::placement
