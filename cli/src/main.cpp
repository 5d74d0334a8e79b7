// fabricplace: command-line entry point. Subcommands live in one file each.
#include <CLI/CLI.hpp>
#include <iostream>

#include "commands.hpp"

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
  return run();
}
