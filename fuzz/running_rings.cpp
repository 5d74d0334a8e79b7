// SPDX-License-Identifier: GPL-2.0-or-later
// fuzz_running_rings: the `rankfile --route-aware --running FILE` file (squeue output, rings
// one hostlist per line, or JSON), as cli/src/rankfile_cmd.cpp uses it, on a fixed fabric
// (fat2:leaves=4,down=4,up=2,spines=2, opensm ftree routes): placement::parse_running(), then
// routes::add_ring_load() per running job; the first job read is taken as the job being
// ranked (the others never share its hosts), laid out by rank_layout() and re-ordered by
// route_aware_ring() over the other jobs' load, which must keep the job's hosts; the result
// is written in every rank file format.
#include <algorithm>

#include "fabricplace/placement/rank_layout.hpp"
#include "fabricplace/placement/route_order.hpp"
#include "fabricplace/placement/running.hpp"
#include "fabricplace/routes/model.hpp"
#include "fixed_fabric.hpp"

namespace {
struct Fixed {
  fabricplace::fabric::Fabric fabric;
  std::unique_ptr<const fabricplace::routes::Model> routes;
  fabricplace::placement::Context context;
  fabricplace::placement::HostMap map;
};
const Fixed& fixed() {
  using namespace fabricplace;
  static const Fixed* x = [] {
    auto* p = new Fixed{fuzz::load_fixed("fat2:leaves=4,down=4,up=2,spines=2"), {}, {}, {}};
    routes::Spec spec;
    spec.automatic = false;
    spec.kind = routes::Kind::kFtree;
    auto r = routes::make_model(p->fabric, spec);
    if (!r) fuzz::violated("the ftree model on the fixed fabric", r.error().to_string());
    p->routes = std::move(*r);
    p->context = placement::prepare(p->fabric);
    p->map = placement::host_map(p->context);
    return p;
  }();
  return *x;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fabricplace;
  const Fixed& x = fixed();
  const auto& f = x.fabric;
  std::vector<routes::Load> flows(2 * f.num_links(), 0);
  auto running = placement::parse_running(f, fuzz::text_of(data, size), "running");
  if (!running) {
    fuzz::check_error(running.error());
    return 0;
  }
  if (running->jobs.empty()) return 0;
  const auto job = running->jobs.front().hosts;
  for (std::size_t j = 1; j < running->jobs.size(); ++j)
    (void)routes::add_ring_load(*x.routes, running->jobs[j].hosts, j, flows);
  const auto shape = placement::JobShape::make(
      {.nodes = static_cast<std::uint32_t>(job.size()), .ranks_per_node = 1u});
  if (!shape) {
    fuzz::check_error(shape.error());
    return 0;
  }
  auto layout = placement::rank_layout(x.map, job, *shape);
  if (!layout) {
    fuzz::check_error(layout.error());
    return 0;
  }
  auto before = layout->hosts;
  layout->hosts =
      placement::route_aware_ring(x.map.blocks, *x.routes, std::move(layout->hosts), flows);
  placement::measure_layout(x.map, *layout);
  auto after = layout->hosts;
  std::sort(before.begin(), before.end());
  std::sort(after.begin(), after.end());
  fuzz::require(before == after, "route_aware_ring changed the job's hosts");
  (void)routes::max_switch_link_load(f, flows);
  for (auto fmt : {placement::RankFormat::kOpenMpi, placement::RankFormat::kHostfile,
                   placement::RankFormat::kMpich, placement::RankFormat::kSlurm,
                   placement::RankFormat::kTorchrun, placement::RankFormat::kJson})
    (void)placement::write_rank_file(x.map, *layout, fmt, placement::RankFileOptions{});
  return 0;
}
