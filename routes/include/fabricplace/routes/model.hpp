// SPDX-License-Identifier: GPL-2.0-or-later
// Route models: where a ring edge's traffic goes, as load on each directed link. The one
// route interface of the project: the simulator, the route-aware ring order, `place
// --routes` and `rankfile --route-aware` all go through Model (docs/routes.md).
//
// Models
// - ftree, minhop, updn: opensm's static routing engines, modelled (table.hpp); lfts:FILE,
//   the exact tables of an opensm LFT dump. One path per (source, destination) end port: an
//   edge's whole traffic follows it (LMC 0; NCCL's several QPs share the path).
// - ecmp: what an Ethernet (RoCE) fabric does: every switch hashes each flow onto one of its
//   equal-cost next hops (shortest paths in switch hops). A ring edge is `flows_per_edge`
//   flows (NCCL channels x QPs per connection, each QP its own UDP source port) per rail,
//   each carrying an equal share and hashed independently (seeded, deterministic: the same
//   seed, job salt, hosts and fabric give the same paths).
// - adaptive: a fluid model of adaptive routing (or congestion-aware packet spraying): each
//   edge's flows start on ecmp's hashed paths and its traffic then moves over the equal-cost
//   paths, off the most utilised (load / capacity) links, against what the links already
//   carry (`current`) and the ring's other edges; for the same flows and seed no link ends
//   more utilised than ecmp's most utilised one (docs/routes.md).
//
// Contract
// - Load is fixed point: kEdge is one ring edge's whole traffic. Integer, so adding and
//   removing a job's load is exact and results do not depend on summation order. Splits
//   hand any remainder to the lowest-numbered parts, so an edge's load over any cut between
//   its ends sums to exactly kEdge.
// - A host with several end ports (rails) sends rail k to the peer's rail k: the edge's
//   traffic is split evenly over min(rails of the two hosts) rail pairs.
// - Models are immutable once built; edge_load() may be called from several threads.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fabricplace/common/error.hpp"
#include "fabricplace/routes/table.hpp"

namespace fabricplace::routes {

/// Load on a directed link; kEdge = one ring edge's whole traffic.
using Load = std::uint64_t;
/// 720,720 = lcm(1..16): an edge split over up to 16 equal parts is exact.
inline constexpr Load kEdge = 720720;
/// A load in ring edges, for reports.
inline double edges(Load l) {
  return static_cast<double>(l) / static_cast<double>(kEdge);
}
/// A load in ring edges as reports print it: "3", "2.5", "0.33" (two decimals at most).
std::string load_str(double edges);

struct LinkLoad {
  DirLink link;
  Load load;
};

enum class Kind : std::uint8_t { kFtree, kMinhop, kUpdn, kLfts, kEcmp, kAdaptive };
std::string_view to_string(Kind k);  ///< "ftree", "minhop", "updn", "lfts", "ecmp", "adaptive"

/// A route model as `--routes` names it.
struct Spec {
  bool automatic = true;  ///< "auto": chosen by fabric (make_model())
  Kind kind = Kind::kFtree;
  std::string lfts_file;  ///< Kind::kLfts: the opensm-lfts.dump to read
  /// ecmp: flows per ring edge and rail: NCCL channels per peer x QPs per connection
  /// (NCCL_NCHANNELS_PER_NET_PEER, NCCL_IB_QPS_PER_CONNECTION; docs/routes.md).
  std::uint32_t flows_per_edge = 2;
  std::uint64_t seed = 1;  ///< ecmp: the hash seed
  /// "auto", "ftree", ..., "lfts:FILE".
  [[nodiscard]] std::string name() const;
};
/// One model name: auto, ftree, minhop, updn, ecmp, adaptive or lfts:FILE (kUsage otherwise).
Result<Spec> parse_spec(std::string_view name);
/// A comma-separated list (`simulate --routes ftree,adaptive`): each at most once.
Result<std::vector<Spec>> parse_specs(std::string_view list);

class Model {
 public:
  virtual ~Model() = default;
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  [[nodiscard]] Kind kind() const { return kind_; }
  /// The model's short name in reports: "ftree", ..., "lfts:FILE" for an LFT dump.
  [[nodiscard]] const std::string& label() const { return label_; }
  void set_label(std::string l) { label_ = std::move(l); }
  /// The model that ran and why, for reports: "ecmp (2 flows per ring edge, seed 1; chosen
  /// for an Ethernet fabric)".
  [[nodiscard]] const std::string& description() const { return description_; }
  [[nodiscard]] const Fabric& fabric() const { return *fabric_; }
  [[nodiscard]] const Ends& ends() const { return ends_; }

  /// Appends the load one ring edge src -> dst puts on each directed link (a link may come
  /// more than once); nothing when src == dst or the edge stays on NVLink (on_nvlink). `salt` tells
  /// apart the flows of different jobs between the same hosts (ecmp hashes it; the other models
  /// ignore it). `current` is the load the links already carry (indexed by DirLink; empty: an idle
  /// fabric): adaptive steers around it, the other models ignore it. False, with nothing appended,
  /// when the model has no route for the pair.
  bool edge_load(HostId src, HostId dst, std::uint64_t salt, std::vector<LinkLoad>& out,
                 std::span<const Load> current = {}) const {
    if (on_nvlink(src, dst)) return true;
    return load_edge(src, dst, salt, current, out);
  }

