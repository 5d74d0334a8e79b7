// SPDX-License-Identifier: GPL-2.0-or-later
#include "fabricplace/common/limits.hpp"

#include <cstdlib>

#include "fabricplace/common/strings.hpp"

namespace fabricplace {
namespace {

void override_from(const char* var, std::uint64_t& value, std::uint64_t scale = 1) {
  const char* s = std::getenv(var);
  if (!s) return;
  const auto v = str::parse_uint(s, UINT64_MAX / scale);
  if (v && *v > 0) value = *v * scale;
}

Limits from_environment() {
  Limits l;
  override_from("FABRICPLACE_MAX_INPUT_MB", l.input_bytes, std::uint64_t{1} << 20);
  override_from("FABRICPLACE_MAX_NODES", l.nodes);
  override_from("FABRICPLACE_MAX_PORTS", l.ports);
  override_from("FABRICPLACE_MAX_HOSTLIST", l.hostlist_names);
  override_from("FABRICPLACE_MAX_JSON_DEPTH", l.json_depth);
  return l;
}

}  // namespace

const Limits& limits() {
  static const Limits l = from_environment();
  return l;
}

}  // namespace fabricplace
