// Shared by the fuzz targets: the input as text, property checks, where tests/data is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace fabricplace::fuzz {

inline std::string_view text_of(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
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
