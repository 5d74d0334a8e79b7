// SPDX-License-Identifier: GPL-2.0-or-later
// Resource bounds for everything fabricplace reads (docs/sources.md, "Limits").
//
// Every input is bounded in memory and time: a file's size (after decompression for .gz),
// the nodes and ports a source or a spec may produce, a hostlist's expansion, JSON nesting,
// threads. The defaults are far above any real cluster and far below what would exhaust a
// machine; each can be raised (or lowered) through an environment variable, read once:
//
//   FABRICPLACE_MAX_INPUT_MB    input bytes per file, in MiB               (default 256)
//   FABRICPLACE_MAX_NODES       switches + CAs one fabric may hold          (default 131,072)
//   FABRICPLACE_MAX_PORTS       ports one fabric may hold                  (default 1,048,576)
//   FABRICPLACE_MAX_HOSTLIST    names one hostlist expression may expand to (default 1,000,000)
//   FABRICPLACE_MAX_JSON_DEPTH  nesting of a JSON input                    (default 64)
//
// A value that is not a positive integer is ignored (the default holds) with no error: the
// variable is a safety valve, not configuration.
#pragma once

#include <cstddef>
#include <cstdint>

namespace fabricplace {

struct Limits {
  std::uint64_t input_bytes = std::uint64_t{256} << 20;
  // A fabric at these limits takes about 0.6 GB and 6 s to build and show, so no input of
  // the defaults costs more than 1 GB or 10 s (docs/performance.md).
  std::uint64_t nodes = 131'072;
  std::uint64_t ports = 1'048'576;
  std::uint64_t hostlist_names = 1'000'000;
  std::uint64_t json_depth = 64;
};

/// The longest host or switch name, in bytes: a DNS name's longest (RFC 1035: 253
/// characters). A node description (a host name and its HCA's, "node001 HCA-1") may be
/// twice that, well above an InfiniBand NodeDescription (64 bytes). Fixed, not settable:
/// a longer one is a mistake in the input, and error messages quote them whole.
inline constexpr std::size_t kMaxNameBytes = 255;
inline constexpr std::size_t kMaxDescriptionBytes = 512;
/// How much of a name or description an error message or warning quotes (str::quoted): twice
/// an InfiniBand NodeDescription, so real ones are quoted whole and a message naming two
/// stays short.
inline constexpr std::size_t kNameExcerpt = 128;

/// The limits in force: the defaults, overridden by the environment (read on first use).
const Limits& limits();

/// Overflow-safe arithmetic for size checks before allocating: false when the exact result
/// would exceed `max` (or wrap), else true with the result in `out`.
inline bool mul_within(std::uint64_t a, std::uint64_t b, std::uint64_t max, std::uint64_t& out) {
  if (a != 0 && b > max / a) return false;
  out = a * b;
  return out <= max;
}
inline bool add_within(std::uint64_t a, std::uint64_t b, std::uint64_t max, std::uint64_t& out) {
  if (a > max || b > max - a) return false;
  out = a + b;
  return true;
}

}  // namespace fabricplace
