// SPDX-License-Identifier: GPL-2.0-or-later
// Fabric sources. Every source feeds a FabricBuilder; load_fabric() picks one by content.
//
//   ibnetdiscover      plain `ibnetdiscover` output (Switch/Ca/Rt records, port lines)
//   ibnetdiscover-p    `ibnetdiscover -p` output (one line per port)
//   json               fabricplace canonical JSON (docs/fabric-json.md)
//   slurm-topology     Slurm topology.conf (SwitchName= Nodes=/Switches=)
//   tiers-csv          "host,leaf,spine[,core]" CSV with a header line
//   spec               synthetic spec string, e.g. "fat2:leaves=8,down=20,up=20" (spec.hpp)
//
// Errors name the file, the 1-based line of the first syntactically bad line (cross-reference
// checks such as peers that do not link back run after the whole file is read and name the
// line of the referring record) and what was expected.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fabricplace/common/error.hpp"
#include "fabricplace/fabric/builder.hpp"
#include "fabricplace/fabric/fabric.hpp"

namespace fabricplace::fabric {

enum class SourceFormat {
  kAuto,
  kIbnetdiscover,
  kIbnetdiscoverPorts,
  kJson,
  kSlurmTopology,
  kTiersCsv,
  kSpec,
};
std::string_view to_string(SourceFormat format);
std::optional<SourceFormat> parse_source_format(std::string_view name);

struct SourceOptions {
  SourceFormat format = SourceFormat::kAuto;
  /// Link rate assumed where topology.conf or a tiers CSV states none; unset: 4xHDR for
  /// topology.conf, 400GbE for a tiers CSV.
  std::optional<LinkRate> link_rate;
  /// Collected nvidia-smi output giving the hosts' accelerator (NVLink) domains
  /// (domains.hpp); they replace any the sources carry. Empty: none read.
  std::string domains;
};

/// Guesses the format of a file's content (never kSpec, never kAuto).
SourceFormat sniff_format(std::string_view text);

/// Parses `ibnetdiscover` (plain or -p, detected) text into `builder`. `file` names the
/// input in errors.
Result<void> read_ibnetdiscover(std::string_view text, const std::string& file,
                                FabricBuilder& builder);
Result<void> read_ibnetdiscover_ports(std::string_view text, const std::string& file,
                                      FabricBuilder& builder);
Result<void> read_slurm_topology(std::string_view text, const std::string& file,
                                 const SourceOptions& options, FabricBuilder& builder);
Result<void> read_tiers_csv(std::string_view text, const std::string& file,
                            const SourceOptions& options, FabricBuilder& builder);

/// Loads one fabric from a file path (any format) or a synthetic spec string.
Result<Fabric> load_fabric(const std::string& source, const SourceOptions& options = {});
/// Loads several sources and merges them by GUID into one fabric (rail planes: one dump
/// per plane). Nodes seen in several sources must agree. Then options.domains, if given.
Result<Fabric> load_fabrics(const std::vector<std::string>& sources,
                            const SourceOptions& options = {});

}  // namespace fabricplace::fabric
