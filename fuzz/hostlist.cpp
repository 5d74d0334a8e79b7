// SPDX-License-Identifier: GPL-2.0-or-later
// fuzz_hostlist: hostlist::expand() over Slurm hostlist expressions; for every expression
// that expands, compress() must read back: expand(compress(names)) is the same set of names
// (compress drops duplicates and may reorder), and natural_less() is a strict weak order on
// them.
#include <algorithm>
#include <set>

#include "fabricplace/common/hostlist.hpp"
#include "fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fabricplace;
  auto names = hostlist::expand(fuzz::text_of(data, size));
  if (!names) {
    fuzz::check_error(names.error());
    return 0;
  }
  // The round trip costs three passes over the names: up to 64Ki of them (fuzz_init.cpp).
  const std::string compressed = hostlist::compress(*names);
  auto back = hostlist::expand(compressed);
  if (!back)
    fuzz::violated("expand(compress(names)) failed", compressed + "\n" + back.error().to_string());
  const std::set<std::string> a(names->begin(), names->end()), b(back->begin(), back->end());
  if (a != b) fuzz::violated("expand(compress(names)) is not the same set", compressed);
  fuzz::require(back->size() == b.size(), "compress() kept a duplicate", compressed);
  // natural_less: irreflexive and asymmetric on neighbours (sorting relies on it).
  std::vector<std::string> sorted(a.begin(), a.end());
  if (sorted.size() <= 4096) {  // sorting is a check of natural_less, not of the parser
    std::sort(sorted.begin(), sorted.end(), hostlist::natural_less);
    for (std::size_t i = 0; i + 1 < sorted.size(); ++i) {
      fuzz::require(!hostlist::natural_less(sorted[i], sorted[i]), "natural_less(x, x)", sorted[i]);
      fuzz::require(!hostlist::natural_less(sorted[i + 1], sorted[i]), "natural_less not sorted",
                    sorted[i] + " " + sorted[i + 1]);
    }
  }
  return 0;
}
