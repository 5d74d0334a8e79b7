// SPDX-License-Identifier: GPL-2.0-or-later
// What a SPANK plugin file was built for, and whether a given Slurm loads it.
//
// SPANK_PLUGIN() stores SLURM_VERSION_NUMBER ((major << 16) | (minor << 8) | micro) in the
// exported `plugin_version`; Slurm's loader refuses a spank plugin whose major.minor
// (`version & 0xffff00`) differs from its own, and drops an `optional` one with a verbose-level
// message only (docs/slurm.md, "Slurm versions"). This reads that symbol from the ELF file
// itself, without loading it (the plugin resolves Slurm's symbols at load time, -z now), so
// the check runs anywhere. No Slurm header is needed: the core stays Slurm-free.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "fabricplace/common/error.hpp"

namespace fabricplace::slurm {

/// A Slurm version as SLURM_VERSION_NUMBER encodes it.
struct Version {
  unsigned major = 0, minor = 0, micro = 0;

  [[nodiscard]] std::uint32_t number() const { return (major << 16) | (minor << 8) | micro; }
  /// "22.05.8"; series(): "22.05", the part Slurm compares for spank plugins.
  [[nodiscard]] std::string to_string() const;
  [[nodiscard]] std::string series() const;
  [[nodiscard]] bool same_series(const Version& o) const {
    return major == o.major && minor == o.minor;
  }
};

Version from_number(std::uint32_t n);

/// "22.05.8", "24.11.5", "slurm 22.05.8", "slurm-wlm 24.11.5" (what `srun --version` and
/// `slurmd -V` print), "22.05" (micro 0); kSyntax otherwise, naming `what`.
Result<Version> parse_version(std::string_view text, std::string_view what);

/// The value of the exported 32-bit object `symbol` (`plugin_version`) in the ELF shared object
/// `path` (64- or 32-bit, either byte order), from its dynamic symbol table and the section
/// that holds it. Bounded: files above 256 MiB are refused; every offset is checked. Errors
/// name the file and what is missing ("not an ELF file", "no exported plugin_version: not a
/// Slurm plugin").
Result<std::uint32_t> read_elf_u32(const std::string& path, std::string_view symbol);
/// The same on bytes already read (`name` for messages); what the fuzz target calls.
Result<std::uint32_t> read_elf_u32_bytes(std::string_view bytes, std::string_view symbol,
                                         const std::string& name);

}  // namespace fabricplace::slurm
