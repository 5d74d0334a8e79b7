// SPDX-License-Identifier: GPL-2.0-or-later
// Bandwidth: what the network gives a job's ring, with the running jobs' rings already on
// it. The one ring measure of the project (docs/placement.md, "The objective"): the fabric
// policy's objective, `place --explain`, the baselines' measures and the simulator's rates
// all come from it.
//
// Model
// - Every ring edge (host i -> i + 1, wrapping) puts its traffic on the links the route
//   model in force gives it (routes::Model), as load in ring edges (routes::kEdge = one
//   edge's whole traffic).
// - A directed link of capacity C carrying load L gives each unit of load C / L; a ring runs
//   at its worst share, so its communication slowdown is
//       s = max(1, host_gbps x max over its links of (L / kEdge) / C),
//   where host_gbps is a ring edge's full speed (a host's injection rate: its host link's
//   nominal rate times its rails). s = 1: the network gives the job all it can inject.
// - Capacity is the link's rate as read (a degraded link is slower; a link of unknown rate
//   counts at the fastest known, routes::link_gbps), times `unhealthy_capacity` for a link
//   whose error counters passed their thresholds. No separate penalty: a bad link enters
//   only through its capacity.
//
// Contract
// - Traffic holds the running jobs and their load; add() and remove() keep every job's
//   slowdown current, exactly (integer loads: the order of adds and removes does not
//   matter). Read-only use (forecast) may run from several threads; add/remove may not.
// - forecast() does not change the Traffic: it measures what placing a ring would do.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "fabricplace/fabric/fabric.hpp"
#include "fabricplace/placement/running.hpp"
#include "fabricplace/routes/model.hpp"

namespace fabricplace::placement {

/// Link capacities as decisions see them.
struct Capacity {
  std::vector<double> gbps;  ///< per directed link (routes::DirLink), Gb/s, > 0
  double host_gbps = 1;      ///< a ring edge's full speed: host link nominal rate x rails
  std::vector<double> host_per_gbps;  ///< per directed link: host_gbps / gbps
  /// Per directed link: both ends are switches.
  std::vector<std::uint8_t> interswitch;
};
/// `unhealthy_capacity`: the fraction of its rate a link past its error-counter thresholds
/// counts at (policy.conf).
Capacity link_capacity(const fabric::Fabric& f, double unhealthy_capacity);

/// The slowdown one more ring edge would see over a group of directed links with the load
/// `bg` on them (empty: an idle fabric): the fabric policy's per-block and per-pod estimate.
/// `fluid` (adaptive routing): the switches spread the edge over all of them, so the group
/// counts as one pipe, max(1, host_gbps x (load + 1) / capacity) over its totals. Otherwise a
/// static table or ecmp's hash puts it on one of them: the mean over the links of each one's
/// slowdown with it. 1 for an empty group.
double edge_slowdown(const Capacity& c, bool fluid, std::span<const routes::Load> bg,
                     std::span<const routes::DirLink> links);

/// Groups of directed links whose edge_slowdown the fabric policy reads for every decision
/// (each block's uplinks, each pod's links to the core: Context::groups). A Traffic made with
/// them keeps each group's value current as jobs come and go, so that a decision reads one
/// number per group, not every link.
struct LinkGroups {
  bool fluid = false;                  ///< edge_slowdown's `fluid`
  std::vector<std::uint32_t> start;    ///< group i: links[start[i], start[i + 1])
  std::vector<routes::DirLink> links;  ///< every group's links, group after group
  /// Directed link d: its groups are member[link_start[d], link_start[d + 1]).
  std::vector<std::uint32_t> link_start, member;
  std::vector<double> idle;  ///< per group: its edge_slowdown on an idle fabric

  [[nodiscard]] std::size_t size() const { return idle.size(); }
  [[nodiscard]] std::span<const routes::DirLink> links_of(std::size_t i) const {
    return std::span(links).subspan(start[i], start[i + 1] - start[i]);
  }
};
/// The groups, in the order given, over a fabric of c.gbps.size() directed links.
LinkGroups link_groups(const Capacity& c, bool fluid,
                       std::span<const std::vector<routes::DirLink>> groups);

/// The load on the fabric: the running jobs' rings on a route model.
class Traffic {
 public:
  /// An idle fabric. The model, capacity and groups must outlive the Traffic; with `groups`
  /// it keeps their edge_slowdown current (group_slowdown).
  Traffic(const routes::Model& m, const Capacity& c, const LinkGroups* groups = nullptr);

  /// Adds a running job's ring (hosts in rank order; fewer than two hosts add no load) over
  /// what the links already carry; `salt` tells its flows apart (ecmp). Returns its handle,
  /// or nothing (and adds nothing) when some edge has no route.
  std::optional<std::uint32_t> add(std::span<const fabric::HostId> ring, std::uint64_t salt,
                                   std::string id = {});
  /// Adds every running job read from a source (placement/running.hpp), each salted with
  /// running_salt(); returns the ids of those left out because some edge of their ring has
  /// no route.
  std::vector<std::string> add(std::span<const RunningJob> jobs);
  /// Removes a job added before (its handle may be reused).
  void remove(std::uint32_t job);

