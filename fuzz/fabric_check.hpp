// SPDX-License-Identifier: GPL-2.0-or-later
// The checks every target that builds a fabric runs on it: invariants, the canonical JSON
// round trip, and every exporter (none may fail or throw; an ibnetdiscover export reads back).
#pragma once

#include <string>

#include "fabricplace/fabric/builder.hpp"
#include "fabricplace/fabric/export.hpp"
#include "fabricplace/fabric/fabric.hpp"
#include "fabricplace/fabric/json_io.hpp"
#include "fabricplace/fabric/report.hpp"
#include "fabricplace/fabric/slurm_tree.hpp"
#include "fabricplace/fabric/sources.hpp"
#include "fuzz_util.hpp"

namespace fabricplace::fuzz {

/// Every fabric a source builds: its invariants hold (Fabric::check), and the canonical JSON
/// round trip is exact: to_json -> read_json -> build -> to_json gives the same bytes.
/// Above this many nodes only Fabric::check() runs: a 60-byte topology.conf can name 22,500
/// hosts, and the round trip and exporters of that cost seconds under ASan; the parser and the
/// builder have been exercised by then.
inline constexpr std::size_t kFullCheckNodes = 8192;

inline void check_fabric(const fabric::Fabric& f) {
  const auto problems = f.check();
  if (!problems.empty()) violated("Fabric::check() of a built fabric", problems.front());
  if (f.num_nodes() > kFullCheckNodes) return;
  const std::string once = fabric::to_json(f);
  fabric::FabricBuilder b("fuzz round trip");
  const auto r = fabric::read_json(once, "round-trip.json", b);
  if (!r) violated("read_json(to_json(fabric)) failed", r.error().to_string());
  auto g = b.build();
  if (!g) violated("build() after read_json(to_json(fabric)) failed", g.error().to_string());
  const auto again = g->check();
  if (!again.empty()) violated("Fabric::check() after the JSON round trip", again.front());
  const std::string twice = fabric::to_json(*g);
  if (once != twice)
    violated("to_json(read_json(to_json(f))) != to_json(f)", first_difference(once, twice));

  // Exporters: `fabric show [--json]`, `fabric export --format slurm-topology|slurm-features|
  // dot|ibnetdiscover|ibsim-net`.
  (void)fabric::show_text(f);
  (void)fabric::show_json(f);
  const auto tree = fabric::slurm_tree(f);
  (void)fabric::to_slurm_topology(f, tree);
  (void)fabric::to_slurm_features(f, tree);
  (void)fabric::to_dot(f);
  if (fabric::fits_infiniband(f)) {
    (void)fabric::to_ibsim_net(f);
    const std::string dump = fabric::to_ibnetdiscover(f);
    fabric::FabricBuilder d("fuzz export");
    const auto rd = fabric::read_ibnetdiscover(dump, "export.ibnetdiscover.txt", d);
    if (!rd) violated("read_ibnetdiscover(to_ibnetdiscover(f)) failed", rd.error().to_string());
    auto h = d.build();
    if (!h)
      violated("build() of read_ibnetdiscover(to_ibnetdiscover(f)) failed", h.error().to_string());
  }
}

}  // namespace fabricplace::fuzz
