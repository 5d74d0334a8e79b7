// SPDX-License-Identifier: GPL-2.0-or-later
// Link rates: InfiniBand width and speed, or a plain Ethernet rate in Gb/s.
//
// Rates are data rates after line encoding: lanes x per-lane rate, with per-lane SDR 2,
// DDR 4, QDR 8 (8b/10b), FDR10 10, FDR 13.64, EDR 25 (64b/66b), HDR 50, NDR 100, XDR 200
// Gb/s. So 4x HDR = 200 Gb/s, 4x EDR = 100 as quoted, and FDR10 is rightly faster than QDR
// (the marketing figures, 40 Gb/s for both, would hide a QDR fallback). Ethernet rates
// (sources that describe RoCE fabrics: a tiers CSV, topology.conf's LinkSpeed=) are held
// as quoted, in whole Gb/s: 400GbE = 400 Gb/s.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fabricplace::fabric {

/// Active link width; the enumerator value is the lane count.
enum class LinkWidth : std::uint8_t { kUnknown = 0, k1x = 1, k2x = 2, k4x = 4, k8x = 8, k12x = 12 };

/// Active link speed, in increasing per-lane rate order (FDR10 runs at QDR's 10 Gb/s/lane
/// with 64b/66b encoding, so it sorts after QDR).
enum class LinkSpeed : std::uint8_t {
  kUnknown = 0,
  kSDR,
  kDDR,
  kQDR,
  kFDR10,
  kFDR,
  kEDR,
  kHDR,
  kNDR,
  kXDR
};

/// The fastest Ethernet rate accepted (1.6 TbE is the fastest standard).
inline constexpr std::uint32_t kMaxEthernetGbps = 100000;

struct LinkRate {
  LinkWidth width = LinkWidth::kUnknown;
  LinkSpeed speed = LinkSpeed::kUnknown;
  /// An Ethernet rate in Gb/s (width and speed unknown); 0 for InfiniBand rates.
  std::uint32_t ethernet_gbps = 0;

  /// The Ethernet rate of `gbps` Gb/s ("400GbE").
  [[nodiscard]] static LinkRate ethernet(std::uint32_t gbps) {
    return LinkRate{LinkWidth::kUnknown, LinkSpeed::kUnknown, gbps};
  }
  [[nodiscard]] bool is_ethernet() const { return ethernet_gbps != 0; }
  [[nodiscard]] bool known() const {
    return is_ethernet() || (width != LinkWidth::kUnknown && speed != LinkSpeed::kUnknown);
  }
  /// Nominal rate in Gb/s; 0 when width or speed is unknown.
  [[nodiscard]] double gbps() const;
  /// "4xHDR"; unknown parts print as ibnetdiscover prints them ("??", "???"). Ethernet
  /// rates print as "400GbE".
  [[nodiscard]] std::string to_string() const;

  friend bool operator==(const LinkRate&, const LinkRate&) = default;
};

double lane_gbps(LinkSpeed speed);
std::string_view to_string(LinkWidth width);               ///< "4x", "??"
std::string_view to_string(LinkSpeed speed);               ///< "HDR", "???"
std::optional<LinkWidth> parse_width(std::string_view s);  ///< "4x" (also "4"), "??" -> unknown
std::optional<LinkSpeed> parse_speed(std::string_view s);  ///< "HDR", "hdr", "???" -> unknown
/// Parses "4xHDR" (ibnetdiscover's comment form; "??" and "???" are accepted as unknown) and
/// Ethernet rates in whole Gb/s: "400G", "400Gb/s", "400Gbps", "400GbE" (any case), from 1 to
/// kMaxEthernetGbps.
std::optional<LinkRate> parse_rate(std::string_view s);

/// The lower of two readings of one link: the one with the lower rate (2xNDR against 1xNDR
/// gives 1xNDR); equal rates give the one with fewer lanes (2xNDR against 4xHDR gives 2xNDR),
/// so the result never depends on the order of the arguments. Each InfiniBand reading is
/// first completed from the other (an unknown width or speed taken from it).
LinkRate lower_rate(LinkRate a, LinkRate b);

}  // namespace fabricplace::fabric
