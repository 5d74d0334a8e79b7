// SPDX-License-Identifier: GPL-2.0-or-later
#include "fabricplace/fabric/spec.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "fabricplace/common/limits.hpp"
#include "fabricplace/common/strings.hpp"
#include "fabricplace/fabric/builder.hpp"

namespace fabricplace::fabric {
namespace {

constexpr Guid kSwitchGuidBase = 0xfc6a1c0300100000ULL;  // ibsim net file switchguid=
constexpr Guid kCaGuidBase = 0x1070fd0300200000ULL;      // ibsim net file caguid=
constexpr std::uint32_t kVendorMellanox = 0x2c9;
constexpr std::uint32_t kDevQuantum = 0xcf08, kDevQuantum2 = 0xd2f0, kDevSwitchIB2 = 0xcb84;
constexpr std::uint32_t kDevConnectX6 = 0x101b;

// Every spec message passes through here: at most 300 bytes, control bytes escaped (a spec
// is a command-line word, and can be as long and as odd as the shell allows).
std::unexpected<Error> spec_error(const std::string& what) {
  return fail(ErrorCode::kUsage, str::excerpt(what, 300), "spec");
}

struct KeyInfo {
  const char* key;
  const char* help;
  const char* fallback;  // default, as text; "" = derived
};

const std::map<std::string, std::vector<KeyInfo>>& kinds() {
  static const std::map<std::string, std::vector<KeyInfo>> k = {
      {"fat2",
       {{"leaves", "number of leaf switches", "8"},
        {"down", "host ports per leaf", "20"},
        {"up", "uplinks per leaf", "20"},
        {"spines", "spine switches (default: fewest that hold all uplinks and divide 'up')", ""},
        {"radix", "switch port count", "40"},
        {"speed", "link speed SDR|DDR|QDR|FDR|EDR|HDR|NDR|XDR", "HDR"},
        {"width", "link width 1x|2x|4x|8x|12x", "4x"}}},
      {"fat3",
       {{"pods", "number of pods", "2"},
        {"leaves", "leaf switches per pod", "4"},
        {"down", "host ports per leaf", "20"},
        {"up", "uplinks per leaf", "20"},
        {"spines", "spine switches per pod (default: up, one link per leaf-spine pair)", ""},
        {"spine_up",
         "uplinks per spine to the cores (default: its leaf-facing port count, non-blocking)", ""},
        {"cores",
         "core switches in all, split into one plane per spine index (default: fewest per plane "
         "that hold spine_up)",
         ""},
        {"radix", "switch port count", "40"},
        {"speed", "link speed SDR|DDR|QDR|FDR|EDR|HDR|NDR|XDR", "HDR"},
        {"width", "link width 1x|2x|4x|8x|12x", "4x"}}},
      {"rail",
       {{"sus", "scalable units (rail groups)", "2"},
        {"hosts", "hosts per scalable unit", "20"},
        {"rails", "rails = single-port HCAs per host (mlx5_0..)", "8"},
        {"up", "uplinks per rail leaf (default: hosts)", ""},
        {"spines", "spines (per rail plane with planes=1; default: fewest that hold all uplinks)",
         ""},
        {"planes", "1 = a separate spine plane (subnet) per rail", "0"},
        {"radix", "switch port count", "40"},
        {"speed", "link speed SDR|DDR|QDR|FDR|EDR|HDR|NDR|XDR", "HDR"},
        {"width", "link width 1x|2x|4x|8x|12x", "4x"}}},
  };
  return k;
}

// Keys every kind takes, repeatable.
constexpr const char* kDegradeHelp =
    "degrade=SWITCH:PORT:w=1|s=EDR  the link on that switch port trains at width 1x or speed "
    "EDR (repeatable)";
constexpr const char* kCutHelp =
    "cut=SWITCH:PORT  the link on that switch port is down (repeatable)";
constexpr const char* kNvlHelp =
    "nvl=N  accelerator (NVLink) domains of N consecutive hosts, named nvl01, nvl02, ... (a "
    "domain may straddle leaves; the host count must be a multiple of N)";
constexpr const char* kGpusHelp = "gpus=G  GPUs per host in the nvl= domains (default: not known)";

struct Params {
  std::string kind;
  std::map<std::string, std::string> kv;
  std::vector<std::string> degrade, cut;

