// SPDX-License-Identifier: GPL-2.0-or-later
#include "fabricplace/common/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include <zlib.h>

#include "fabricplace/common/limits.hpp"

namespace fabricplace {

namespace {

std::string mib(std::uint64_t bytes) {
  const std::uint64_t m = bytes >> 20;
  return m > 0 ? std::to_string(m) + " MiB" : std::to_string(bytes) + " bytes";
}

Error too_big(const std::string& path, std::uint64_t max, bool decompressed) {
  return Error{ErrorCode::kIo,
               std::string(decompressed ? "decompresses to" : "is") + " more than " + mib(max) +
                   ", the input limit (docs/sources.md, Limits; FABRICPLACE_MAX_INPUT_MB raises it)",
               path, 0};
}

// Reads fd to its end, at most max bytes (one more is read to tell "exactly max" from more).
Result<std::string> read_fd(int fd, const std::string& path, std::uint64_t max) {
  std::string data;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    if (static_cast<std::uint64_t>(st.st_size) > max) return std::unexpected(too_big(path, max, false));
    data.reserve(static_cast<std::size_t>(st.st_size));
  }
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(ErrorCode::kIo, std::string("read error: ") + std::strerror(errno), path);
    }
    if (n == 0) break;
    if (data.size() + static_cast<std::size_t>(n) > max)
      return std::unexpected(too_big(path, max, false));
    data.append(buf, static_cast<std::size_t>(n));
  }
  return data;
}

// gzip members (one or several, as `cat a.gz b.gz` makes), each checked to its CRC and length.
Result<std::string> gunzip(const std::string& in, const std::string& path, std::uint64_t max) {
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 16) != Z_OK) return fail(ErrorCode::kIo, "zlib: cannot initialise", path);
  std::string out;
  char buf[1 << 16];
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = 0;
  std::size_t fed = 0;
  int ret = Z_OK;
  for (;;) {
    if (zs.avail_in == 0 && fed < in.size()) {
      const std::size_t chunk = std::min<std::size_t>(in.size() - fed, 1u << 30);
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data() + fed));
      zs.avail_in = static_cast<uInt>(chunk);
      fed += chunk;
    }
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    ret = inflate(&zs, Z_NO_FLUSH);
    const std::size_t got = sizeof buf - zs.avail_out;
    if (out.size() + got > max) {
      inflateEnd(&zs);
      return std::unexpected(too_big(path, max, true));
    }
    out.append(buf, got);
    if (ret == Z_STREAM_END) {
      if (zs.avail_in == 0 && fed == in.size()) break;
      // Another member follows (concatenated .gz files); trailing zeros are padding.
      const auto* rest = reinterpret_cast<const unsigned char*>(zs.next_in);
      if (zs.avail_in >= 2 && rest[0] == 0x1f && rest[1] == 0x8b) {
        inflateReset(&zs);
        continue;
      }
      bool zeros = fed == in.size();
      for (uInt k = 0; zeros && k < zs.avail_in; ++k) zeros = rest[k] == 0;
      if (!zeros) {
        inflateEnd(&zs);
        return fail(ErrorCode::kIo, "gzip: unexpected bytes after the compressed data", path);
      }
      break;
    }
    if (ret == Z_BUF_ERROR && zs.avail_in == 0 && fed == in.size()) {
      inflateEnd(&zs);
      return fail(ErrorCode::kIo, "gzip: truncated (the compressed stream ends early)", path);
    }
    if (ret != Z_OK && ret != Z_BUF_ERROR) {
      const std::string why = zs.msg ? zs.msg : "corrupt data";
      inflateEnd(&zs);
      return fail(ErrorCode::kIo, "gzip: " + why, path);
    }
  }
  inflateEnd(&zs);
  return out;
}

}  // namespace

Result<std::string> read_file(const std::string& path) { return read_file(path, limits().input_bytes); }

