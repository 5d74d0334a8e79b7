// SPDX-License-Identifier: GPL-2.0-or-later
#include "fabricplace/routes/model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

#include "fabricplace/common/file_io.hpp"
#include "fabricplace/common/strings.hpp"
#include "multipath.hpp"

namespace fabricplace::routes {

std::string_view to_string(Kind k) {
  switch (k) {
    case Kind::kFtree:
      return "ftree";
    case Kind::kMinhop:
      return "minhop";
    case Kind::kUpdn:
      return "updn";
    case Kind::kLfts:
      return "lfts";
    case Kind::kEcmp:
      return "ecmp";
    case Kind::kAdaptive:
      return "adaptive";
  }
  return "?";
}

std::string load_str(double edges) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f", std::isfinite(edges) ? edges : 0.0);
  std::string s = buf;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

std::string Spec::name() const {
  if (automatic) return "auto";
  if (kind == Kind::kLfts) return "lfts:" + lfts_file;
  return std::string(to_string(kind));
}

Result<Spec> parse_spec(std::string_view name) {
  Spec s;
  const auto n = str::trim(name);
  if (n == "auto") return s;
  s.automatic = false;
  if (n.starts_with("lfts:")) {
    s.kind = Kind::kLfts;
    s.lfts_file = std::string(n.substr(5));
    if (s.lfts_file.empty()) {
      return fail(ErrorCode::kUsage, "--routes lfts:FILE needs the opensm-lfts.dump file name");
    }
    return s;
  }
  for (Kind k : {Kind::kFtree, Kind::kMinhop, Kind::kUpdn, Kind::kEcmp, Kind::kAdaptive}) {
    if (n == to_string(k)) {
      s.kind = k;
      return s;
    }
  }
  return fail(ErrorCode::kUsage,
              "unknown route model " + str::quoted(n) +
                  ": expected auto, ftree, minhop, updn, ecmp, adaptive or lfts:FILE");
}

Result<std::vector<Spec>> parse_specs(std::string_view list) {
  std::vector<Spec> out;
  if (str::trim(list).empty()) return fail(ErrorCode::kUsage, "no route model given");
  for (auto part : str::split(list, ',')) {
    if (str::trim(part).empty()) {
      return fail(ErrorCode::kUsage, "an empty route model name in " + str::quoted(list));
    }
    auto s = parse_spec(part);
    if (!s) return std::unexpected(s.error());
    for (const auto& q : out) {
      if (q.name() == s->name()) {
        return fail(ErrorCode::kUsage, "route model " + str::quoted(s->name()) + " given twice");
      }
    }
    out.push_back(std::move(*s));
  }
  if (out.empty()) return fail(ErrorCode::kUsage, "no route model given");
  return out;
}

void Model::rail_pairs(HostId src, HostId dst,
                       std::vector<std::tuple<std::uint32_t, std::uint32_t, Load>>& out) const {
  out.clear();
  const auto s = ends_.of_host(src);
  const auto d = ends_.of_host(dst);
  const auto n = static_cast<std::uint32_t>(std::min(s.size(), d.size()));
  for (std::uint32_t k = 0; k < n; ++k) out.emplace_back(s[k], d[k], share(kEdge, n, k));
}

bool Model::load_ring(std::span<const HostId> ring, std::uint64_t salt,
                      std::span<const Load> /*background*/, std::vector<LinkLoad>& out) const {
  // Edge by edge. The models whose paths depend on the load (adaptive) override this; the
  // others never read it.
  const std::size_t start = out.size();
  if (ring.size() < 2) return true;
  for (std::size_t i = 0; i < ring.size(); ++i)
    if (!edge_load(ring[i], ring[(i + 1) % ring.size()], salt, out)) {
      out.resize(start);
      return false;
    }
  return true;
}

namespace {

/// ftree, minhop, updn, lfts: one path per end pair.
class TableModel final : public Model {
 public:
  TableModel(const Fabric& f, Kind kind, Table table)
      : Model(f, kind, std::string(to_string(kind)) + " (" + table.source() + ")"),
        table_(std::move(table)) {
    // Classes: hosts by the switches their end ports attach to, rail by rail, and by their
    // NVLink domain (an edge to a host of the source's own domain loads nothing: on_nvlink).
    std::map<std::pair<std::vector<NodeId>, std::uint32_t>, HostId> first;
    std::pair<std::vector<NodeId>, std::uint32_t> key;
    classes_.resize(f.num_hosts());
    for (std::uint32_t h = 0; h < f.num_hosts(); ++h) {
      key.first.clear();
      for (auto e : ends().of_host(HostId{h})) key.first.push_back(table_.attached(e));
      key.second = f.domain_of(HostId{h});
      classes_[h] = first.try_emplace(key, HostId{h}).first->second;
    }
  }

  [[nodiscard]] const Table* table() const override { return &table_; }