  Result<std::uint32_t> num(const std::string& key, std::uint32_t fallback, std::uint32_t min = 1,
                            std::uint32_t max = 1u << 20) const {
    const auto it = kv.find(key);
    if (it == kv.end()) return fallback;
    const auto v = str::parse_uint(it->second, max);
    if (!v || *v < min)
      return spec_error(kind + ": " + key + "=" + it->second + ": expected an integer from " +
                        std::to_string(min) + " to " + std::to_string(max));
    return static_cast<std::uint32_t>(*v);
  }
  std::optional<std::uint32_t> given(const std::string& key) const {
    const auto it = kv.find(key);
    if (it == kv.end()) return std::nullopt;
    return str::parse_uint(it->second, 1u << 20).transform([](std::uint64_t v) {
      return static_cast<std::uint32_t>(v);
    });
  }
};

Result<Params> parse(std::string_view spec) {
  Params p;
  const auto colon = spec.find(':');
  p.kind = std::string(spec.substr(0, colon));
  if (!kinds().contains(p.kind))
    return spec_error("unknown fabric kind \"" + p.kind + "\", expected fat2, fat3 or rail");
  if (colon == std::string_view::npos || colon + 1 == spec.size()) return p;
  const auto& keys = kinds().at(p.kind);
  for (auto item : str::split(spec.substr(colon + 1), ',')) {
    item = str::trim(item);
    const auto eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == item.size())
      return spec_error(p.kind + ": " + str::quoted(item) + ": expected key=value");
    const std::string key(item.substr(0, eq));
    const std::string value(item.substr(eq + 1));
    if (key == "degrade") {
      p.degrade.push_back(value);
      continue;
    }
    if (key == "cut") {
      p.cut.push_back(value);
      continue;
    }
    bool known = key == "nvl" || key == "gpus";
    std::string list;
    for (const auto& k : keys) {
      known = known || key == k.key;
      list += std::string(list.empty() ? "" : ", ") + k.key;
    }
    if (!known)
      return spec_error(p.kind + ": unknown key \"" + key + "\" (expected one of: " + list +
                        ", nvl, gpus, degrade, cut)");
    if (!p.kv.emplace(key, value).second)
      return spec_error(p.kind + ": key \"" + key + "\" given twice");
    // Every key but speed and width is a count: check them all here, so that a key read
    // only when given (spines, cores, spine_up) cannot be silently ignored.
    if (key != "speed" && key != "width")
      if (auto v = p.num(key, 0, key == "planes" ? 0 : 1,
                         key == "planes" ? 1 : key == "gpus" ? kMaxGpusPerHost : 1u << 20);
          !v)
        return std::unexpected(v.error());
  }
  return p;
}

// The fabric under construction, in ibsim's terms: nodes in net-file order (GUIDs are handed
// out in that order), ports linked as the lab generator wires them.
struct Gen {
  struct Sw {
    std::string id;
    std::uint32_t nports;
    std::map<std::uint32_t, std::pair<std::size_t, std::uint32_t>> ports;  // port -> (node, port)
  };
  std::uint32_t radix = 40;
  std::uint32_t device_id = kDevQuantum;
  std::string model = "MQM8700";
  LinkRate rate{LinkWidth::k4x, LinkSpeed::kHDR};
  std::vector<Sw> nodes;  // switches and HCAs (HCAs have nports 1, id "host dev")
  std::vector<bool> is_ca;
  std::unordered_map<std::string, std::size_t> by_id;
  std::vector<std::size_t> order;  // creation order

