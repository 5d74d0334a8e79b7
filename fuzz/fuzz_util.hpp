// SPDX-License-Identifier: GPL-2.0-or-later
// Shared by the fuzz targets: the input as text, property checks, where tests/data is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "fabricplace/common/error.hpp"
#include "fabricplace/common/strings.hpp"

namespace fabricplace::fuzz {

inline std::string_view text_of(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// The input split on spaces, tabs and line breaks, as Slurm splits a plugstack.conf line
/// and a shell splits a simple command line.
inline std::vector<std::string> words(std::string_view text) {
  std::vector<std::string> out;
  std::size_t i = 0;
  const auto space = [&](std::size_t k) {
    return text[k] == ' ' || text[k] == '\t' || text[k] == '\n';
  };
  while (i < text.size()) {
    while (i < text.size() && space(i)) ++i;
    const std::size_t b = i;
    while (i < text.size() && !space(i)) ++i;
    if (i > b) out.emplace_back(text.substr(b, i - b));
  }
  return out;
}

/// A violated property: say what and abort (libFuzzer saves the input as a crash).
[[noreturn]] inline void violated(std::string_view what, std::string_view detail = {}) {
  const std::string msg = "fuzz: property violated: " + std::string(what) + "\n" +
                          std::string(detail) + (detail.empty() ? "" : "\n");
  std::fwrite(msg.data(), 1, msg.size(), stderr);
  std::abort();
}
inline void require(bool ok, std::string_view what, std::string_view detail = {}) {
  if (!ok) violated(what, detail);
}

/// The longest error message (to_string()) a target accepts: a message quotes at most a few
/// short excerpts of input (str::quoted, docs/sources.md "Text"), never the input itself.
inline constexpr std::size_t kMaxMessage = 2048;

/// An error any input may produce must still be a message for a terminal and a log line:
/// short, one line, valid UTF-8, no control characters but tab (str::excerpt escapes them).
inline void check_error(const Error& e) {
  const std::string m = e.to_string();
  require(!e.message.empty(), "empty error message");
  require(m.size() <= kMaxMessage, "error message longer than kMaxMessage bytes",
          m.substr(0, 400) + "... (" + std::to_string(m.size()) + " bytes)");
  for (std::size_t i = 0; i < m.size(); ++i) {
    const auto c = static_cast<unsigned char>(m[i]);
    require(c >= 0x20 ? c != 0x7f : c == '\t', "control character in an error message",
            "byte " + std::to_string(i) + ": " + str::excerpt(m, 400));
  }
  require(str::invalid_utf8_at(m) == std::string_view::npos, "error message is not valid UTF-8",
          str::excerpt(m, 400));
  require(str::invisible_char_at(m) == std::string_view::npos,
          "invisible or reordering character in an error message", str::excerpt(m, 400));
}

/// Where two strings first differ, with some context, for a failed byte-identity check.
inline std::string first_difference(std::string_view a, std::string_view b) {
  std::size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  const std::size_t from = i > 80 ? i - 80 : 0;
  return "at byte " + std::to_string(i) + ":\n--- first:\n" + std::string(a.substr(from, 200)) +
         "\n--- second:\n" + std::string(b.substr(from, 200));
}

/// tests/data (FABRICPLACE_FUZZ_DATA, compiled in), or $FABRICPLACE_FUZZ_DATA when set.
inline std::string data_dir() {
  if (const char* d = std::getenv("FABRICPLACE_FUZZ_DATA"); d && *d) return d;
  return FABRICPLACE_FUZZ_DATA;
}

}  // namespace fabricplace::fuzz
