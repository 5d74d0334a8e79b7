// fuzz_host_map: placement::parse_host_map() over the compact host map
// (`fabric export --format hostmap`, read by the SPANK plugin at every launch). A map that
// parses must round-trip: its text written by to_host_map_text() parses again and writes the
// same bytes; the Lua table writer must not fail on it; resolve_hosts() over all its names
// gives every host once.
#include "fabricplace/common/hostlist.hpp"
#include "fabricplace/placement/rank_layout.hpp"
#include "fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fabricplace;
  auto m = placement::parse_host_map(fuzz::text_of(data, size), "fabric.hostmap");
  if (!m) {
    (void)m.error().to_string();
    return 0;
  }
  const std::string once = placement::to_host_map_text(*m);
  auto back = placement::parse_host_map(once, "fabric.hostmap");
  if (!back) fuzz::violated("parse_host_map(to_host_map_text(map)) failed", back.error().to_string());
  const std::string twice = placement::to_host_map_text(*back);
  if (once != twice) fuzz::violated("host map text not stable", fuzz::first_difference(once, twice));
  (void)placement::to_lua_table(*m);
  if (m->names.size() <= 4096) {
    auto all = placement::resolve_hosts(*m, hostlist::compress(m->names), "fuzz");
    if (all) fuzz::require(all->size() == m->names.size(), "resolve_hosts(compress(names)): not every host once");
  }
  return 0;
}