  std::size_t add_switch(const std::string& id, std::uint32_t nports) {
    by_id[id] = nodes.size();
    nodes.push_back(Sw{id, nports, {}});
    is_ca.push_back(false);
    order.push_back(nodes.size() - 1);
    return nodes.size() - 1;
  }
  std::size_t add_ca(const std::string& host, const std::string& dev) {
    return add_switch(host + " " + dev, 1), is_ca.back() = true, nodes.size() - 1;
  }
  std::uint32_t free_port(std::size_t n) const {
    for (std::uint32_t p = 1; p <= nodes[n].nports; ++p)
      if (!nodes[n].ports.contains(p)) return p;
    return 0;
  }
  Result<void> link(std::size_t a, std::uint32_t pa, std::size_t b, std::uint32_t pb) {
    if (pa == 0 || pb == 0 || pa > nodes[a].nports || pb > nodes[b].nports)
      return spec_error("switch " + nodes[pa == 0 || pa > nodes[a].nports ? a : b].id +
                        " runs out of ports (radix " + std::to_string(radix) +
                        "); raise radix or add switches");
    nodes[a].ports[pa] = {b, pb};
    nodes[b].ports[pb] = {a, pa};
    return {};
  }
  Result<void> link_next(std::size_t a, std::uint32_t pa, std::size_t b) {
    return link(a, pa, b, free_port(b));
  }

