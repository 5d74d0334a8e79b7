// SPDX-License-Identifier: GPL-2.0-or-later
// `fabric discover` in a build without libibnetdisc: say so instead of pretending.
#include <iostream>

#include "commands.hpp"

namespace fabricplace::cli {

void add_discover_command(CLI::App& fabric, RunFn& run) {
  auto* cmd = fabric.add_subcommand("discover", "live discovery (not in this build)");
  cmd->allow_extras();
  cmd->callback([&run] {
    run = [] {
      std::cerr << "fabricplace: error: this build has no live discovery; configure with "
                   "-DFABRICPLACE_WITH_IBNETDISC=ON (needs libibnetdisc-dev libibmad-dev "
                   "libibumad-dev)\n";
      return kExitUsage;
    };
  });
}

}  // namespace fabricplace::cli
