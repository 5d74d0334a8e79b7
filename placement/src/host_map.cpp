// SPDX-License-Identifier: GPL-2.0-or-later
// The compact host map: hosts per leaf and pod, all a rank layout needs.
#include <charconv>
#include <unordered_map>

#include "fabricplace/common/hostlist.hpp"
#include "fabricplace/common/limits.hpp"
#include "fabricplace/common/strings.hpp"
#include "fabricplace/placement/rank_layout.hpp"
#include "fabricplace/placement/request.hpp"

namespace fabricplace::placement {

using fabric::HostId;
using fabric::idx;
using fabric::kNone;

HostMap host_map(const Context& c) {
  HostMap m;
  const auto& f = *c.fabric;
  m.names.reserve(f.num_hosts());
  m.index.reserve(f.num_hosts());
  for (std::uint32_t i = 0; i < f.num_hosts(); ++i) {
    m.names.push_back(f.host(HostId{i}).name);
    m.index.emplace(m.names.back(), i);
  }
  m.blocks.of_host = c.blocks.of_host;
  m.blocks.hosts = c.blocks.hosts;
  m.blocks.name = c.blocks.name;
  m.blocks.pod = c.blocks.pod;
  m.blocks.kind = c.blocks.kind;
  m.rails = hca_rails(f);
  m.origin = f.origin();
  return m;
}

std::string to_host_map_text(const HostMap& m) {
  std::string s = "fabricplace-hostmap 1\n";
  if (!m.generation.empty()) s += "# generation: " + m.generation + "\n";
  // What the blocks are when they are not leaf switches (a comment, so that readers that
  // predate it still read the map; they then call the blocks leaves).
  if (m.blocks.kind != fabric::BlockKind::kLeaf)
    s += "# blocks: " + std::string(fabric::block_tag(m.blocks.kind)) + "\n";
  // A rail-optimised fabric's HCAs with their rail and plane, for NCCL_IB_HCA at launch.
  if (!m.rails.empty()) {
    s += "# rails:";
    for (const auto& r : m.rails) s += " " + r.nccl();
    s += "\n";
  }
  s += "# Hosts per leaf for rank order at launch (fabricplace fabric export --format hostmap).\n";
  s += "# from: " + m.origin + "\n";
  s += "# leaf NAME POD HOST...: leaves in topology.conf order, hosts in ring order;\n";
  s += "# end HOSTS: the number of hosts, so that a truncated copy is caught\n";
  // Pods numbered 0, 1, ... in order of first appearance (the order ring_order sorts by).
  std::unordered_map<std::uint32_t, std::uint32_t> pod_no;
  for (std::size_t k = 0; k < m.blocks.size(); ++k) {
    if (m.blocks.hosts[k].empty()) continue;
    const auto pod = pod_no.emplace(m.blocks.pod[k], pod_no.size()).first->second;
    s += "leaf " + m.blocks.name[k] + " " + std::to_string(pod);
    for (HostId h : m.blocks.hosts[k]) s += " " + m.names[idx(h)];
    s += "\n";
  }
  std::size_t hosts = 0;
  for (const auto& b : m.blocks.hosts) hosts += b.size();
  return s + "end " + std::to_string(hosts) + "\n";  // a truncated copy is an error
}

namespace {
// A Lua string literal: quotes, backslashes and control characters escaped.
std::string lua_string(std::string_view v) {
  std::string s = "\"";
  for (const char ch : v) {
    if (ch == '"' || ch == '\\') {
      s += '\\';
      s += ch;
    } else if (static_cast<unsigned char>(ch) < 0x20) {
      s += "\\" + std::to_string(static_cast<unsigned char>(ch));
    } else {
      s += ch;
    }
  }
  return s + "\"";
}
}  // namespace

std::string to_lua_table(const HostMap& m) {
  std::string s =
      "-- fabricplace fabric table for job_submit.lua (fabricplace fabric export --format lua)\n";
  s += "-- Leaves in topology.conf order (the names are the per-leaf node features of\n";
  s += "-- `fabric export --format slurm-features`), hosts in ring order.\n";
  if (!m.generation.empty()) s = "-- fabricplace generation: " + m.generation + "\n" + s;
  s += "return {\n  version = 1,\n  origin = " + lua_string(m.origin) + ",\n";
  if (!m.generation.empty()) s += "  generation = " + lua_string(m.generation) + ",\n";
  // What the entries of `leaves` are, when not leaf switches (job_submit.lua's messages).
  if (m.blocks.kind != fabric::BlockKind::kLeaf)
    s += "  blocks = " + lua_string(fabric::block_tag(m.blocks.kind)) + ",\n";
  s += "  leaves = {\n";
  std::unordered_map<std::uint32_t, std::uint32_t> pod_no;
  for (std::size_t k = 0; k < m.blocks.size(); ++k) {
    if (m.blocks.hosts[k].empty()) continue;
    const auto pod = pod_no.emplace(m.blocks.pod[k], pod_no.size()).first->second;
    s += "    { name = " + lua_string(m.blocks.name[k]) + ", pod = " + std::to_string(pod) +
         ", hosts = {";
    for (std::size_t i = 0; i < m.blocks.hosts[k].size(); ++i)
      s += (i ? ", " : " ") + lua_string(m.names[idx(m.blocks.hosts[k][i])]);
    s += " } },\n";
  }
  return s + "  },\n}\n";
}

Result<HostMap> parse_host_map(std::string_view text, const std::string& file) {
  // Its names go into rank files and SLURM_HOSTFILEs: text only, no control character.
  if (auto r = str::check_text(text, file); !r) return std::unexpected(r.error());
  HostMap m;
  std::vector<int> line_of;  // per host: the line that listed it
  int line_no = 0;
  bool header = false, ended = false;
  int seen_generation = 0, seen_blocks = 0, seen_rails = 0;  // their lines (0: none yet)
  std::size_t pos = 0;
  while (pos < text.size()) {
    const auto eol = text.find('\n', pos);
    const auto raw = text.substr(pos, eol == std::string_view::npos ? eol : eol - pos);
    pos = eol == std::string_view::npos ? text.size() : eol + 1;
    ++line_no;
    const auto line = str::trim(raw);
    // The three comment lines that carry data ("# generation:", "# blocks:", "# rails:"),
    // told apart however they are spaced ("#rails:" too), so that none is skipped as a
    // comment: each after the header, before the "end" line, at most once.
    auto key_line = [&]() -> std::pair<std::string_view, std::string_view> {
      if (line.empty() || line.front() != '#') return {};
      const auto rest = str::trim(line.substr(1));
      for (std::string_view k : {"generation", "blocks", "rails"}) {
        if (!rest.starts_with(k)) continue;
        const auto after = str::trim(rest.substr(k.size()));
        if (after.starts_with(':')) return {k, str::trim(after.substr(1))};
      }
      return {};
    };
    if (const auto [key, value] = key_line(); !key.empty()) {
      const std::string what = "\"# " + std::string(key) + ":\" line";
      if (!header)
        return fail(ErrorCode::kSyntax,
                    what + " before the \"fabricplace-hostmap 1\" line: expected that line "
                           "first (a host map written by `fabricplace fabric export --format "
                           "hostmap`)",
                    file, line_no);
      if (ended)
        return fail(ErrorCode::kSyntax,
                    what + " after the \"end\" line: expected it before the leaf lines (two "
                           "host maps in one file?)",
                    file, line_no);
      int& first = key == "generation" ? seen_generation
                   : key == "blocks"   ? seen_blocks
                                       : seen_rails;
      if (first != 0)
        return fail(ErrorCode::kDuplicate,
                    what + " again (the first at line " + std::to_string(first) +
                        "): expected one",
                    file, line_no);
      first = line_no;
      if (key == "generation") {
        // The `slurm sync` file set this map belongs to.
        if (!str::is_generation(value))
          return fail(ErrorCode::kSyntax,
                      "\"# generation:\" line: expected 16 lower-case hex digits (written by "
                      "`fabricplace slurm sync`)",
                      file, line_no);
        m.generation = std::string(value);
      } else if (key == "blocks") {
        // What the "leaf" records are: leaf, rail-group or domain.
        const auto kind = fabric::parse_block_tag(value);
        if (!kind)
          return fail(
              ErrorCode::kSyntax,
              "\"# blocks:\" line: expected leaf, rail-group or domain, got " + str::quoted(value),
              file, line_no);
        m.blocks.kind = *kind;
      } else {
        // "DEV:PORT:RAIL:PLANE ...": the fabric's rails, one entry per HCA device.
        const std::string expected =
            "\"# rails:\" line: expected DEVICE:PORT:RAIL:PLANE entries (mlx5_0:1:0:0)";
        for (const auto& item : str::split(value, ' ')) {
          if (item.empty()) continue;
          const auto f = str::split(item, ':');
          const auto port = f.size() == 4 ? str::parse_uint(f[1], 255) : std::nullopt;
          const auto rail = f.size() == 4 ? str::parse_uint(f[2], 1023) : std::nullopt;
          const auto plane = f.size() == 4 ? str::parse_uint(f[3], 1023) : std::nullopt;
          if (!port || !rail || !plane || f[0].empty() || str::host_name_problem(f[0]) ||
              m.rails.size() >= 1024)
            return fail(ErrorCode::kSyntax, expected + ", got " + str::quoted(item, 60), file,
                        line_no);
          for (const auto& r : m.rails)
            if (r.device == f[0])
              return fail(ErrorCode::kDuplicate,
                          "\"# rails:\" line: device " + str::quoted(f[0], 60) +
                              " twice: expected one entry per HCA device",
                          file, line_no);
          m.rails.push_back(HcaRail{std::string(f[0]), static_cast<unsigned>(*port),
                                    static_cast<unsigned>(*rail), static_cast<unsigned>(*plane)});
        }
        if (m.rails.empty()) return fail(ErrorCode::kSyntax, expected + ", got none", file, line_no);
      }
      continue;
    }
    if (line.empty() || line.front() == '#') continue;
    std::vector<std::string_view> w;
    for (std::size_t i = 0; i < line.size();) {
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
      const std::size_t b = i;
      while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
      if (i > b) w.push_back(line.substr(b, i - b));
    }
    if (!header) {
      if (w.size() != 2 || w[0] != "fabricplace-hostmap")
        return fail(ErrorCode::kSyntax,
                    "expected \"fabricplace-hostmap 1\" (a host map written by `fabricplace "
                    "fabric export --format hostmap`)",
                    file, line_no);
      if (w[1] != "1")
        return fail(ErrorCode::kUnsupported,
                    "host map format " + str::quoted(w[1]) + "; this fabricplace reads format 1",
                    file, line_no);
      header = true;
      continue;
    }
    if (w[0] == "end") {
      const auto n = w.size() == 2 ? str::parse_uint(w[1], 1u << 30) : std::nullopt;
      if (!n || *n != m.names.size())
        return fail(ErrorCode::kSyntax,
                    "\"end\" line: expected \"end " + std::to_string(m.names.size()) +
                        "\" (the number of hosts listed)",
                    file, line_no);
      ended = true;
      continue;
    }
    if (ended)
      return fail(ErrorCode::kSyntax,
                  "text after the \"end\" line: expected nothing after it (two host maps in one "
                  "file? write it again with `fabricplace fabric export --format hostmap`)",
                  file, line_no);
    if (w[0] != "leaf" || w.size() < 4)
      return fail(ErrorCode::kSyntax, "expected \"leaf NAME POD HOST...\"", file, line_no);
    std::uint32_t pod = 0;
    const auto* end = w[2].data() + w[2].size();
    if (auto [p, ec] = std::from_chars(w[2].data(), end, pod); ec != std::errc{} || p != end)
      return fail(ErrorCode::kSyntax,
                  "pod " + str::quoted(w[2]) + ": expected a non-negative integer", file, line_no);
    const auto k = static_cast<std::uint32_t>(m.blocks.name.size());
    m.blocks.name.emplace_back(w[1]);
    m.blocks.pod.push_back(pod);
    m.blocks.hosts.emplace_back();
    for (std::size_t i = 3; i < w.size(); ++i) {
      if (auto why = str::host_name_problem(w[i]))
        return fail(ErrorCode::kSyntax, "host name " + str::quoted(w[i]) + " " + *why, file,
                    line_no);
      if (m.names.size() >= limits().nodes)
        return fail(ErrorCode::kUnsupported,
                    "more than " + std::to_string(limits().nodes) +
                        " hosts (FABRICPLACE_MAX_NODES raises the limit)",
                    file, line_no);
      const HostId h{static_cast<std::uint32_t>(m.names.size())};
      if (auto [it, fresh] = m.index.emplace(std::string(w[i]), idx(h)); !fresh)
        return fail(ErrorCode::kSyntax,
                    "host " + str::quoted(w[i]) + " is already listed on line " +
                        std::to_string(line_of[it->second]),
                    file, line_no);
      m.names.emplace_back(w[i]);
      line_of.push_back(line_no);
      m.blocks.of_host.push_back(k);
      m.blocks.hosts.back().push_back(h);
    }
  }
  if (!header)
    return fail(ErrorCode::kSyntax,
                "empty host map: expected a \"fabricplace-hostmap 1\" line, leaf lines and an "
                "\"end\" line (write it with `fabricplace fabric export --format hostmap`, or "
                "`fabricplace slurm sync`)",
                file, 0);
  if (!ended)
    return fail(ErrorCode::kSyntax,
                "no \"end\" line: the host map is truncated (rewrite it with `fabricplace "
                "fabric export --format hostmap`)",
                file, line_no);
  m.origin = str::sanitize("host map " + file);
  return m;
}

Result<std::vector<HostId>> resolve_hosts(const HostMap& m, std::string_view expr,
                                          std::string_view what) {
  return resolve_hosts(expr, what, [&m](std::string_view n) -> std::optional<HostId> {
    if (auto it = m.index.find(std::string(n)); it != m.index.end()) return HostId{it->second};
    return std::nullopt;
  });
}

}  // namespace fabricplace::placement
