// SPDX-License-Identifier: GPL-2.0-or-later
#include "fabricplace/fabric/link_rate.hpp"

#include <array>
#include <cctype>
#include <tuple>
#include <utility>

namespace fabricplace::fabric {
namespace {

struct SpeedInfo {
  LinkSpeed speed;
  std::string_view name;
  double lane_gbps;
};
// Ordered longest name first where prefixes collide ("FDR10" before "FDR").
constexpr std::array<SpeedInfo, 9> kSpeeds{{
    {LinkSpeed::kFDR10, "FDR10", 10.3125 * 64 / 66},  // QDR signalling, 64b/66b: 10 Gb/s
    {LinkSpeed::kSDR, "SDR", 2.5 * 8 / 10},
    {LinkSpeed::kDDR, "DDR", 5.0 * 8 / 10},
    {LinkSpeed::kQDR, "QDR", 10.0 * 8 / 10},
    {LinkSpeed::kFDR, "FDR", 14.0625 * 64 / 66},
    {LinkSpeed::kEDR, "EDR", 25.78125 * 64 / 66},
    {LinkSpeed::kHDR, "HDR", 50.0},
    {LinkSpeed::kNDR, "NDR", 100.0},
    {LinkSpeed::kXDR, "XDR", 200.0},
}};

bool iequal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::toupper(static_cast<unsigned char>(a[i])) !=
        std::toupper(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

}  // namespace

double lane_gbps(LinkSpeed speed) {
  for (const auto& s : kSpeeds)
    if (s.speed == speed) return s.lane_gbps;
  return 0.0;
}

double LinkRate::gbps() const {
  if (is_ethernet()) return static_cast<double>(ethernet_gbps);
  return static_cast<double>(std::to_underlying(width)) * lane_gbps(speed);
}

std::string_view to_string(LinkWidth width) {
  switch (width) {
    case LinkWidth::k1x:
      return "1x";
    case LinkWidth::k2x:
      return "2x";
    case LinkWidth::k4x:
      return "4x";
    case LinkWidth::k8x:
      return "8x";
    case LinkWidth::k12x:
      return "12x";
    case LinkWidth::kUnknown:
      break;
  }
  return "??";
}

std::string_view to_string(LinkSpeed speed) {
  for (const auto& s : kSpeeds)
    if (s.speed == speed) return s.name;
  return "???";
}

std::string LinkRate::to_string() const {
  if (is_ethernet()) return std::to_string(ethernet_gbps) + "GbE";
  return std::string(fabric::to_string(width)) + std::string(fabric::to_string(speed));
}

std::optional<LinkWidth> parse_width(std::string_view s) {
  if (s == "??") return LinkWidth::kUnknown;
  if (!s.empty() && (s.back() == 'x' || s.back() == 'X')) s.remove_suffix(1);
  if (s == "1") return LinkWidth::k1x;
  if (s == "2") return LinkWidth::k2x;
  if (s == "4") return LinkWidth::k4x;
  if (s == "8") return LinkWidth::k8x;
  if (s == "12") return LinkWidth::k12x;
  return std::nullopt;
}

std::optional<LinkSpeed> parse_speed(std::string_view s) {
  if (s == "???") return LinkSpeed::kUnknown;
  for (const auto& info : kSpeeds)
    if (iequal(s, info.name)) return info.speed;
  return std::nullopt;
}

LinkRate lower_rate(LinkRate a, LinkRate b) {
  // Complete each reading from the other, then take the lower: the same for either order.
  const LinkRate a0 = a, b0 = b;
  if (a.is_ethernet() || b.is_ethernet()) return b.gbps() < a.gbps() ? b : a;
  if (a.width == LinkWidth::kUnknown) a.width = b0.width;
  if (a.speed == LinkSpeed::kUnknown) a.speed = b0.speed;
  if (b.width == LinkWidth::kUnknown) b.width = a0.width;
  if (b.speed == LinkSpeed::kUnknown) b.speed = a0.speed;
  const auto key = [](const LinkRate& r) { return std::tuple(r.gbps(), r.width, r.speed); };
  return key(b) < key(a) ? b : a;
}

std::optional<LinkRate> parse_rate(std::string_view s) {
  // Ethernet: whole Gb/s and a unit ("400G", "400Gb/s", "400Gbps", "400GbE").
  if (const auto digits = s.find_first_not_of("0123456789");
      digits != 0 && digits != std::string_view::npos && digits <= 6) {
    const std::string_view unit = s.substr(digits);
    if (iequal(unit, "G") || iequal(unit, "Gb/s") || iequal(unit, "Gbps") || iequal(unit, "GbE")) {
      std::uint32_t v = 0;
      for (char c : s.substr(0, digits)) v = v * 10 + static_cast<std::uint32_t>(c - '0');
      if (v == 0 || v > kMaxEthernetGbps) return std::nullopt;
      return LinkRate::ethernet(v);
    }
  }
  // Width: "??" or digits followed by 'x'.
  std::size_t w_end;
  if (s.starts_with("??")) {
    w_end = 2;
  } else {
    const auto x = s.find_first_of("xX");
    if (x == std::string_view::npos) return std::nullopt;
    w_end = x + 1;
  }
  const auto width = parse_width(s.substr(0, w_end));
  const auto speed = parse_speed(s.substr(w_end));
  if (!width || !speed) return std::nullopt;
  return LinkRate{*width, *speed};
}

}  // namespace fabricplace::fabric
