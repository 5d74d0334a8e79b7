// The checks every target that builds a fabric runs on it.
#pragma once

#include <string>

#include "fabricplace/fabric/builder.hpp"
#include "fabricplace/fabric/fabric.hpp"
#include "fabricplace/fabric/json_io.hpp"
#include "fuzz_util.hpp"

namespace fabricplace::fuzz {

/// Every fabric a source builds: its invariants hold (Fabric::check), and the canonical JSON
/// round trip is exact: to_json -> read_json -> build -> to_json gives the same bytes.
inline void check_fabric(const fabric::Fabric& f) {
  const auto problems = f.check();
  if (!problems.empty()) violated("Fabric::check() of a built fabric", problems.front());
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
}

}  // namespace fabricplace::fuzz
