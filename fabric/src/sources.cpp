// SPDX-License-Identifier: GPL-2.0-or-later
#include "fabricplace/fabric/sources.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "fabricplace/common/file_io.hpp"
#include "fabricplace/common/strings.hpp"
#include "fabricplace/fabric/domains.hpp"
#include "fabricplace/fabric/json_io.hpp"
#include "fabricplace/fabric/spec.hpp"

namespace fabricplace::fabric {

std::string_view to_string(SourceFormat format) {
  switch (format) {
    case SourceFormat::kAuto:
      return "auto";
    case SourceFormat::kIbnetdiscover:
      return "ibnetdiscover";
    case SourceFormat::kIbnetdiscoverPorts:
      return "ibnetdiscover-p";
    case SourceFormat::kJson:
      return "json";
    case SourceFormat::kSlurmTopology:
      return "slurm-topology";
    case SourceFormat::kTiersCsv:
      return "tiers-csv";
    case SourceFormat::kSpec:
      return "spec";
  }
  return "?";
}

std::optional<SourceFormat> parse_source_format(std::string_view name) {
  for (auto f : {SourceFormat::kAuto, SourceFormat::kIbnetdiscover,
                 SourceFormat::kIbnetdiscoverPorts, SourceFormat::kJson,
                 SourceFormat::kSlurmTopology, SourceFormat::kTiersCsv, SourceFormat::kSpec})
    if (to_string(f) == name) return f;
  return std::nullopt;
}

SourceFormat sniff_format(std::string_view text) {
  // Blank runs and comment lines skipped in bulk: a file of 100 MB of newlines is sniffed
  // at memory speed.
  for (std::size_t pos = 0;;) {
    pos = text.find_first_not_of(" \t\r\n", pos);
    if (pos == std::string_view::npos) break;
    const std::size_t eol = std::min(text.find('\n', pos), text.size());
    if (text[pos] == '#') {
      pos = eol;
      continue;
    }
    const std::string_view line = str::trim(text.substr(pos, eol - pos));
    if (line.front() == '{') return SourceFormat::kJson;
    if ((line.starts_with("SW ") || line.starts_with("CA ") || line.starts_with("RT ")))
      return SourceFormat::kIbnetdiscoverPorts;
    if (str::starts_with_icase(line, "SwitchName=")) return SourceFormat::kSlurmTopology;
    if (str::starts_with_icase(line, "host,")) return SourceFormat::kTiersCsv;
    return SourceFormat::kIbnetdiscover;
  }
  return SourceFormat::kIbnetdiscover;
}

Result<Fabric> load_fabric(const std::string& source, const SourceOptions& options) {
  std::error_code ec;
  const bool is_file = source == "-" || std::filesystem::exists(source, ec);
  if (options.format == SourceFormat::kSpec ||
      (options.format == SourceFormat::kAuto && !is_file && looks_like_spec(source)))
    return generate(source);
  auto text = read_file(source);  // bounded, .gz decompressed, BOM dropped
  if (!text) return std::unexpected(text.error());
  const SourceFormat format =
      options.format == SourceFormat::kAuto ? sniff_format(*text) : options.format;
  // Text formats are UTF-8 text: no byte that is not UTF-8 and no control character (a
  // tab and a CR before the newline aside) reaches a parser, so none reaches an output.
  // JSON checks its own strings (nlohmann rejects raw control characters and bad UTF-8;
  // escaped ones are refused by the builder).
  if (format != SourceFormat::kJson)
    if (auto r = str::check_text(*text, source); !r) return std::unexpected(r.error());
  FabricBuilder b(std::string(to_string(format)) + " " + source);
  Result<void> r;
  switch (format) {
    case SourceFormat::kIbnetdiscover:
      r = read_ibnetdiscover(*text, source, b);
      break;
    case SourceFormat::kIbnetdiscoverPorts:
      r = read_ibnetdiscover_ports(*text, source, b);
      break;
    case SourceFormat::kJson:
      r = read_json(*text, source, b);
      break;
    case SourceFormat::kSlurmTopology:
      r = read_slurm_topology(*text, source, options, b);
      break;
    case SourceFormat::kTiersCsv:
      r = read_tiers_csv(*text, source, options, b);
      break;
    case SourceFormat::kAuto:
    case SourceFormat::kSpec:
      break;
  }
  if (!r) return std::unexpected(r.error());
  auto built = b.build();
  if (!built) {
    Error e = built.error();
    if (e.file.empty()) e.file = source;
    return std::unexpected(e);
  }
  return built;
}

Result<Fabric> load_fabrics(const std::vector<std::string>& sources, const SourceOptions& options) {
  if (!options.domains.empty()) {
    SourceOptions o = options;
    o.domains.clear();
    auto f = load_fabrics(sources, o);
    if (!f) return f;
    return load_domains(*f, options.domains);
  }
  if (sources.empty()) return fail(ErrorCode::kUsage, "no fabric source given");
  if (sources.size() == 1) return load_fabric(sources.front(), options);
  std::string origin = "merge of";
  FabricBuilder merged;
  for (const auto& s : sources) {
    auto f = load_fabric(s, options);
    if (!f) return std::unexpected(f.error());
    if (auto r = merged.merge(*f); !r)
      return fail(r.error().code, "while merging it by GUID: " + r.error().message, s);
    origin += " " + f->origin() + (&s == &sources.back() ? "" : ";");
  }
  merged.set_origin(origin);
  return merged.build();
}

}  // namespace fabricplace::fabric
