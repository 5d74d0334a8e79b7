// SPDX-License-Identifier: GPL-2.0-or-later
// Error values for every fallible operation in fabricplace.
//
// Contract: parsers, sources, exporters and configuration return Result<T>
// (std::expected<T, Error>). An Error names what failed, where (file and 1-based line, when
// there is one) and what was expected. Exceptions are reserved for bugs and std::bad_alloc
// and never cross an extern "C" boundary. "No feasible placement" is not an error.
#pragma once

#include <expected>
#include <string>
#include <utility>

namespace fabricplace {

enum class ErrorCode {
  kIo,           ///< a file could not be opened, read or written
  kSyntax,       ///< input does not follow its format
  kReference,    ///< input is well-formed but inconsistent (e.g. a peer that does not link back)
  kDuplicate,    ///< the same identity twice (GUID, host, switch name)
  kUnsupported,  ///< a valid input this build cannot handle
  kUsage,        ///< a request that cannot be satisfied as asked (bad option values)
};

struct Error {
  ErrorCode code = ErrorCode::kSyntax;
  std::string message;  ///< what is wrong and what was expected
  std::string file;     ///< file or source name; empty when not applicable
  int line = 0;         ///< 1-based line, 0 when not applicable

  /// "file:line: message", "file: message" or "message".
  [[nodiscard]] std::string to_string() const;
};

template <class T>
using Result = std::expected<T, Error>;

/// Builds an unexpected Error; use as `return fail(ErrorCode::kSyntax, "...", file, line);`.
inline std::unexpected<Error> fail(ErrorCode code, std::string message, std::string file = {},
                                   int line = 0) {
  return std::unexpected(Error{code, std::move(message), std::move(file), line});
}

}  // namespace fabricplace
