// CLI plumbing shared by the subcommands.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

#include "fabricplace/common/error.hpp"

namespace fabricplace::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;  ///< bad input, I/O failure
inline constexpr int kExitUsage = 2;  ///< bad command line

/// The selected subcommand's action, set by its callback after parsing.
using RunFn = std::function<int()>;

/// Prints "fabricplace: error: <where>: <message>" and returns kExitError (or kExitUsage).
int report(const Error& e);

void add_fabric_commands(CLI::App& app, RunFn& run);
/// `fabric discover` (live, through libibnetdisc); a stub that explains itself in builds
/// without FABRICPLACE_WITH_IBNETDISC.
void add_discover_command(CLI::App& fabric, RunFn& run);
/// Writes `content` to `path` atomically ("-" = stdout); returns the exit status.
int write_output(const std::string& path, const std::string& content);

}  // namespace fabricplace::cli
