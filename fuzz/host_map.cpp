// SPDX-License-Identifier: GPL-2.0-or-later
// fuzz_host_map: placement::parse_host_map() over the compact host map
// (`fabric export --format hostmap`, read by the SPANK plugin at every launch). A map that
// parses must round-trip: its text written by to_host_map_text() parses again and writes the
// same bytes; the Lua table writer must not fail on it; resolve_hosts() over all its names
// gives every host once; a ring over all its hosts is written in every rank file format.
#include "fabricplace/common/hostlist.hpp"
#include "fabricplace/placement/rank_layout.hpp"
#include "fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fabricplace;
  auto m = placement::parse_host_map(fuzz::text_of(data, size), "fabric.hostmap");
  if (!m) {
    fuzz::check_error(m.error());
    return 0;
  }
  const std::string once = placement::to_host_map_text(*m);
  auto back = placement::parse_host_map(once, "fabric.hostmap");
  if (!back)
    fuzz::violated("parse_host_map(to_host_map_text(map)) failed", back.error().to_string());
  const std::string twice = placement::to_host_map_text(*back);
  if (once != twice)
    fuzz::violated("host map text not stable", fuzz::first_difference(once, twice));
  (void)placement::to_lua_table(*m);
  if (m->names.size() <= 4096) {
    auto all = placement::resolve_hosts(*m, hostlist::compress(m->names), "fuzz");
    if (all)
      fuzz::require(all->size() == m->names.size(),
                    "resolve_hosts(compress(names)): not every host once");
  }
  if (!m->names.empty() && m->names.size() <= 512) {
    std::vector<fabric::HostId> hosts;
    for (std::uint32_t i = 0; i < m->names.size(); ++i) hosts.push_back(fabric::HostId{i});
    // 2 ranks per 8-GPU node, a TP group per node.
    const auto shape = placement::JobShape::make(
        {.nodes = static_cast<std::uint32_t>(hosts.size()), .ranks_per_node = 2u});
    if (!shape) fuzz::violated("JobShape::make refused a plain shape", shape.error().to_string());
    auto layout = placement::rank_layout(*m, hosts, *shape);
    if (!layout)
      fuzz::violated("rank_layout over every host of a host map failed",
                     layout.error().to_string());
    for (auto f : {placement::RankFormat::kOpenMpi, placement::RankFormat::kHostfile,
                   placement::RankFormat::kMpich, placement::RankFormat::kSlurm,
                   placement::RankFormat::kTorchrun, placement::RankFormat::kJson})
      (void)placement::write_rank_file(*m, *layout, f, placement::RankFileOptions{});
  }
  return 0;
}