  /// Whether the edge src -> dst stays on NVLink: both hosts in one NVLink domain
  /// (fabric::Fabric::domain_of), where NCCL's multi-node NVLink carries it and the network
  /// none of it. Such an edge loads no link, in every model.
  [[nodiscard]] bool on_nvlink(HostId src, HostId dst) const {
    const auto d = fabric_->domain_of(src);
    return d != fabric::kNone && d == fabric_->domain_of(dst);
  }

  /// Appends the load of a whole ring (host i -> i + 1, wrapping; nothing for fewer than two
  /// hosts; nothing for an edge on NVLink) over `background` (the load already on the links;
  /// may be empty). Edge by edge,
  /// each seeing the background and the ring's edges so far; adaptive then re-balances the
  /// ring's edges against each other. False, with nothing appended, when an edge has no
  /// route.
  bool ring_load(std::span<const HostId> ring, std::uint64_t salt, std::span<const Load> background,
                 std::vector<LinkLoad>& out) const {
    return load_ring(ring, salt, background, out);
  }

  /// The static table, for the table models (nullptr for ecmp and adaptive).
  [[nodiscard]] virtual const Table* table() const { return nullptr; }

  /// Sources whose edges to any destination other than themselves load the same links
  /// between switches share a class, named by its lowest-numbered host. Table models: the
  /// hosts whose end ports attach, rail by rail, to the same switches (a path leaves the
  /// source's switch by the destination's table entries alone) and that are in the same
  /// NVLink domain (or in none: an edge inside a domain loads nothing). ecmp and adaptive hash or
  /// steer each source's own flows: every host is its own class. An edge's host links are
  /// its two hosts' own whatever the class.
  [[nodiscard]] HostId switch_path_class(HostId src) const {
    return classes_.empty() ? src : classes_[fabric::idx(src)];
  }

  void set_description(std::string d) { description_ = std::move(d); }

 protected:
  Model(const Fabric& f, Kind kind, std::string description)
      : fabric_(&f),
        kind_(kind),
        label_(std::string(to_string(kind))),
        description_(std::move(description)),
        ends_(f) {}
  /// The rail pairs of an edge: (source end, destination end, share of kEdge); empty when
  /// either host has no end port.
  void rail_pairs(HostId src, HostId dst,
                  std::vector<std::tuple<std::uint32_t, std::uint32_t, Load>>& out) const;
  virtual bool load_edge(HostId src, HostId dst, std::uint64_t salt, std::span<const Load> current,
                         std::vector<LinkLoad>& out) const = 0;
  /// The default routes edge by edge and ignores `background`: a model whose paths depend
  /// on the load overrides it (Adaptive).
  virtual bool load_ring(std::span<const HostId> ring, std::uint64_t salt,
                         std::span<const Load> background, std::vector<LinkLoad>& out) const;
  /// Per host: its switch_path_class() (empty: every host its own).
  std::vector<HostId> classes_;

 private:
  const Fabric* fabric_;
  Kind kind_;
  std::string label_;
  std::string description_;
  Ends ends_;
};

/// Builds the model `spec` names on `f`, reading the LFT dump of lfts:FILE. "auto": ecmp on
/// an Ethernet fabric, else ftree where opensm's ftree engine would route the fabric, else
/// minhop (what opensm falls back to). Errors: the engine's own (ftree on a fabric it
/// refuses), the dump's (file and line), a table too large.
Result<std::unique_ptr<const Model>> make_model(const Fabric& f, const Spec& spec);

/// Whether `f` is an Ethernet (RoCE) fabric: its links have Ethernet rates (a tiers CSV, or a
/// source given Ethernet rates; Fabric::link_layer()).
bool is_ethernet(const Fabric& f);

/// Splits `total` into `n` parts, the remainder to the first ones: part k of n.
inline Load share(Load total, std::uint32_t n, std::uint32_t k) {
  return total / n + (k < total % n ? 1 : 0);
}

/// Adds a ring's load (host i -> i + 1, wrapping; none for fewer than two hosts) to `load`,
/// sized 2 x links (resized if smaller), as Model::ring_load() over what `load` already
/// holds. False, with nothing added, if some edge has no route.
bool add_ring_load(const Model& m, std::span<const HostId> ring, std::uint64_t salt,
                   std::vector<Load>& load);

/// The first edge of `ring` (host i -> i + 1, the last back to the first) that `m` has no
/// route for (a hole or a loop in an LFT dump, parts of the fabric that do not reach each
/// other); nothing when every edge has one.
std::optional<std::pair<HostId, HostId>> unrouted_edge(const Model& m,
                                                       std::span<const HostId> ring);
/// What every caller says of such an edge (docs/routes.md: callers count it as carrying
/// nothing and say so): "ring edge node020 -> node021 has no route on the lfts:FILE routes
/// (a hole or a loop in the switches' tables, or parts of the fabric that do not reach each
/// other)". place, rankfile --route-aware and simulate add what they did with it.
std::string no_route_text(const Model& m, HostId src, HostId dst);

/// The most load on any switch-to-switch directed link.
Load max_switch_link_load(const Fabric& f, std::span<const Load> load);

}  // namespace fabricplace::routes