 protected:
  bool load_edge(HostId src, HostId dst, std::uint64_t /*salt*/, std::span<const Load> /*current*/,
                 std::vector<LinkLoad>& out) const override {
    if (src == dst) return true;
    thread_local std::vector<std::tuple<std::uint32_t, std::uint32_t, Load>> pairs;
    thread_local std::vector<DirLink> path;
    rail_pairs(src, dst, pairs);
    if (pairs.empty()) return false;
    const std::size_t start = out.size();
    for (const auto& [a, b, w] : pairs) {
      path.clear();
      if (!table_.path(a, b, path)) {
        out.resize(start);
        return false;
      }
      for (DirLink d : path) out.push_back({d, w});
    }
    return true;
  }

 private:
  Table table_;
};

Result<Table> table_for(const Fabric& f, const Spec& spec) {
  switch (spec.kind) {
    case Kind::kFtree:
      return ftree_routes(f);
    case Kind::kMinhop:
      return minhop_routes(f);
    case Kind::kUpdn:
      return updn_routes(f);
    case Kind::kLfts: {
      auto text = read_file(spec.lfts_file);
      if (!text) return std::unexpected(text.error());
      return lft_routes(f, *text, spec.lfts_file);
    }
    default:
      break;
  }
  return fail(ErrorCode::kUsage, "not a table model");
}

}  // namespace

bool is_ethernet(const Fabric& f) {
  return f.link_layer() == fabric::LinkLayer::kEthernet;
}

Result<std::unique_ptr<const Model>> make_model(const Fabric& f, const Spec& spec) {
  Spec s = spec;
  std::string why;
  std::string ftree_refusal;
  if (s.automatic) {
    if (is_ethernet(f)) {
      s.kind = Kind::kEcmp;
      why = "chosen: an Ethernet (RoCE) fabric";
    } else {
      auto t = ftree_routes(f);
      if (t) {
        auto m = std::make_unique<TableModel>(f, Kind::kFtree, std::move(*t));
        m->set_description(m->description() +
                           "; chosen: an InfiniBand fabric that opensm's ftree engine routes");
        return std::unique_ptr<const Model>(std::move(m));
      }
      if (t.error().code != ErrorCode::kUnsupported) return std::unexpected(t.error());
      s.kind = Kind::kMinhop;
      why = "chosen: " + t.error().message;
      // A fabric too large for a static table: adaptive, which needs none.
      if (const auto bytes = Table::bytes_for(f); bytes > kMaxTableBytes) {
        s.kind = Kind::kAdaptive;
        why = "chosen: static route tables would take " + std::to_string(bytes >> 20) +
              " MiB (at most " + std::to_string(kMaxTableBytes >> 20) + ")";
      }
    }
  }
  std::unique_ptr<Model> m;
  if (s.kind == Kind::kEcmp || s.kind == Kind::kAdaptive) {
    auto mp = make_multipath(f, s);
    if (!mp) return std::unexpected(mp.error());
    m = std::move(*mp);
  } else {
    auto t = table_for(f, s);
    if (!t) return std::unexpected(t.error());
    m = std::make_unique<TableModel>(f, s.kind, std::move(*t));
    if (s.kind == Kind::kLfts) m->set_label("lfts:" + s.lfts_file);
  }
  if (!why.empty()) m->set_description(m->description() + "; " + why);
  return std::unique_ptr<const Model>(std::move(m));
}

bool add_ring_load(const Model& m, std::span<const HostId> ring, std::uint64_t salt,
                   std::vector<Load>& load) {
  load.resize(std::max<std::size_t>(load.size(), 2 * m.fabric().num_links()), 0);
  std::vector<LinkLoad> out;
  if (!m.ring_load(ring, salt, load, out)) return false;
  for (const auto& [d, l] : out) load[d] += l;
  return true;
}

std::optional<std::pair<HostId, HostId>> unrouted_edge(const Model& m,
                                                       std::span<const HostId> ring) {
  if (ring.size() < 2) return std::nullopt;
  std::vector<LinkLoad> out;
  for (std::size_t i = 0; i < ring.size(); ++i) {
    const HostId a = ring[i], b = ring[(i + 1) % ring.size()];
    out.clear();
    if (!m.edge_load(a, b, 0, out)) return std::pair{a, b};
  }
  return std::nullopt;
}

std::string no_route_text(const Model& m, HostId src, HostId dst) {
  const auto& f = m.fabric();
  return "ring edge " + f.host(src).name + " -> " + f.host(dst).name + " has no route on the " +
         m.label() + " routes (" +
         (m.table() ? "a hole or a loop in the switches' tables, or parts of the fabric that do "
                      "not reach each other"
                    : "parts of the fabric that do not reach each other") +
         ")";
}

Load max_switch_link_load(const Fabric& f, std::span<const Load> load) {
  Load m = 0;
  for (std::size_t d = 0; d < load.size(); ++d) {
    if (load[d] > m && switch_to_switch(f, static_cast<DirLink>(d))) m = load[d];
  }
  return m;
}

}  // namespace fabricplace::routes
