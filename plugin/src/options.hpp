// SPDX-License-Identifier: GPL-2.0-or-later
// The job options the plugin adds to sbatch, salloc and srun, parsed without Slurm:
//   --fabric-tp=N                   tensor-parallel group size in GPUs (ranks)
//   --fabric-ep=N                   expert-parallel group size in GPUs
//   --fabric-mode=constrain|exact|off
//   --fabric-policy=fabric|slurm-tree|slurm-block|first-fit
//   --fabric-rankfile=PREFIX        where the launch writes its rank files
// Errors read as the user sees them: "fabricplace: --fabric-tp: expected ...".
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "fabricplace/common/error.hpp"

namespace fabricplace::plugin {

enum class Mode : std::uint8_t { kConstrain, kExact, kOff };
std::optional<Mode> parse_mode(std::string_view s);
const char* mode_name(Mode m);

/// The values are the option ids registered with Slurm: new options go last.
enum class Option : int { kTp = 1, kMode, kPolicy, kRankfile, kEp };
inline constexpr std::size_t kOptionCount = 5;
/// "fabric-tp", ... (the names registered with Slurm).
const char* option_name(Option o);

/// One job option as Slurm shows it in `sbatch --help` (spank_option: name, arginfo, usage)
/// and as fabricplace-spank(8) documents it: one table for both.
struct OptionDoc {
  Option which;
  const char* arg;    ///< "N", "MODE", ...
  const char* usage;  ///< the --help line
  const char* more;   ///< the manual page's further paragraph
};
const std::array<OptionDoc, kOptionCount>& option_docs();

/// The groups a job asks for, in GPUs: --fabric-tp (none: a node's GPUs, one node per TP
/// group) and --fabric-ep (none: no EP groups). Either option makes fabricplace steer the
/// job; the group it keeps inside one leaf (or NVLink domain) is the larger of the two.
struct Groups {
  std::optional<std::uint32_t> tp = std::nullopt;
  std::optional<std::uint32_t> ep = std::nullopt;
  [[nodiscard]] bool any() const { return tp || ep; }
  /// "EP" when the EP group is the larger (the one kept together), else "TP".
  [[nodiscard]] const char* kept(std::uint32_t gpus_per_node) const {
    return ep.value_or(0) > tp.value_or(gpus_per_node) ? "EP" : "TP";
  }
};

struct JobOptions {
  std::optional<std::uint32_t> tp;
  std::optional<std::uint32_t> ep;
  std::optional<Mode> mode;
  std::optional<std::string> policy;
  std::optional<std::string> rankfile;
  [[nodiscard]] bool any() const { return tp || ep || mode || policy || rankfile; }
  [[nodiscard]] Groups groups() const { return {tp, ep}; }
};

/// Sets one option from its command-line value; the error message starts with the option
/// ("--fabric-tp: expected a positive integer, got \"x\"").
Result<void> set_option(JobOptions& o, Option which, const char* value);

}  // namespace fabricplace::plugin
