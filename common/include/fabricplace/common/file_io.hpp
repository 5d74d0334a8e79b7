// File input and atomic output.
//
// write_file_atomic() writes to a temporary file in the destination's directory, flushes it
// to disk and renames it over the destination, so a reader sees the old content or the new
// one, never a partial file; on any failure the temporary is removed and the destination is
// left untouched. The path "-" means standard output.
#pragma once

#include <string>
#include <string_view>

#include "fabricplace/common/error.hpp"

namespace fabricplace {

/// Reads a whole file ("-" reads standard input).
Result<std::string> read_file(const std::string& path);

/// kDurable (the default) flushes the file and the rename to disk; kAtomic only renames (still
/// never a partial file to readers), for per-job files on a launch's critical path.
enum class Durability : bool { kAtomic, kDurable };

/// Atomically replaces `path` with `content` (see above).
Result<void> write_file_atomic(const std::string& path, std::string_view content,
                               Durability d = Durability::kDurable);

}  // namespace fabricplace
