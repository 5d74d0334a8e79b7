// SPDX-License-Identifier: GPL-2.0-or-later
// ecmp and adaptive (model.hpp): both route over the shortest paths, in switch hops, from
// the source end port's switch to the destination end port's switch. A switch's equal-cost
// next hops towards destination switch t are its switch-facing ports whose peer is one hop
// closer to t; parallel links are separate next hops, as they are separate ECMP members.
#include "multipath.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include "fabricplace/common/strings.hpp"

namespace fabricplace::routes {
namespace {

using fabric::NodeType;

constexpr std::uint8_t kFar = 0xFF;  // unreachable (or 255 hops and more)

/// splitmix64's finaliser: a fixed, well-mixed 64-bit hash (the same on every platform).
constexpr std::uint64_t mix(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

using RailPairs = std::vector<std::tuple<std::uint32_t, std::uint32_t, Load>>;

/// The shortest-path structure both models walk: switch adjacency, the switch each end port
/// is cabled to, and hop distances to every such switch.
class ShortestPaths : public Model {
 public:
  using Model::Model;
  Result<void> build();

 protected:
  struct Hop {
    PortId port;
    std::uint32_t peer;  // switch index
  };
  [[nodiscard]] std::uint8_t dist(std::uint32_t row, std::uint32_t s) const {
    return dist_[std::size_t{row} * sw_node_.size() + s];
  }
  // The ends' switches and the hops between them; false when the ends are not both on
  // switches or no path joins them.
  bool endpoints(std::uint32_t a, std::uint32_t b, std::uint32_t& s, std::uint32_t& t,
                 std::uint8_t& d) const {
    s = end_sw_[a];
    t = end_sw_[b];
    if (s == kNone || t == kNone) return false;
    d = dist(dest_row_[t], s);
    return d != kFar;
  }
  [[nodiscard]] DirLink host_up(std::uint32_t a) const {
    return dir_link(fabric(), ends().port(a));
  }
  [[nodiscard]] DirLink host_down(std::uint32_t b) const {
    return dir_link(fabric(), fabric().peer_port(ends().port(b)));
  }
  // The next hops of switch s one hop closer to switch t, s at distance d from it.
  void next_hops(std::uint32_t s, std::uint32_t t, std::uint8_t d,
                 std::vector<const Hop*>& out) const {
    out.clear();
    const std::uint32_t row = dest_row_[t];
    for (std::uint32_t i = adj_begin_[s]; i < adj_begin_[s + 1]; ++i) {
      if (dist(row, adj_[i].peer) + 1 == d) out.push_back(&adj_[i]);
    }
  }
  [[nodiscard]] std::size_t num_switches() const { return sw_node_.size(); }
  /// Calls route(a, b, w, out) for each rail pair of the edge src -> dst; all or nothing:
  /// false, with `out` as it was, when the hosts have no rail pair or a pair no route.
  template <class Route>
  bool per_rail(HostId src, HostId dst, std::vector<LinkLoad>& out, Route route) const {
    if (src == dst) return true;
    thread_local RailPairs pairs;
    rail_pairs(src, dst, pairs);
    if (pairs.empty()) return false;
    const std::size_t start = out.size();
    for (const auto& [a, b, w] : pairs) {
      if (!route(a, b, w)) {
        out.resize(start);
        return false;
      }
    }
    return true;
  }
  [[nodiscard]] std::uint32_t row_of(std::uint32_t t) const { return dest_row_[t]; }
  [[nodiscard]] fabric::Guid guid_of(std::uint32_t s) const {
    return fabric().node(sw_node_[s]).guid;
  }
  /// Capacity of the link of directed link d, Gb/s (unknown rates: the fastest known).
  [[nodiscard]] double cap(DirLink d) const { return cap_[d / 2]; }

 private:
  std::vector<std::uint32_t> sw_index_;  // per node: switch index (kNone for CAs)
  std::vector<NodeId> sw_node_;
  std::vector<std::uint32_t> adj_begin_;
  std::vector<Hop> adj_;                 // switch-facing ports, port order
  std::vector<std::uint32_t> end_sw_;    // per end: the switch it is cabled to (kNone)
  std::vector<std::uint32_t> dest_row_;  // per switch: its row of dist_ (kNone: no end)
  std::vector<std::uint8_t> dist_;       // rows x switches: hops to the row's switch
  std::vector<double> cap_;              // per link
};

Result<void> ShortestPaths::build() {
  const Fabric& f = fabric();
  sw_index_.assign(f.num_nodes(), kNone);
  for (NodeId s : f.switches()) {
    sw_index_[idx(s)] = static_cast<std::uint32_t>(sw_node_.size());
    sw_node_.push_back(s);
  }
  const auto S = static_cast<std::uint32_t>(sw_node_.size());
  adj_begin_.assign(1, 0);
  for (NodeId s : sw_node_) {
    for (const auto& p : f.ports_of(s)) {
      if (p.link == fabric::kNoLink) continue;
      const PortId pid{static_cast<std::uint32_t>(&p - f.ports().data())};
      const NodeId peer = f.peer_node(pid);
      if (f.node(peer).type != NodeType::kSwitch || peer == s) continue;
      adj_.push_back({pid, sw_index_[idx(peer)]});
    }
    adj_begin_.push_back(static_cast<std::uint32_t>(adj_.size()));
  }
  end_sw_.assign(ends().size(), kNone);
  dest_row_.assign(S, kNone);
  std::uint32_t rows = 0;
  for (std::uint32_t e = 0; e < ends().size(); ++e) {
    const NodeId n = f.peer_node(ends().port(e));
    if (f.node(n).type != NodeType::kSwitch) continue;
    const std::uint32_t s = sw_index_[idx(n)];
    end_sw_[e] = s;
    if (dest_row_[s] == kNone) dest_row_[s] = rows++;
  }
  const std::uint64_t bytes = std::uint64_t{rows} * S;
  if (bytes > kMaxTableBytes) {
    return fail(ErrorCode::kUnsupported, "the " + std::string(to_string(kind())) +
                                             " model's distances for " + std::to_string(rows) +
                                             " host-facing switches x " + std::to_string(S) +
                                             " switches would take " + std::to_string(bytes >> 20) +
                                             " MiB (at most 1024 MiB)");
  }
  dist_.assign(bytes, kFar);
  std::vector<std::uint32_t> queue;
  queue.reserve(S);
  for (std::uint32_t t = 0; t < S; ++t) {
    const std::uint32_t row = dest_row_[t];
    if (row == kNone) continue;
    std::uint8_t* d = dist_.data() + std::size_t{row} * S;
    queue.assign(1, t);
    d[t] = 0;
    for (std::size_t q = 0; q < queue.size(); ++q) {
      const std::uint32_t u = queue[q];
      if (d[u] + 1 >= kFar) continue;
      for (std::uint32_t i = adj_begin_[u]; i < adj_begin_[u + 1]; ++i) {
        const std::uint32_t v = adj_[i].peer;
        if (d[v] != kFar) continue;
        d[v] = static_cast<std::uint8_t>(d[u] + 1);
        queue.push_back(v);
      }
    }
  }
  cap_ = link_gbps(f);
  return {};
}

// ---- ecmp ------------------------------------------------------------------------------

class Ecmp : public ShortestPaths {
 public:
  Ecmp(const Fabric& f, const Spec& spec, std::string description, Kind kind = Kind::kEcmp)
      : ShortestPaths(f, kind, std::move(description)),
        flows_(std::max<std::uint32_t>(spec.flows_per_edge, 1)),
        seed_(spec.seed) {}

 protected:
  bool load_edge(HostId src, HostId dst, std::uint64_t salt, std::span<const Load> /*current*/,
                 std::vector<LinkLoad>& out) const override {
    return hashed_edge(src, dst, salt, out);
  }
  /// The edge's flows, each hashed onto one shortest path.
  bool hashed_edge(HostId src, HostId dst, std::uint64_t salt, std::vector<LinkLoad>& out) const {
    return per_rail(src, dst, out, [&](std::uint32_t a, std::uint32_t b, Load w) {
      // The flow's identity: the seed, the job (salt) and the end ports; each of its
      // flows_ parts (QPs) is hashed on its own.
      const std::uint64_t flow = mix(mix(mix(seed_) ^ salt) ^ ((std::uint64_t{a} << 32) | b));
      for (std::uint32_t k = 0; k < flows_; ++k) {
        const Load part = share(w, flows_, k);
        if (part != 0 && !walk(a, b, mix(flow ^ k), part, out)) return false;
      }
      return true;
    });
  }

 private:
  bool walk(std::uint32_t a, std::uint32_t b, std::uint64_t h, Load w,
            std::vector<LinkLoad>& out) const {
    std::uint32_t s, t;
    std::uint8_t d;
    if (!endpoints(a, b, s, t, d)) return false;
    out.push_back({host_up(a), w});
    thread_local std::vector<const Hop*> cand;
    const Fabric& f = fabric();
    for (; d > 0; --d) {
      next_hops(s, t, d, cand);
      if (cand.empty()) return false;
      // Every switch hashes the flow with its own seed (its GUID), as real switches do to
      // avoid polarisation.
      const Hop* hop = cand[mix(h ^ guid_of(s)) % cand.size()];
      out.push_back({dir_link(f, hop->port), w});
      s = hop->peer;
    }
    out.push_back({host_down(b), w});
    return true;
  }

  std::uint32_t flows_;
  std::uint64_t seed_;
};

// ---- adaptive ----------------------------------------------------------------------------

/// Max-flow (Dinic) on one edge's shortest-path graph: switches s..t, arcs the next hops.
class SplitGraph {
 public:
  struct Arc {
    std::uint32_t to;
    std::uint32_t rev;  // index of the reverse arc in arcs_[to]
    Load cap = 0, flow = 0;
    DirLink link = 0;
    bool forward = false;
  };
  void reset(std::size_t nodes) {
    arcs_.assign(nodes, {});
    level_.assign(nodes, -1);
    it_.assign(nodes, 0);
  }
  void add(std::uint32_t u, std::uint32_t v, DirLink link) {
    arcs_[u].push_back({v, static_cast<std::uint32_t>(arcs_[v].size()), 0, 0, link, true});
    arcs_[v].push_back({u, static_cast<std::uint32_t>(arcs_[u].size() - 1), 0, 0, link, false});
  }
  std::vector<std::vector<Arc>>& arcs() { return arcs_; }
  /// The most flow from s to t up to `want`, with the capacities set; flows start at 0.
  Load max_flow(std::uint32_t s, std::uint32_t t, Load want) {
    for (auto& v : arcs_)
      for (auto& a : v) a.flow = 0;
    Load total = 0;
    while (total < want && bfs(s, t)) {
      std::fill(it_.begin(), it_.end(), 0);
      while (total < want) {
        const Load f = dfs(s, t, want - total);
        if (f == 0) break;
        total += f;
      }
    }
    return total;
  }

 private:
  Load residual(const Arc& a) const { return a.forward ? a.cap - a.flow : arcs_[a.to][a.rev].flow; }
  void push(Arc& a, Load f) {
    if (a.forward)
      a.flow += f;
    else
      arcs_[a.to][a.rev].flow -= f;
  }
  bool bfs(std::uint32_t s, std::uint32_t t) {
    std::fill(level_.begin(), level_.end(), -1);
    queue_.assign(1, s);
    level_[s] = 0;
    for (std::size_t q = 0; q < queue_.size(); ++q) {
      const std::uint32_t u = queue_[q];
      for (const auto& a : arcs_[u]) {
        if (level_[a.to] < 0 && residual(a) > 0) {
          level_[a.to] = level_[u] + 1;
          queue_.push_back(a.to);
        }
      }
    }
    return level_[t] >= 0;
  }
  // Iterative blocking-flow step: one augmenting path along the level graph.
  Load dfs(std::uint32_t s, std::uint32_t t, Load limit) {
    path_.clear();
    std::uint32_t u = s;
    while (true) {
      if (u == t) {
        Load f = limit;
        for (auto [v, i] : path_) f = std::min(f, residual(arcs_[v][i]));
        for (auto [v, i] : path_) push(arcs_[v][i], f);
        return f;
      }
      bool advanced = false;
      for (; it_[u] < arcs_[u].size(); ++it_[u]) {
        const Arc& a = arcs_[u][it_[u]];
        if (residual(a) > 0 && level_[a.to] == level_[u] + 1) {
          path_.emplace_back(u, it_[u]);
          u = a.to;
          advanced = true;
          break;
        }
      }
      if (advanced) continue;
      // Dead end: retreat.
      level_[u] = -1;
      if (path_.empty()) return 0;
      u = path_.back().first;
      ++it_[u];
      path_.pop_back();
    }
  }

  std::vector<std::vector<Arc>> arcs_;
  std::vector<int> level_;
  std::vector<std::size_t> it_;
  std::vector<std::uint32_t> queue_;
  std::vector<std::pair<std::uint32_t, std::size_t>> path_;
};

class Adaptive final : public Ecmp {
 public:
  Adaptive(const Fabric& f, const Spec& spec, std::string description)
      : Ecmp(f, spec, std::move(description), Kind::kAdaptive) {}

 protected:
  bool load_edge(HostId src, HostId dst, std::uint64_t /*salt*/, std::span<const Load> current,
                 std::vector<LinkLoad>& out) const override {
    return per_rail(src, dst, out, [&](std::uint32_t a, std::uint32_t b, Load w) {
      return best_split(a, b, w, current, out);
    });
  }

  bool load_ring(std::span<const HostId> ring, std::uint64_t salt, std::span<const Load> background,
                 std::vector<LinkLoad>& out) const override {
    if (ring.size() < 2) return true;
    const std::size_t n = ring.size();
    // All traffic: the background plus the ring's edges, kept up to date as edges move.
    thread_local std::vector<Load> total;
    total.assign(2 * fabric().num_links(), 0);
    std::copy_n(background.begin(), std::min(background.size(), total.size()), total.begin());
    // The flows start where ecmp hashes them (the same flows per edge and seed)...
    thread_local std::vector<std::vector<LinkLoad>> edge;
    edge.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      edge[i].clear();
      if (on_nvlink(ring[i], ring[(i + 1) % n])) continue;  // no load, never moved
      if (!hashed_edge(ring[i], ring[(i + 1) % n], salt, edge[i])) return false;
      for (const auto& [d, l] : edge[i]) total[d] += l;
    }
    // ... then each edge in turn takes its traffic off and splits it again against all the
    // rest, kept only when that lowers (the most utilised switch-to-switch link it uses, then
    // the sum of their squared utilisations), until a round moves nothing (at most kRounds).
    // A kept move never lifts a link above the edge's old most utilised one, so no link ever
    // ends more utilised than ecmp's most utilised one.
    thread_local std::vector<LinkLoad> again;
    for (int round = 0; round < kRounds; ++round) {
      bool moved = false;
      for (std::size_t i = 0; i < n; ++i) {
        if (edge[i].empty()) continue;  // on NVLink (or src == dst): nothing to move
        const Cost before = cost(edge[i], total);
        for (const auto& [d, l] : edge[i]) total[d] -= l;
        again.clear();
        load_edge(ring[i], ring[(i + 1) % n], salt, total, again);
        for (const auto& [d, l] : again) total[d] += l;
        if (cost(again, total) < before) {
          moved = true;
          edge[i].swap(again);
        } else {
          for (const auto& [d, l] : again) total[d] -= l;
          for (const auto& [d, l] : edge[i]) total[d] += l;
        }
      }
      if (!moved) break;
    }
    for (const auto& e : edge) out.insert(out.end(), e.begin(), e.end());
    return true;
  }

 private:
  static constexpr int kRounds = 16;

  struct Cost {
    double worst = 0, squares = 0;
    // Lower worst, then lower squares; relative differences below 1e-12 are ties, so a
    // re-split that only moves rounding is not a move.
    bool operator<(const Cost& o) const {
      const auto less = [](double a, double b) { return a < b - 1e-12 * std::max(a, b); };
      if (less(worst, o.worst)) return true;
      if (less(o.worst, worst)) return false;
      return less(squares, o.squares);
    }
  };
  // The switch-to-switch links an edge uses, at their utilisation with all traffic in `total`
  // (its host links carry the same whatever the split).
  [[nodiscard]] Cost cost(const std::vector<LinkLoad>& e, const std::vector<Load>& total) const {
    Cost c;
    for (const auto& [d, l] : e) {
      if (!switch_to_switch(fabric(), d)) continue;
      const double u = static_cast<double>(total[d]) / cap(d);
      c.worst = std::max(c.worst, u);
      c.squares += u * u;
    }
    return c;
  }

  // Splits `w` from end a to end b over the shortest paths so that the most utilised link
  // it uses ((current + its share) / capacity) is as low as it can be: the least level at
  // which a flow of w fits under it (bisection; max-flow per level).
  bool best_split(std::uint32_t a, std::uint32_t b, Load w, std::span<const Load> current,
                  std::vector<LinkLoad>& out) const {
    std::uint32_t s, t;
    std::uint8_t d;
    if (!endpoints(a, b, s, t, d)) return false;
    out.push_back({host_up(a), w});
    if (d > 0) {
      thread_local SplitGraph g;
      thread_local std::vector<std::uint32_t> local;  // switch -> graph node (kNone)
      thread_local std::vector<std::uint32_t> nodes;  // graph node -> switch
      thread_local std::vector<const Hop*> cand;
      local.assign(num_switches(), kNone);
      nodes.assign(1, s);
      local[s] = 0;
      // The switches on shortest paths, level by level from s.
      struct Pending {
        std::uint32_t u;
        std::uint32_t v;
        DirLink link;
      };
      thread_local std::vector<Pending> arcs;
      arcs.clear();
      for (std::size_t q = 0; q < nodes.size(); ++q) {
        const std::uint32_t u = nodes[q];
        const std::uint8_t du = dist(dist_row(t), u);
        if (du == 0) continue;
        next_hops(u, t, du, cand);
        for (const Hop* h : cand) {
          if (local[h->peer] == kNone) {
            local[h->peer] = static_cast<std::uint32_t>(nodes.size());
            nodes.push_back(h->peer);
          }
          arcs.push_back({local[u], local[h->peer], dir_link(fabric(), h->port)});
        }
      }
      g.reset(nodes.size());
      for (const auto& p : arcs) g.add(p.u, p.v, p.link);
      auto load_of = [&](DirLink x) {
        return x < current.size() ? static_cast<double>(current[x]) : 0.0;
      };
      // Bisection over the level: at `hi` every arc can take all of w.
      double lo = 0, hi = 0;
      for (const auto& p : arcs)
        hi = std::max(hi, (load_of(p.link) + static_cast<double>(w)) / cap(p.link));
      auto fits = [&](double level) {
        for (auto& v : g.arcs())
          for (auto& arc : v)
            if (arc.forward) {
              const double room = level * cap(arc.link) - load_of(arc.link);
              arc.cap = room <= 0 ? 0 : static_cast<Load>(std::min(room, static_cast<double>(w)));
            }
        return g.max_flow(0, local[t], w) == w;
      };
      for (int i = 0; i < 40 && hi - lo > hi * 1e-9; ++i) {
        const double mid = (lo + hi) / 2;
        (fits(mid) ? hi : lo) = mid;
      }
      fits(hi);
      for (const auto& v : g.arcs())
        for (const auto& arc : v)
          if (arc.forward && arc.flow > 0) out.push_back({arc.link, arc.flow});
    }
    out.push_back({host_down(b), w});
    return true;
  }
  [[nodiscard]] std::uint32_t dist_row(std::uint32_t t) const { return row_of(t); }
};

}  // namespace

Result<std::unique_ptr<Model>> make_multipath(const Fabric& f, const Spec& spec) {
  if (spec.kind == Kind::kEcmp) {
    auto m = std::make_unique<Ecmp>(
        f, spec,
        "ecmp (each flow hashed over equal-cost next hops at every switch; " +
            std::to_string(std::max<std::uint32_t>(spec.flows_per_edge, 1)) +
            " flows per ring edge and rail, seed " + std::to_string(spec.seed) + ")");
    if (auto r = m->build(); !r) return std::unexpected(r.error());
    return std::unique_ptr<Model>(std::move(m));
  }
  auto m = std::make_unique<Adaptive>(
      f, spec,
      "adaptive (each ring edge's traffic starts on ecmp's hashed paths, " +
          std::to_string(std::max<std::uint32_t>(spec.flows_per_edge, 1)) +
          " flows per ring edge and rail, seed " + std::to_string(spec.seed) +
          ", and moves over the equal-cost paths while that lowers its most utilised link)");
  if (auto r = m->build(); !r) return std::unexpected(r.error());
  return std::unique_ptr<Model>(std::move(m));
}

}  // namespace fabricplace::routes
