// SPDX-License-Identifier: GPL-2.0-or-later
// LLVMFuzzerInitialize of every target (fuzz/CMakeLists.txt builds this file into each fuzzer
// and replay driver): hostlist expansion is bounded at 64Ki names instead of the default
// 1,000,000. At the default, one valid expression ("node[1-999999]") takes 1.6 s in an
// optimised build (tests/cli/hostile_inputs.sh busy_976k_names) and over libFuzzer's 10 s under
// ASan once a target expands it more than once (running parses its input three ways), so the
// run would stop on an input that is not a fault. The fuzzers look for crashes and wrong
// answers; what expansion at the limit costs is measured there, not here. The limit is read
// once, on first use (common/limits.hpp): it must be set before any input runs.
#include <cstdlib>

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("FABRICPLACE_MAX_HOSTLIST", "65536", 1);
  return 0;
}
