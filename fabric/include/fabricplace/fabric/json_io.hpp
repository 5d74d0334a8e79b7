// SPDX-License-Identifier: GPL-2.0-or-later
// Canonical JSON (schema "fabricplace-fabric", versions 1 and 2; docs/fabric-json.md).
//
// The writer is byte-stable: the same fabric always gives the same bytes (nodes by GUID,
// one node or link per line), and reading what it wrote gives back the same Fabric, so
// JSON -> Fabric -> JSON is byte-identical.
#pragma once

#include <string>
#include <string_view>

#include "fabricplace/common/error.hpp"
#include "fabricplace/fabric/builder.hpp"

namespace fabricplace::fabric {

/// The newest version this build reads and writes. It writes version 1 for a fabric without
/// accelerator domains (what builds before them read) and 2 for one with them.
inline constexpr int kJsonVersion = 2;

/// `with_counters` false leaves out the raw port counters (their verdicts, `problems`, stay):
/// `slurm sync`'s fabric.json, which counters that move every minute would rewrite.
std::string to_json(const Fabric& fabric, bool with_counters = true);
/// Reads canonical JSON into `builder` (and sets its origin). Errors name the JSON path
/// ("nodes[3].guid") and the line (of the node or link for errors found at its end).
Result<void> read_json(std::string_view text, const std::string& file, FabricBuilder& builder);

/// The error for a JSON syntax error that nlohmann's SAX parser reported as `what` (its
/// exception's what()), for every JSON input read with it: "invalid JSON: <what, without the
/// exception id, quoted short and escaped: its "last read" excerpt may hold raw bytes>" at the
/// line nlohmann names, or at `fallback_line` (the line read so far) when it names none (a
/// number out of range says nothing).
Error json_syntax_error(std::string_view what, int fallback_line, const std::string& file);

}  // namespace fabricplace::fabric
