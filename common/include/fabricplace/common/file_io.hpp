// SPDX-License-Identifier: GPL-2.0-or-later
// File input and atomic output.
//
// write_file_atomic() writes to a temporary file in the destination's directory, flushes it
// to disk and renames it over the destination, so a reader sees the old content or the new
// one, never a partial file; on any failure the temporary is removed and the destination is
// left untouched. The path "-" means standard output.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "fabricplace/common/error.hpp"

namespace fabricplace {

/// Reads a whole input file ("-" reads standard input; FIFOs and devices are read to their
/// end), at most `limits().input_bytes` (docs/sources.md, Limits): above it, a kIo error that
/// names the limit and how to raise it. gzip-compressed content (by its magic bytes, any
/// name) is decompressed, bounded by the same limit and checked to its end: a truncated or
/// corrupt stream is an error. A leading UTF-8 byte order mark is dropped, so every input
/// treats a BOM alike.
Result<std::string> read_file(const std::string& path);
Result<std::string> read_file(const std::string& path, std::uint64_t max_bytes);

/// read_file() on a descriptor the caller opened (and closes): `name` is for messages.
Result<std::string> read_open_file(int fd, const std::string& name, std::uint64_t max_bytes);

/// read_file() of a regular file only (a link to one is followed): a FIFO, socket or device
/// is an error, and opening never blocks (O_NONBLOCK), for files a configuration names.
Result<std::string> read_regular_file(const std::string& path, std::uint64_t max_bytes);

/// kDurable (the default) flushes the file and the rename to disk; kAtomic only renames (still
/// never a partial file to readers), for per-job files on a launch's critical path.
enum class Durability : bool { kAtomic, kDurable };

/// Where writing `path` lands: symlinks followed (up to 40), relative ones from their own
/// directory, so the file they point to is replaced, not the link.
std::string resolve_symlinks(const std::string& path);

/// Writes all of `data` to `fd`, retrying short writes and EINTR; false with errno set.
bool write_all(int fd, std::string_view data);

/// Atomically replaces `path` with `content` (see above).
Result<void> write_file_atomic(const std::string& path, std::string_view content,
                               Durability d = Durability::kDurable);

}  // namespace fabricplace
