// SPDX-License-Identifier: GPL-2.0-or-later
// fuzz_health_config: fabric::parse_health_config() over a link-health thresholds file
// (etc/fabricplace/health.conf), then judge() against counters from the thresholds.
#include "fabricplace/fabric/health.hpp"
#include "fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fabricplace;
  auto t = fabric::parse_health_config(fuzz::text_of(data, size), "health.conf");
  if (!t) {
    fuzz::check_error(t.error());
    return 0;
  }
  // Every counter just at and just above its threshold: only the latter are problems.
  std::array<std::uint64_t, fabric::kNumCounters> at{}, above{};
  std::size_t judged = 0;
  for (std::size_t i = 0; i < fabric::kNumCounters; ++i) {
    if (!t->max[i]) continue;
    at[i] = *t->max[i];
    above[i] = *t->max[i] == UINT64_MAX ? *t->max[i] : *t->max[i] + 1;
    judged += *t->max[i] == UINT64_MAX ? 0 : 1;
  }
  fuzz::require(fabric::judge(at, *t).empty(), "judge(): a counter at its threshold is a problem");
  fuzz::require(fabric::judge(above, *t).size() == judged,
                "judge(): not one problem per counter above its threshold");
  return 0;
}