std::string resolve_symlinks(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path target(path);
  for (int hops = 0; hops < 40 && fs::is_symlink(target, ec); ++hops) {
    const fs::path next = fs::read_symlink(target, ec);
    if (ec) break;
    target = next.is_absolute() ? next : target.parent_path() / next;
  }
  return target.string();
}

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (n == 0) {  // no progress (never for files; a device could): do not spin
      errno = EIO;
      return false;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

Result<std::string> read_open_file(int fd, const std::string& name, std::uint64_t max_bytes) {
  auto data = read_fd(fd, name, max_bytes);
  if (!data) return data;
  if (data->size() >= 2 && static_cast<unsigned char>((*data)[0]) == 0x1f &&
      static_cast<unsigned char>((*data)[1]) == 0x8b) {
    data = gunzip(*data, name, max_bytes);
    if (!data) return data;
  }
  if (data->starts_with("\xEF\xBB\xBF")) data->erase(0, 3);  // a UTF-8 byte order mark
  return data;
}

Result<std::string> read_file(const std::string& path, std::uint64_t max_bytes) {
  if (path.empty()) return fail(ErrorCode::kUsage, "empty file name");
  if (path == "-") return read_open_file(0, "standard input", max_bytes);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(ErrorCode::kIo, std::string("cannot open: ") + std::strerror(errno), path);
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    return fail(ErrorCode::kIo, "is a directory, expected a file", path);
  }
  auto data = read_open_file(fd, path, max_bytes);
  ::close(fd);
  return data;
}

Result<std::string> read_regular_file(const std::string& path, std::uint64_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return fail(ErrorCode::kIo, std::string("cannot open: ") + std::strerror(errno), path);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return fail(ErrorCode::kIo, "is not a regular file (a directory, FIFO, socket or device)", path);
  }
  auto data = read_open_file(fd, path, max_bytes);
  ::close(fd);
  return data;
}

Result<void> write_file_atomic(const std::string& path, std::string_view content, Durability d) {
  if (path == "-") {
    std::cout.write(content.data(), static_cast<std::streamsize>(content.size()));
    std::cout.flush();
    if (!std::cout) return fail(ErrorCode::kIo, "cannot write to standard output");
    return {};
  }
  if (path.empty()) return fail(ErrorCode::kUsage, "empty output file name");
  namespace fs = std::filesystem;
  // Writing through a symlink replaces the file it points to, not the link.
  const fs::path target(resolve_symlinks(path));
  // A FIFO or a character device (/dev/null, /dev/stdout, a pipe a reader waits on) is
  // written into directly: replacing it with a regular file would break whoever uses it.
  // Anything else that is not a regular file is refused.
  if (struct stat st {}; ::stat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    if (S_ISDIR(st.st_mode)) return fail(ErrorCode::kIo, "is a directory, expected a file", path);
    if (!S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode))
      return fail(ErrorCode::kIo,
                  "is neither a regular file, a FIFO nor a character device: not written",
                  path);
    const int fd = ::open(target.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
      return fail(ErrorCode::kIo, std::string("cannot open for writing: ") + std::strerror(errno),
                  path);
    if (!write_all(fd, content)) {
      const std::string msg = std::string("write failed: ") + std::strerror(errno);
      ::close(fd);
      return fail(ErrorCode::kIo, msg, path);
    }
    if (::close(fd) != 0)
      return fail(ErrorCode::kIo, std::string("close failed: ") + std::strerror(errno), path);
    return {};
  }
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string tmpl = (dir / ("." + target.filename().string() + ".tmp.XXXXXX")).string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0)
    return fail(ErrorCode::kIo,
                std::string("cannot create a temporary file next to it: ") + std::strerror(errno),
                path);
  auto cleanup = [&](const std::string& what) {
    const std::string msg = what + ": " + std::strerror(errno);
    ::close(fd);
    ::unlink(tmpl.c_str());
    return fail(ErrorCode::kIo, msg, path);
  };
  if (!write_all(fd, content)) return cleanup("write failed");
  if (d == Durability::kDurable && ::fsync(fd) != 0) return cleanup("fsync failed");
  // mkstemp creates 0600: keep the mode of the file being replaced, or use 0666 minus umask.
  struct stat old {};
  mode_t mode;
  if (::stat(target.c_str(), &old) == 0 && S_ISREG(old.st_mode)) {
    mode = old.st_mode & 07777;
    (void)::fchown(fd, old.st_uid, old.st_gid);  // keeps owner and group where we may (root)
  } else {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  }
  if (::fchmod(fd, mode) != 0) return cleanup("chmod failed");
  if (::close(fd) != 0) {
    const std::string msg = std::string("close failed: ") + std::strerror(errno);
    ::unlink(tmpl.c_str());
    return fail(ErrorCode::kIo, msg, path);
  }
  if (::rename(tmpl.c_str(), target.c_str()) != 0) {
    const std::string msg = std::string("rename failed: ") + std::strerror(errno);
    ::unlink(tmpl.c_str());
    return fail(ErrorCode::kIo, msg, path);
  }
  // Make the rename itself durable.
  if (d == Durability::kAtomic) return {};
  if (const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY); dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return {};
}

}  // namespace fabricplace
