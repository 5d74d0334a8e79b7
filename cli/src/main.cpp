// SPDX-License-Identifier: GPL-2.0-or-later
// fabricplace: command-line entry point. Subcommands live in one file each.
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>
#include <new>

#include "commands.hpp"
#include "fabricplace/common/strings.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "fabricplace: topology-aware placement and rank ordering for InfiniBand GPU clusters",
      "fabricplace"};
  app.set_version_flag("--version", std::string(FABRICPLACE_VERSION));
  app.require_subcommand(1);
  fabricplace::cli::RunFn run;
  fabricplace::cli::add_fabric_commands(app, run);
  fabricplace::cli::add_place_command(app, run);
  fabricplace::cli::add_rankfile_command(app, run);
  fabricplace::cli::add_simulate_command(app, run);
  fabricplace::cli::add_trace_commands(app, run);
  fabricplace::cli::add_slurm_commands(app, run);
  fabricplace::cli::add_man_command(app, run);
  fabricplace::cli::add_completion_command(app, run);
  fabricplace::cli::check_numbers(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "fabricplace: usage error: " << e.what() << "\n"
              << "Run with --help for usage.\n";
    return fabricplace::cli::kExitUsage;
  }
  if (!run) {
    std::cerr << "fabricplace: usage error: missing subcommand; run with --help\n";
    return fabricplace::cli::kExitUsage;
  }
  // Errors are values (Result<T>); what still escapes as an exception (std::bad_alloc past
  // the limits, a library's own exception) is one message and exit 1, never an abort.
  try {
    return run();
  } catch (const std::bad_alloc&) {
    std::cerr << "fabricplace: error: out of memory (an input beyond what this machine holds; "
                 "docs/sources.md, Limits)\n";
  } catch (const std::exception& e) {
    std::cerr << "fabricplace: error: internal error: " << fabricplace::str::excerpt(e.what(), 300)
              << "\n";
  } catch (...) {
    std::cerr << "fabricplace: error: internal error (unknown exception)\n";
  }
  return fabricplace::cli::kExitError;
}
