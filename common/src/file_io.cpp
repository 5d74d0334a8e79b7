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

namespace fabricplace {

Result<std::string> read_file(const std::string& path) {
  if (path == "-") {
    std::ostringstream ss;
    ss << std::cin.rdbuf();
    return ss.str();
  }
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    return fail(ErrorCode::kIo, "is a directory, expected a file", path);
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail(ErrorCode::kIo, std::string("cannot open: ") + std::strerror(errno), path);
  std::string data;
  in.seekg(0, std::ios::end);
  const auto size = in.tellg();
  if (size > 0) {
    data.resize(static_cast<std::size_t>(size));
    in.seekg(0);
    in.read(data.data(), size);
  } else {
    in.seekg(0);
    data.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  if (in.bad()) return fail(ErrorCode::kIo, "read error", path);
  return data;
}

Result<void> write_file_atomic(const std::string& path, std::string_view content, Durability d) {
  if (path == "-") {
    std::cout.write(content.data(), static_cast<std::streamsize>(content.size()));
    std::cout.flush();
    if (!std::cout) return fail(ErrorCode::kIo, "cannot write to standard output");
    return {};
  }
  namespace fs = std::filesystem;
  std::error_code ec;
  // Writing through a symlink replaces the file it points to, not the link.
  fs::path target(path);
  for (int hops = 0; hops < 40 && fs::is_symlink(target, ec); ++hops) {
    const fs::path next = fs::read_symlink(target, ec);
    if (ec) break;
    target = next.is_absolute() ? next : target.parent_path() / next;
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
  const char* p = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return cleanup("write failed");
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
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
