// SPDX-License-Identifier: GPL-2.0-or-later
// Helpers shared by the tests.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>
#include <string>

#include "fabricplace/common/file_io.hpp"
#include "fabricplace/fabric/builder.hpp"
#include "fabricplace/fabric/fabric.hpp"
#include "fabricplace/fabric/sources.hpp"
#include "fabricplace/fabric/spec.hpp"

namespace fabricplace::test {

/// Thrown by the helpers below: the test fails, and unwinding runs every destructor (an
/// ibsim harness must stop its simulator), which std::abort would not.
struct TestSetupFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline std::string data(const std::string& rel) {
  return std::string(FABRICPLACE_TEST_DATA) + "/" + rel;
}
inline std::string fabric_file(const std::string& rel) {
  return data("fabrics/" + rel);
}

/// Every fabric a test builds passes Fabric::check() (hwloc's habit).
inline void expect_valid(const fabric::Fabric& f) {
  const auto problems = f.check();
  EXPECT_TRUE(problems.empty()) << "first invariant violation: "
                                << (problems.empty() ? "" : problems.front()) << " ("
                                << problems.size() << " in all)";
}

/// Loads a fabric source; a failure fails the test with the error text.
inline fabric::Fabric load(const std::string& source, const fabric::SourceOptions& o = {}) {
  auto f = fabric::load_fabric(source, o);
  if (!f) {
    ADD_FAILURE() << "loading " << source << ": " << f.error().to_string();
    throw TestSetupFailure("setup failed");
  }
  expect_valid(*f);
  return std::move(*f);
}

/// Generates a fabric from a spec; a failure fails the test with the error text.
inline fabric::Fabric gen(const std::string& spec) {
  auto f = fabric::generate(spec);
  if (!f) {
    ADD_FAILURE() << spec << ": " << f.error().to_string();
    throw TestSetupFailure("setup failed");
  }
  expect_valid(*f);
  return std::move(*f);
}

/// Builds; a failure fails the test with the error text.
inline fabric::Fabric build(fabric::FabricBuilder& b) {
  auto f = b.build();
  if (!f) {
    ADD_FAILURE() << f.error().to_string();
    throw TestSetupFailure(f.error().to_string());
  }
  expect_valid(*f);
  return std::move(*f);
}

inline std::string slurp(const std::string& path) {
  auto r = read_file(path);
  if (!r) {
    ADD_FAILURE() << r.error().to_string();
    return {};
  }
  return *r;
}

/// A fabric from a tiers CSV (`csv`) or topology.conf text, at `rate` (unset: the source's
/// default), built: the error of either step.
inline Result<fabric::Fabric> read_tree_source(const std::string& text, bool csv,
                                               std::optional<fabric::LinkRate> rate = {}) {
  fabric::FabricBuilder b("t");
  fabric::SourceOptions o;
  o.link_rate = rate;
  auto r = csv ? fabric::read_tiers_csv(text, "t.csv", o, b)
               : fabric::read_slurm_topology(text, "topology.conf", o, b);
  if (!r) return std::unexpected(r.error());
  return b.build();
}

}  // namespace fabricplace::test