  std::string switch_desc(const std::string& id) const { return "MF0;" + id + ":" + model + "/U1"; }
};

std::string host_name(std::uint32_t i, std::uint32_t total) {
  const std::size_t w = std::max<std::size_t>(3, std::to_string(total).size());
  std::string n = std::to_string(i);
  return "node" + std::string(w > n.size() ? w - n.size() : 0, '0') + n;
}

Result<void> common_keys(const Params& p, Gen& g) {
  auto radix = p.num("radix", 40, 2, 254);
  if (!radix) return std::unexpected(radix.error());
  g.radix = *radix;
  g.model = g.radix == 64 ? "MQM9700" : g.radix == 36 ? "MSB7800" : "MQM8700";
  g.device_id = g.radix == 64 ? kDevQuantum2 : g.radix == 36 ? kDevSwitchIB2 : kDevQuantum;
  if (auto it = p.kv.find("speed"); it != p.kv.end()) {
    const auto s = parse_speed(it->second);
    if (!s || *s == LinkSpeed::kUnknown || *s == LinkSpeed::kFDR10)
      return spec_error(p.kind + ": speed=" + it->second +
                        ": expected SDR, DDR, QDR, FDR, EDR, HDR, NDR or XDR");
    g.rate.speed = *s;
  }
  if (auto it = p.kv.find("width"); it != p.kv.end()) {
    const auto w = parse_width(it->second);
    if (!w || *w == LinkWidth::kUnknown)
      return spec_error(p.kind + ": width=" + it->second + ": expected 1x, 2x, 4x, 8x or 12x");
    g.rate.width = *w;
  }
  return {};
}

// Every count is checked in 64 bits against the limits before anything is allocated: a
// 60-character spec must not ask for millions of nodes, nor wrap a 32-bit product to 0.
Result<void> check_size(const std::string& kind, std::uint64_t switches, std::uint64_t cas,
                        std::uint64_t links) {
  const Limits& lim = limits();
  std::uint64_t out = 0;
  if (!add_within(switches, cas, lim.nodes, out))
    return spec_error(kind + ": asks for more than " + std::to_string(lim.nodes) +
                      " switches and HCAs (FABRICPLACE_MAX_NODES raises the limit)");
  if (!mul_within(links, 2, lim.ports, out))
    return spec_error(kind + ": asks for more than " + std::to_string(lim.ports) +
                      " ports (FABRICPLACE_MAX_PORTS raises the limit)");
  return {};
}

// a * b in 64 bits, saturating (the size check then refuses it).
std::uint64_t mul(std::uint64_t a, std::uint64_t b) {
  std::uint64_t out = 0;
  return mul_within(a, b, UINT64_MAX, out) ? out : UINT64_MAX;
}

std::string two(std::uint32_t v) {
  return (v < 10 ? "0" : "") + std::to_string(v);
}
std::string three(std::uint32_t v) {
  return (v < 10 ? "00" : v < 100 ? "0" : "") + std::to_string(v);
}

Result<void> gen_fat2(const Params& p, Gen& g) {
  auto L = p.num("leaves", 8), D = p.num("down", 20), U = p.num("up", 20);
  for (auto* r : {&L, &D, &U})
    if (!*r) return std::unexpected(r->error());
  if (*D + *U > g.radix)
    return spec_error("fat2: down + up = " + std::to_string(*D + *U) + " exceeds radix " +
                      std::to_string(g.radix));
  if (auto r = check_size("fat2", *L, mul(*L, *D), mul(*L, *D + *U)); !r) return r;
  std::uint32_t S;
  if (auto s = p.given("spines")) {
    S = *s;
    if (S == 0 || *U % S)
      return spec_error("fat2: spines=" + std::to_string(S) +
                        " must divide up=" + std::to_string(*U));
  } else {
    S = static_cast<std::uint32_t>((std::uint64_t{*L} * *U + g.radix - 1) / g.radix);
    while (S < *U && *U % S) ++S;
    if (*U % S) S = *U;  // one link per leaf-spine pair; the port check below decides
  }
  const std::uint32_t per = *U / S;
  if (std::uint64_t{*L} * per > g.radix)
    return spec_error("fat2: each spine needs " + std::to_string(std::uint64_t{*L} * per) +
                      " ports > radix " + std::to_string(g.radix) + "; add spines or raise radix");
  if (auto r = check_size("fat2", std::uint64_t{*L} + S, mul(*L, *D), mul(*L, *D + *U)); !r)
    return r;
  const std::uint32_t nh = *L * *D;
  std::vector<std::size_t> spines, leaves;
  for (std::uint32_t s = 0; s < S; ++s)
    spines.push_back(g.add_switch("spine" + two(s + 1), g.radix));
  for (std::uint32_t l = 0; l < *L; ++l)
    leaves.push_back(g.add_switch("leaf" + two(l + 1), g.radix));
  std::uint32_t hi = 0;
  for (std::uint32_t l = 0; l < *L; ++l) {
    for (std::uint32_t d = 0; d < *D; ++d) {
      const auto h = g.add_ca(host_name(++hi, nh), "mlx5_0");
      if (auto r = g.link(leaves[l], d + 1, h, 1); !r) return r;
    }
    for (std::uint32_t u = 0; u < *U; ++u)
      if (auto r = g.link_next(leaves[l], *D + 1 + u, spines[u % S]); !r) return r;
  }
  return {};
}

Result<void> gen_fat3(const Params& p, Gen& g) {
  auto P = p.num("pods", 2), Lp = p.num("leaves", 4), D = p.num("down", 20), U = p.num("up", 20);
  for (auto* r : {&P, &Lp, &D, &U})
    if (!*r) return std::unexpected(r->error());
  if (*D + *U > g.radix)
    return spec_error("fat3: down + up = " + std::to_string(*D + *U) + " exceeds radix " +
                      std::to_string(g.radix));
  if (auto r = check_size("fat3", mul(*P, *Lp), mul(mul(*P, *Lp), *D), mul(mul(*P, *Lp), *D + *U));
      !r)
    return r;
  const std::uint32_t Sp = p.given("spines").value_or(*U);
  if (Sp == 0 || *U % Sp)
    return spec_error("fat3: spines=" + std::to_string(Sp) +
                      " must divide up=" + std::to_string(*U));
  const std::uint32_t per_ls = *U / Sp;
  if (std::uint64_t{*Lp} * per_ls >= g.radix)
    return spec_error("fat3: each spine needs " + std::to_string(std::uint64_t{*Lp} * per_ls) +
                      " down ports, leaving none of radix " + std::to_string(g.radix) +
                      " for cores");
  const std::uint32_t sp_down = *Lp * per_ls;
  if (sp_down >= g.radix)
    return spec_error("fat3: each spine needs " + std::to_string(sp_down) +
                      " down ports, leaving none of radix " + std::to_string(g.radix) +
                      " for cores");
  // Default: non-blocking, as many core uplinks as leaf-facing ports.
  const std::uint32_t sp_up = p.given("spine_up").value_or(sp_down);
  if (sp_up == 0 || sp_down + sp_up > g.radix)
    return spec_error("fat3: spine_up=" + std::to_string(sp_up) + " with " +
                      std::to_string(sp_down) + " down ports exceeds radix " +
                      std::to_string(g.radix));
  std::uint32_t cpp;  // cores per plane
  if (auto c = p.given("cores")) {
    if (*c == 0 || *c % Sp)
      return spec_error("fat3: cores=" + std::to_string(*c) + " must be a multiple of spines=" +
                        std::to_string(Sp) + " (one core plane per spine index)");
    cpp = *c / Sp;
  } else {
    cpp = static_cast<std::uint32_t>(
        std::max<std::uint64_t>(1, (std::uint64_t{*P} * sp_up + g.radix - 1) / g.radix));
    while (cpp < sp_up && sp_up % cpp) ++cpp;
  }
  if (sp_up % cpp)
    return spec_error("fat3: spine_up=" + std::to_string(sp_up) + " is not divisible by " +
                      std::to_string(cpp) + " cores per plane");
  const std::uint32_t per_sc = sp_up / cpp;
  if (std::uint64_t{*P} * per_sc > g.radix)
    return spec_error("fat3: each core needs " + std::to_string(std::uint64_t{*P} * per_sc) +
                      " ports > radix " + std::to_string(g.radix) + "; add cores or raise radix");
  if (auto r = check_size("fat3", mul(cpp, Sp) + mul(*P, Sp) + mul(*P, *Lp), mul(mul(*P, *Lp), *D),
                          mul(mul(*P, *Lp), *D + *U) + mul(mul(*P, Sp), sp_up));
      !r)
    return r;
  const std::uint32_t nh = *P * *Lp * *D;
  std::vector<std::size_t> cores;
  for (std::uint32_t c = 0; c < cpp * Sp; ++c)
    cores.push_back(g.add_switch("core" + three(c + 1), g.radix));
  std::vector<std::vector<std::size_t>> spines(*P), leaves(*P);
  for (std::uint32_t q = 0; q < *P; ++q) {
    for (std::uint32_t s = 0; s < Sp; ++s)
      spines[q].push_back(g.add_switch("p" + two(q + 1) + "-spine" + two(s + 1), g.radix));
    for (std::uint32_t l = 0; l < *Lp; ++l)
      leaves[q].push_back(g.add_switch("p" + two(q + 1) + "-leaf" + two(l + 1), g.radix));
  }
  std::uint32_t hi = 0;
  for (std::uint32_t q = 0; q < *P; ++q) {
    for (std::uint32_t l = 0; l < *Lp; ++l) {
      for (std::uint32_t d = 0; d < *D; ++d) {
        const auto h = g.add_ca(host_name(++hi, nh), "mlx5_0");
        if (auto r = g.link(leaves[q][l], d + 1, h, 1); !r) return r;
      }
      for (std::uint32_t u = 0; u < *U; ++u)
        if (auto r = g.link_next(leaves[q][l], *D + 1 + u, spines[q][u % Sp]); !r) return r;
    }
    for (std::uint32_t s = 0; s < Sp; ++s)
      for (std::uint32_t u = 0; u < sp_up; ++u)
        if (auto r = g.link_next(spines[q][s], sp_down + 1 + u, cores[s * cpp + u % cpp]); !r)
          return r;
  }
  return {};
}

Result<void> gen_rail(const Params& p, Gen& g) {
  auto N = p.num("sus", 2), H = p.num("hosts", 20), R = p.num("rails", 8, 1, 64);
  auto planes = p.num("planes", 0, 0, 1);
  for (auto* r : {&N, &H, &R, &planes})
    if (!*r) return std::unexpected(r->error());
  auto U = p.num("up", *H);
  if (!U) return std::unexpected(U.error());
  if (*H + *U > g.radix)
    return spec_error("rail: hosts + up = " + std::to_string(*H + *U) + " exceeds radix " +
                      std::to_string(g.radix));
  // Sizes first (64-bit, before the products below): N*R leaves, N*H*R CAs.
  if (auto r = check_size("rail", mul(*N, *R), mul(mul(*N, *H), *R), mul(mul(*N, *R), *H + *U)); !r)
    return r;
  const std::uint32_t groups = *planes ? *R : 1;
  const std::uint32_t leaves_per_group = *N * (*planes ? 1 : *R);
  std::uint32_t S;
  if (auto s = p.given("spines")) {
    S = *s;
    if (S == 0 || *U % S)
      return spec_error("rail: spines=" + std::to_string(S) +
                        " must divide up=" + std::to_string(*U));
  } else {
    S = static_cast<std::uint32_t>(
        std::max<std::uint64_t>(1, (std::uint64_t{leaves_per_group} * *U + g.radix - 1) / g.radix));
    while (S <= *U && *U % S) ++S;
    if (*U % S)
      return spec_error("rail: no spine count divides up=" + std::to_string(*U) +
                        "; set spines= or planes=1");
  }
  if (auto r = check_size("rail", mul(*N, *R) + mul(groups, S), mul(mul(*N, *H), *R),
                          mul(mul(*N, *R), *H + *U));
      !r)
    return r;
  const std::uint32_t per = *U / S;
  if (std::uint64_t{leaves_per_group} * per > g.radix)
    return spec_error("rail: each spine needs " +
                      std::to_string(std::uint64_t{leaves_per_group} * per) + " ports > radix " +
                      std::to_string(g.radix) + "; add spines, use planes=1 or raise radix");
  const std::uint32_t nh = *N * *H;
  auto spname = [&](std::uint32_t r, std::uint32_t s) {
    return *planes ? "r" + std::to_string(r) + "-spine" + two(s + 1) : "spine" + two(s + 1);
  };
  std::vector<std::vector<std::size_t>> spines(groups);
  for (std::uint32_t gi = 0; gi < groups; ++gi)
    for (std::uint32_t s = 0; s < S; ++s)
      spines[gi].push_back(g.add_switch(spname(gi, s), g.radix));
  std::vector<std::vector<std::size_t>> leaves(*N);
  for (std::uint32_t n = 0; n < *N; ++n)
    for (std::uint32_t r = 0; r < *R; ++r)
      leaves[n].push_back(
          g.add_switch("su" + two(n + 1) + "-r" + std::to_string(r) + "-leaf", g.radix));
  std::uint32_t hi = 0;
  for (std::uint32_t n = 0; n < *N; ++n) {
    std::vector<std::string> hosts;
    for (std::uint32_t h = 0; h < *H; ++h) hosts.push_back(host_name(++hi, nh));
    for (std::uint32_t r = 0; r < *R; ++r) {
      for (std::uint32_t d = 0; d < *H; ++d) {
        const auto h = g.add_ca(hosts[d], "mlx5_" + std::to_string(r));
        if (auto res = g.link(leaves[n][r], d + 1, h, 1); !res) return res;
      }
      for (std::uint32_t u = 0; u < *U; ++u)
        if (auto res = g.link_next(leaves[n][r], *H + 1 + u, spines[*planes ? r : 0][u % S]); !res)
          return res;
    }
  }
  return {};
}

// "leaf01:21:w=1" / "leaf01:21:s=EDR" / "leaf01:21" (cut).
struct PortRef {
  std::size_t node;
  std::uint32_t port;
  std::string opt;
};
Result<PortRef> port_ref(const Gen& g, const std::string& kind, const std::string& key,
                         const std::string& value, bool with_opt) {
  const auto parts = str::split(value, ':');
  const std::string usage = with_opt ? "SWITCH:PORT:w=1 or SWITCH:PORT:s=EDR" : "SWITCH:PORT";
  if (parts.size() != (with_opt ? 3u : 2u))
    return spec_error(kind + ": " + key + "=" + value + ": expected " + usage);
  const auto it = g.by_id.find(std::string(parts[0]));
  if (it == g.by_id.end() || g.is_ca[it->second])
    return spec_error(kind + ": " + key + "=" + value + ": no switch named \"" +
                      std::string(parts[0]) + "\"");
  const auto port = str::parse_uint(parts[1], 254);
  if (!port || !g.nodes[it->second].ports.contains(static_cast<std::uint32_t>(*port)))
    return spec_error(kind + ": " + key + "=" + value + ": port " + std::string(parts[1]) + " of " +
                      std::string(parts[0]) + " has no link");
  return PortRef{it->second, static_cast<std::uint32_t>(*port),
                 with_opt ? std::string(parts[2]) : ""};
}

// nvl=N (and gpus=G): domains of N consecutive hosts, "nvl01", "nvl02", ...
Result<void> spec_domains(const Params& p, const Gen& g, FabricBuilder& b) {
  const auto nvl = p.num("nvl", 0, 1), gpus = p.num("gpus", 0, 1, kMaxGpusPerHost);
  for (const auto* r : {&nvl, &gpus})
    if (!*r) return std::unexpected(r->error());
  if (*nvl == 0) {
    if (*gpus != 0)
      return spec_error(p.kind +
                        ": gpus= is the GPU count of the hosts of nvl= domains; give "
                        "nvl= too");
    return {};
  }
  std::vector<std::string> hosts;  // in numbering order
  std::set<std::string> seen;
  for (std::size_t i : g.order)
    if (g.is_ca[i]) {
      const auto& id = g.nodes[i].id;
      std::string host = id.substr(0, id.find(' '));
      if (seen.insert(host).second) hosts.push_back(std::move(host));
    }
  std::sort(hosts.begin(), hosts.end());  // node%0Wd: lexical is numeric
  if (hosts.size() % *nvl != 0)
    return spec_error(p.kind + ": nvl=" + std::to_string(*nvl) + " does not divide the " +
                      std::to_string(hosts.size()) + " hosts into whole domains");
  const std::size_t count = hosts.size() / *nvl;
  const std::size_t width = std::max<std::size_t>(2, std::to_string(count).size());
  for (std::size_t h = 0; h < hosts.size(); ++h) {
    std::string n = std::to_string(h / *nvl + 1);
    b.add_domain_host("nvl" + std::string(width - n.size(), '0') + n, hosts[h], *gpus);
  }
  return {};
}

}  // namespace

