// SPDX-License-Identifier: GPL-2.0-or-later
// Writes fabricplace-spank(8) (plugin/src/man.cpp) at build time: man_main OUT VERSION SERIES.
#include <iostream>

#include "config.hpp"
#include "fabricplace/common/file_io.hpp"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: fabricplace_spank_man OUT VERSION SLURM_SERIES\n";
    return 2;
  }
  if (auto ok = fabricplace::write_file_atomic(
          argv[1], fabricplace::plugin::spank_man_page(argv[2], argv[3]));
      !ok) {
    std::cerr << ok.error().to_string() << "\n";
    return 1;
  }
  return 0;
}
