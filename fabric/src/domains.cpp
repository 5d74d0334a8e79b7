// SPDX-License-Identifier: GPL-2.0-or-later
// Accelerator domains from collected nvidia-smi output (domains.hpp).
#include "fabricplace/fabric/domains.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "fabricplace/common/file_io.hpp"
#include "fabricplace/common/limits.hpp"
#include "fabricplace/common/strings.hpp"
#include "fabricplace/fabric/builder.hpp"

namespace fabricplace::fabric {
namespace {

constexpr const char* kShape =
    "expected \"HOST: INDEX, CLUSTER_UUID, CLIQUE_ID\" (pdsh output of nvidia-smi "
    "--query-gpu=index,fabric.clusterUuid,fabric.cliqueId --format=csv,noheader) or \"HOST: "
    "CLUSTER_UUID, CLIQUE_ID\"";

bool not_available(std::string_view v) {
  return v == "N/A" || v == "[N/A]" || v == "[Not Supported]" || v == "Not Supported" ||
         v == "[Unknown Error]";
}

// A cluster UUID as nvidia-smi prints it: 8-4-4-4-12 hexadecimal digits.
bool is_uuid(std::string_view v) {
  if (v.size() != 36) return false;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const char c = v[i];
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash != (c == '-')) return false;
    if (!dash && !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))
      return false;
  }
  return true;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

struct HostRows {
  std::string domain;  // of its first GPU ("" = none)
  int first_line = 0, domain_line = 0;
  std::vector<bool> indices;  // GPU indices given (3-field rows), by index
  std::uint32_t gpus = 0;
  bool two_fields = false;  // its rows have no GPU index
};

}  // namespace

