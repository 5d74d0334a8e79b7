// SPDX-License-Identifier: GPL-2.0-or-later
// A fabric loaded once per process for the targets that parse against one (states, routes).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include "fabricplace/fabric/sources.hpp"
#include "fuzz_util.hpp"

namespace fabricplace::fuzz {

/// `source` is a spec or a path relative to tests/data; loading failure aborts.
inline fabric::Fabric load_fixed(const std::string& source) {
  const bool spec = source.rfind("fat2:", 0) == 0 || source.rfind("fat3:", 0) == 0 ||
                    source.rfind("rail:", 0) == 0;
  auto r = fabric::load_fabric(spec ? source : data_dir() + "/" + source);
  if (!r) {
    std::fprintf(stderr, "fuzz: cannot load the fixed fabric: %s\n", r.error().to_string().c_str());
    std::abort();
  }
  return std::move(*r);
}

}  // namespace fabricplace::fuzz
