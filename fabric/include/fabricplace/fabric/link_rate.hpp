// InfiniBand link width and speed.
//
// Rates are data rates after line encoding: lanes x per-lane rate, with per-lane SDR 2,
// DDR 4, QDR 8 (8b/10b), FDR10 10, FDR 13.64, EDR 25 (64b/66b), HDR 50, NDR 100, XDR 200
// Gb/s. So 4x HDR = 200 Gb/s, 4x EDR = 100 as quoted, and FDR10 is rightly faster than QDR
// (the marketing figures, 40 Gb/s for both, would hide a QDR fallback).
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

struct LinkRate {
  LinkWidth width = LinkWidth::kUnknown;
  LinkSpeed speed = LinkSpeed::kUnknown;

  [[nodiscard]] bool known() const {
    return width != LinkWidth::kUnknown && speed != LinkSpeed::kUnknown;
  }
  /// Nominal rate in Gb/s; 0 when width or speed is unknown.
  [[nodiscard]] double gbps() const;
  /// "4xHDR"; unknown parts print as ibnetdiscover prints them ("??", "???").
  [[nodiscard]] std::string to_string() const;

  friend bool operator==(const LinkRate&, const LinkRate&) = default;
};

double lane_gbps(LinkSpeed speed);
std::string_view to_string(LinkWidth width);               ///< "4x", "??"
std::string_view to_string(LinkSpeed speed);               ///< "HDR", "???"
std::optional<LinkWidth> parse_width(std::string_view s);  ///< "4x" (also "4"), "??" -> unknown
std::optional<LinkSpeed> parse_speed(std::string_view s);  ///< "HDR", "hdr", "???" -> unknown
/// Parses "4xHDR" (ibnetdiscover's comment form; "??" and "???" are accepted as unknown).
std::optional<LinkRate> parse_rate(std::string_view s);

/// The lower of two readings of one link: the one with the lower rate (2xNDR against 1xNDR
/// gives 1xNDR); equal rates give the one with fewer lanes (2xNDR against 4xHDR gives 2xNDR),
/// so the result never depends on the order of the arguments. Each reading is first
/// completed from the other (an unknown width or speed taken from it).
LinkRate lower_rate(LinkRate a, LinkRate b);

}  // namespace fabricplace::fabric