Result<std::vector<DomainMember>> read_nvidia_smi_domains(std::string_view text,
                                                          const std::string& file) {
  std::vector<std::string> order;  // hosts in file order
  std::unordered_map<std::string, HostRows> rows;
  int lineno = 0;
  for (std::string_view raw : str::lines(text)) {
    ++lineno;
    const auto line = str::trim(raw);
    if (line.empty() || line.front() == '#') continue;
    const auto colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0)
      return fail(ErrorCode::kSyntax, std::string(kShape) + ", got " + str::quoted(line, 80), file,
                  lineno);
    const std::string host(str::trim(line.substr(0, colon)));
    if (auto why = str::host_name_problem(host))
      return fail(ErrorCode::kSyntax, "host name " + str::quoted(host, 60) + " " + *why, file,
                  lineno);
    auto cells = str::split(line.substr(colon + 1), ',');
    for (auto& c : cells) c = str::trim(c);
    if (cells.size() != 2 && cells.size() != 3)
      return fail(ErrorCode::kSyntax,
                  std::string(kShape) + "; got " + std::to_string(cells.size()) + " fields", file,
                  lineno);
    // nvidia-smi's header (--format=csv without noheader), once per host.
    if (str::starts_with_icase(cells[cells.size() - 2], "fabric.cluster")) continue;
    auto [it, fresh] = rows.try_emplace(host);
    HostRows& h = it->second;
    if (fresh) {
      if (order.size() >= limits().nodes)
        return fail(ErrorCode::kUnsupported,
                    "more than " + std::to_string(limits().nodes) +
                        " hosts (FABRICPLACE_MAX_NODES raises the limit)",
                    file, lineno);
      order.push_back(host);
      h.first_line = lineno;
    }
    if (cells.size() == 3 && h.two_fields)
      return fail(ErrorCode::kSyntax,
                  "host " + host + ": 3 fields here, 2 (without the GPU index) at line " +
                      std::to_string(h.first_line) + "; expected one query for every row",
                  file, lineno);
    if (cells.size() == 2 && h.gpus == 0) h.two_fields = true;
    if (cells.size() == 3) {
      const auto index = str::parse_uint(cells[0], kMaxGpusPerHost - 1);
      if (!index)
        return fail(ErrorCode::kSyntax,
                    "GPU index: expected an integer from 0 to " +
                        std::to_string(kMaxGpusPerHost - 1) + ", got " + str::quoted(cells[0], 40),
                    file, lineno);
      const auto i = static_cast<std::uint32_t>(*index);
      if (h.indices.empty()) h.indices.resize(kMaxGpusPerHost, false);
      if (h.indices[i])
        return fail(ErrorCode::kDuplicate,
                    "host " + host + ": GPU " + std::to_string(i) + " is listed twice", file,
                    lineno);
      h.indices[i] = true;
    } else if (!h.indices.empty()) {
      return fail(ErrorCode::kSyntax,
                  "host " + host + ": 2 fields here, 3 (with the GPU index) at line " +
                      std::to_string(h.first_line) + "; expected one query for every row",
                  file, lineno);
    }
    if (++h.gpus > kMaxGpusPerHost)
      return fail(ErrorCode::kUnsupported,
                  "host " + host + ": more than " + std::to_string(kMaxGpusPerHost) + " GPUs", file,
                  lineno);
    const std::string_view uuid = cells[cells.size() - 2], clique = cells.back();
    std::string domain;
    if (!not_available(uuid) && !not_available(clique)) {
      if (!is_uuid(uuid))
        return fail(ErrorCode::kSyntax,
                    "cluster UUID: expected 8-4-4-4-12 hexadecimal digits or N/A, got " +
                        str::quoted(uuid, 60),
                    file, lineno);
      const auto id = str::parse_uint(clique, 0xffffffffu);
      if (!id)
        return fail(ErrorCode::kSyntax,
                    "clique ID: expected an integer from 0 to 4294967295 or N/A, got " +
                        str::quoted(clique, 40),
                    file, lineno);
      // The all-zero UUID: a GPU not (yet) registered with the fabric manager.
      if (uuid != "00000000-0000-0000-0000-000000000000")
        domain = lower(uuid) + "." + std::to_string(*id);
    } else if (not_available(uuid) != not_available(clique)) {
      return fail(ErrorCode::kSyntax,
                  "expected both the cluster UUID and the clique ID, or N/A for both", file,
                  lineno);
    }
    if (h.gpus == 1) {
      h.domain = domain;
      h.domain_line = lineno;
    } else if (domain != h.domain) {
      auto name = [](const std::string& d) { return d.empty() ? std::string("none") : d; };
      return fail(ErrorCode::kSyntax,
                  "host " + host + " is in two domains: " + name(domain) + " here, " +
                      name(h.domain) + " at line " + std::to_string(h.domain_line) +
                      " (a host's GPUs share one NVLink domain)",
                  file, lineno);
    }
  }
  if (order.empty())
    return fail(ErrorCode::kSyntax, std::string("no GPU rows: ") + kShape, file,
                std::max(lineno, 1));
  // A domain's hosts are alike: the same GPU count.
  std::map<std::string, const std::string*> first_host;  // domain -> its first host
  for (const auto& host : order) {
    const HostRows& h = rows.at(host);
    if (h.domain.empty()) continue;
    const auto [it, fresh] = first_host.emplace(h.domain, &host);
    if (fresh) continue;
    const HostRows& f = rows.at(*it->second);
    if (f.gpus != h.gpus)
      return fail(ErrorCode::kSyntax,
                  "domain " + h.domain + " mixes GPU counts: host " + host + " has " +
                      std::to_string(h.gpus) + " GPUs in it, host " + *it->second + " (line " +
                      std::to_string(f.first_line) + ") " + std::to_string(f.gpus) +
                      " (a domain's hosts are alike)",
                  file, h.first_line);
  }
  std::vector<DomainMember> out;
  out.reserve(order.size());
  for (const auto& host : order) {
    const HostRows& h = rows.at(host);
    out.push_back(DomainMember{host, h.domain, h.gpus, h.first_line});
  }
  return out;
}

Result<Fabric> with_domains(const Fabric& f, const std::vector<DomainMember>& members,
                            const std::string& file) {
  FabricBuilder b;
  if (auto r = b.merge(f, /*with_domains=*/false); !r) return std::unexpected(r.error());
  b.set_origin(f.origin() + "; domains " + file);
  std::vector<std::uint8_t> seen(f.num_hosts(), 0);
  for (const auto& m : members) {
    auto h = f.find_host(m.host);
    if (!h) h = f.find_host(split_ca_description(m.host).first);
    if (!h)
      return fail(ErrorCode::kReference,
                  "host " + str::quoted(m.host, 60) + " is not in the fabric (" +
                      str::excerpt(f.origin(), 120) + ")",
                  file, m.line);
    if (seen[idx(*h)]++)
      return fail(ErrorCode::kDuplicate, "host " + f.host(*h).name + " is listed under two names",
                  file, m.line);
    if (!m.domain.empty()) b.add_domain_host(m.domain, f.host(*h).name, m.gpus, m.line);
  }
  auto built = b.build();
  if (!built) {
    Error e = built.error();
    if (e.file.empty()) e.file = file;
    return std::unexpected(e);
  }
  return built;
}

Result<Fabric> load_domains(const Fabric& f, const std::string& path) {
  auto text = read_file(path);
  if (!text) return std::unexpected(text.error());
  if (auto r = str::check_text(*text, path); !r) return std::unexpected(r.error());
  auto members = read_nvidia_smi_domains(*text, path);
  if (!members) return std::unexpected(members.error());
  return with_domains(f, *members, path);
}

}  // namespace fabricplace::fabric