  /// Load per directed link (routes::DirLink).
  [[nodiscard]] std::span<const routes::Load> load() const { return load_; }
  /// A running job's communication slowdown now (>= 1).
  [[nodiscard]] double slowdown(std::uint32_t job) const { return jobs_[job].slowdown; }
  [[nodiscard]] std::uint32_t nodes(std::uint32_t job) const { return jobs_[job].nodes; }
  [[nodiscard]] const std::string& id(std::uint32_t job) const { return jobs_[job].id; }
  /// The directed links a job loads and the load it puts on each (ascending link).
  [[nodiscard]] std::span<const std::pair<routes::DirLink, routes::Load>> links(
      std::uint32_t job) const {
    return jobs_[job].links;
  }
  /// Jobs running now.
  [[nodiscard]] std::size_t size() const { return live_; }
  /// Handles are below this.
  [[nodiscard]] std::size_t capacity_jobs() const { return jobs_.size(); }
  [[nodiscard]] bool live(std::uint32_t job) const { return jobs_[job].live; }
  /// The jobs with load on directed link d.
  [[nodiscard]] std::span<const std::uint32_t> on(routes::DirLink d) const;

  /// The groups it keeps current (nullptr: none), and a group's edge_slowdown now.
  [[nodiscard]] const LinkGroups* groups() const { return groups_; }
  [[nodiscard]] double group_slowdown(std::uint32_t g) const { return group_slowdown_[g]; }

  [[nodiscard]] const routes::Model& model() const { return *model_; }
  [[nodiscard]] const Capacity& capacity() const { return *cap_; }

 private:
  struct Job {
    std::string id;
    std::vector<std::pair<routes::DirLink, routes::Load>> links;
    std::uint32_t nodes = 0;
    double slowdown = 1;
    bool live = false;
  };
  double measure(const Job& j) const;
  /// Recomputes the groups of these links (their loads changed).
  void regroup(std::span<const std::pair<routes::DirLink, routes::Load>> links);

  const routes::Model* model_;
  const Capacity* cap_;
  const LinkGroups* groups_ = nullptr;
  std::vector<double> group_slowdown_;
  std::vector<std::uint8_t> group_dirty_;
  std::vector<std::uint32_t> dirty_;
  std::vector<routes::Load> load_;
  std::vector<Job> jobs_;
  std::vector<std::uint32_t> free_;
  std::size_t live_ = 0;
  std::vector<std::vector<std::uint32_t>> on_;  ///< per directed link, lazily sized
};

/// What placing a ring would do.
struct Forecast {
  bool routed = true;  ///< false: some edge has no route (the rest is then not meaningful)
  /// The job's predicted communication slowdown s (see Model).
  double slowdown = 1;
  /// Its ring's most utilised directed link (load / capacity; ties: a switch-to-switch link
  /// before a host link, then the lowest link), and
  /// that link's load in ring edges without and with the job; kNone when the ring has no
  /// edge (fewer than two hosts).
  routes::DirLink bottleneck = fabric::kNone;
  double before = 0, after = 0;
  /// The job's share of its bottleneck link, as a fraction of a ring edge's full speed
  /// (1 / s, at most 1).
  [[nodiscard]] double share() const { return 1.0 / slowdown; }
  /// The running jobs it slows down, and by how much in all: the sum over them of nodes x
  /// (slowdown after - slowdown before).
  std::uint32_t slowed = 0;
  double others = 0;
};

/// The forecast of a whole ring (hosts in rank order) over `traffic` (nullptr: an idle
/// fabric), its flows salted with `salt`.
Forecast forecast_ring(const routes::Model& m, const Capacity& c, const Traffic* traffic,
                       std::span<const fabric::HostId> ring, std::uint64_t salt);

/// The same for some of a ring's edges only (src, dst): the fabric policy scores candidate
/// sets on their inter-block edges, as an edge inside a block loads only its two hosts'
/// own links (node-exclusive jobs, healthy hosts: never a bottleneck beyond s = 1).
///
/// Each edge is routed over `traffic`'s load alone (adaptive steers every edge around the
/// running jobs, not around the other edges of the same call: a candidate's score; the
/// chosen ring is then evaluated whole, with forecast_ring).
///
/// `cache` (optional): the edges one search has routed already, with the same model, salt
/// and traffic (candidate sets share most of their edges).
struct EdgeCache {
  std::unordered_map<std::uint64_t, std::pair<std::uint32_t, std::uint32_t>> at;  // -> loads
  std::vector<routes::LinkLoad> loads;
};
Forecast forecast_edges(const routes::Model& m, const Capacity& c, const Traffic* traffic,
                        std::span<const std::pair<fabric::HostId, fabric::HostId>> edges,
                        std::uint64_t salt, EdgeCache* cache = nullptr);

/// Readable form of a forecast's bottleneck: "leaf01[33] -> spine02[1]".
std::string bottleneck_name(const fabric::Fabric& f, const Forecast& fc);

}  // namespace fabricplace::placement