bool looks_like_spec(std::string_view s) {
  // "word:..." with a lower-case word and no path separator; generate() then names an
  // unknown kind instead of the user seeing "no such file".
  const auto colon = s.find(':');
  if (colon == std::string_view::npos || colon == 0 || s.find('/') != std::string_view::npos)
    return false;
  return std::all_of(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(colon),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); });
}

std::string spec_help() {
  std::string out;
  for (const auto& [kind, keys] : kinds()) {
    out += kind + ":\n";
    for (const auto& k : keys)
      out += "  " + std::string(k.key) + "=" + (*k.fallback ? k.fallback : "(derived)") + "  " +
             k.help + "\n";
  }
  out += std::string("all kinds:\n  ") + kNvlHelp + "\n  " + kGpusHelp + "\n  " + kDegradeHelp +
         "\n  " + kCutHelp + "\n";
  return out;
}

Result<Fabric> generate(std::string_view spec) {
  auto params = parse(spec);
  if (!params) return std::unexpected(params.error());
  Gen g;
  if (auto r = common_keys(*params, g); !r) return std::unexpected(r.error());
  Result<void> r = params->kind == "fat2"   ? gen_fat2(*params, g)
                   : params->kind == "fat3" ? gen_fat3(*params, g)
                                            : gen_rail(*params, g);
  if (!r) return std::unexpected(r.error());

  // Per-link rate overrides and cuts.
  std::map<std::pair<std::size_t, std::uint32_t>, LinkRate> rate_of;  // keyed by switch end
  std::map<std::pair<std::size_t, std::uint32_t>, bool> cut;
  for (const auto& d : params->degrade) {
    auto ref = port_ref(g, params->kind, "degrade", d, true);
    if (!ref) return std::unexpected(ref.error());
    LinkRate lr = g.rate;
    const std::string& opt = ref->opt;
    if (opt.starts_with("w=")) {
      const auto w = parse_width(opt.substr(2));
      if (!w || *w == LinkWidth::kUnknown)
        return spec_error(params->kind + ": degrade=" + d +
                          ": expected w=1, w=2, w=4, w=8 or w=12");
      lr.width = *w;
    } else if (opt.starts_with("s=")) {
      const auto s = parse_speed(opt.substr(2));
      if (!s || *s == LinkSpeed::kUnknown)
        return spec_error(params->kind + ": degrade=" + d + ": expected s=SDR..XDR");
      lr.speed = *s;
    } else {
      return spec_error(params->kind + ": degrade=" + d + ": expected w=<lanes> or s=<speed>");
    }
    const auto [peer, pp] = g.nodes[ref->node].ports.at(ref->port);
    if (rate_of.contains({ref->node, ref->port}))
      return spec_error(params->kind + ": degrade=" + d + ": that link is already degraded");
    rate_of[{ref->node, ref->port}] = lr;
    rate_of[{peer, pp}] = lr;
  }
  for (const auto& c : params->cut) {
    auto ref = port_ref(g, params->kind, "cut", c, false);
    if (!ref) return std::unexpected(ref.error());
    const auto [peer, pp] = g.nodes[ref->node].ports.at(ref->port);
    if (cut.contains({ref->node, ref->port}))
      return spec_error(params->kind + ": cut=" + c + ": that link is already cut");
    if (rate_of.contains({ref->node, ref->port}))
      return spec_error(params->kind + ": cut=" + c +
                        ": that link is also degraded; cut or degrade it, not both");
    cut[{ref->node, ref->port}] = true;
    cut[{peer, pp}] = true;
  }

  // GUIDs as ibsim hands them out: the first HCA is written first (so ibsim's default
  // SIM_HOST is a CA), then every node in creation order; switches take consecutive GUIDs
  // from the switch base, CAs take node GUID + one per port from the CA base.
  std::vector<std::size_t> emit;
  std::size_t first_ca = g.nodes.size();
  for (std::size_t i : g.order)
    if (g.is_ca[i]) {
      first_ca = i;
      break;
    }
  if (first_ca < g.nodes.size()) emit.push_back(first_ca);
  for (std::size_t i : g.order)
    if (i != first_ca) emit.push_back(i);
  std::vector<Guid> guid(g.nodes.size());
  Guid next_sw = kSwitchGuidBase, next_ca = kCaGuidBase;
  for (std::size_t i : emit) {
    if (g.is_ca[i]) {
      guid[i] = next_ca;
      next_ca += 1 + g.nodes[i].nports;
    } else {
      guid[i] = next_sw++;
    }
  }

  FabricBuilder b("spec " + std::string(spec));
  for (std::size_t i : emit) {
    NodeRecord n;
    n.guid = guid[i];
    n.type = g.is_ca[i] ? NodeType::kCa : NodeType::kSwitch;
    n.description = g.is_ca[i] ? g.nodes[i].id : g.switch_desc(g.nodes[i].id);
    n.num_ports = static_cast<PortNum>(g.nodes[i].nports);
    n.vendor_id = kVendorMellanox;
    n.device_id = g.is_ca[i] ? kDevConnectX6 : g.device_id;
    n.system_image_guid = guid[i];
    n.enhanced_port0 = !g.is_ca[i];
    if (auto res = b.add_node(n); !res) return std::unexpected(res.error());
    for (const auto& [port, peer] : g.nodes[i].ports) {
      PortRecord pr{static_cast<PortNum>(port), g.is_ca[i] ? guid[i] + port : guid[i], 0, 0};
      if (auto res = b.add_port(guid[i], pr); !res) return std::unexpected(res.error());
    }
  }
  // Accelerator domains: N consecutive hosts each, in host order (as numbered).
  if (auto d = spec_domains(*params, g, b); !d) return std::unexpected(d.error());
  for (std::size_t i : emit)
    for (const auto& [port, peer] : g.nodes[i].ports) {
      if (cut.contains({i, port})) continue;
      const auto it = rate_of.find({i, port});
      if (auto res = b.add_link(guid[i], static_cast<PortNum>(port), guid[peer.first],
                                static_cast<PortNum>(peer.second),
                                it == rate_of.end() ? g.rate : it->second);
          !res)
        return std::unexpected(res.error());
    }
  return b.build();
}

}  // namespace fabricplace::fabric
