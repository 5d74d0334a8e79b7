// Small string helpers shared by the parsers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fabricplace::str {

std::string_view trim(std::string_view s);
bool starts_with_icase(std::string_view s, std::string_view prefix);
std::vector<std::string_view> split(std::string_view s, char sep);

/// Parses a non-negative decimal integer that must fit in T; no sign, no spaces.
std::optional<std::uint64_t> parse_uint(std::string_view s, std::uint64_t max);
/// Parses hex digits with or without a leading "0x" (64-bit at most).
std::optional<std::uint64_t> parse_hex(std::string_view s);

/// "0x%016x": the canonical GUID spelling in our outputs.
std::string guid_hex(std::uint64_t guid);
/// "0x%x".
std::string hex(std::uint64_t value);

/// Splits text into lines (without the '\n', a trailing '\r' removed); the last line is
/// returned even without a newline.
std::vector<std::string_view> lines(std::string_view text);

/// JSON string literal with escapes (for the hand-written, byte-stable JSON writers).
std::string json_quote(std::string_view s);

}  // namespace fabricplace::str
