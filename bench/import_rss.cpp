// SPDX-License-Identifier: GPL-2.0-or-later
// import_rss FILE...: loads (and merges) fabric files once in a fresh process and prints
// wall time and peak resident memory, which Google Benchmark cannot report per case.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "fabricplace/fabric/sources.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: import_rss FILE...\n");
    return 2;
  }
  rusage before{};
  getrusage(RUSAGE_SELF, &before);
  const auto t0 = std::chrono::steady_clock::now();
  auto f = fabricplace::fabric::load_fabrics(std::vector<std::string>(argv + 1, argv + argc));
  const auto t1 = std::chrono::steady_clock::now();
  if (!f) {
    std::fprintf(stderr, "import_rss: %s\n", f.error().to_string().c_str());
    return 1;
  }
  rusage after{};
  getrusage(RUSAGE_SELF, &after);
  std::printf("hosts=%zu switches=%zu links=%zu seconds=%.3f peak_rss_MB=%.1f start_rss_MB=%.1f\n",
              f->num_hosts(), f->switches().size(), f->num_links(),
              std::chrono::duration<double>(t1 - t0).count(),
              static_cast<double>(after.ru_maxrss) / 1024.0,
              static_cast<double>(before.ru_maxrss) / 1024.0);
  return 0;
}
