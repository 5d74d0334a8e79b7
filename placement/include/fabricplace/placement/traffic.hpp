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

/// The load on the fabric: the running jobs' rings on a route model.
class Traffic {
 public:
  /// An idle fabric. The model and capacity must outlive the Traffic.
  Traffic(const routes::Model& m, const Capacity& c);

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

  const routes::Model* model_;
  const Capacity* cap_;
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
