// SPDX-License-Identifier: GPL-2.0-or-later
// fuzz_lft_routes: routes::lft_routes() over opensm LFT dumps (opensm-lfts.dump) against a
// fixed fabric: tests/data/fabrics/fat2_L8-ftree.ibnetdiscover.txt, the dump the seed
// (tests/data/routes/fat2_L8-ftree.lfts.dump.gz) was taken on. Routes that load are walked
// from the first host to every host and back (holes and loops must be reported, not hang).
#include "fabricplace/routes/table.hpp"
#include "fixed_fabric.hpp"

namespace {
const fabricplace::fabric::Fabric& fixed_fabric() {
  static const auto f = fabricplace::fuzz::load_fixed("fabrics/fat2_L8-ftree.ibnetdiscover.txt");
  return f;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fabricplace;
  const auto& f = fixed_fabric();
  auto routes = routes::lft_routes(f, fuzz::text_of(data, size), "opensm-lfts.dump");
  if (!routes) {
    fuzz::check_error(routes.error());
    return 0;
  }
  std::vector<routes::DirLink> path;
  const auto hosts = static_cast<std::uint32_t>(f.num_hosts());
  for (std::uint32_t h = 0; h < hosts; ++h) {
    path.clear();
    (void)routes->path(fabric::HostId{0}, fabric::HostId{h}, path);
    path.clear();
    (void)routes->path(fabric::HostId{h}, fabric::HostId{0}, path);
  }
  return 0;
}
