// SPDX-License-Identifier: GPL-2.0-or-later
#include "fabricplace/common/owned_dir.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "fabricplace/common/strings.hpp"

namespace fabricplace {

std::vector<std::string> list_names(int dir_fd) {
  std::vector<std::string> out;
  const int dup = ::dup(dir_fd);  // closedir() closes the copy; the caller's stays open
  if (dup < 0) return out;
  DIR* d = ::fdopendir(dup);
  if (!d) {
    ::close(dup);
    return out;
  }
  ::rewinddir(d);  // the copy shares the offset: start from the first entry
  while (const dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n != "." && n != "..") out.push_back(n);
  }
  ::closedir(d);
  std::ranges::sort(out);
  return out;
}

namespace {

std::string errno_text() {
  return std::strerror(errno);
}

std::string join(const std::string& dir, std::string_view name) {
  if (dir.empty()) return std::string(name);
  return dir.back() == '/' ? dir + std::string(name) : dir + "/" + std::string(name);
}

// Why an open with O_NOFOLLOW | O_DIRECTORY failed, in words, for `path`.
Error refused_dir(const std::string& path, int err, bool is_link) {
  if (is_link)
    return Error{ErrorCode::kIo,
                 "is a symbolic link: fabricplace writes and removes files only in a real "
                 "directory it owns, never through a link (a link could send them anywhere); "
                 "name the directory itself, or remove the link",
                 path, 0};
  if (err == ENOTDIR) return Error{ErrorCode::kIo, "exists and is not a directory", path, 0};
  return Error{ErrorCode::kIo, std::string("cannot open directory: ") + std::strerror(err), path,
               0};
}

// The checks every directory passes; `fresh`: created just now (its mode is then set). Under
// kOwned the running user must own it; under kAdmins (Slurm's configuration directory, whose
// files decide what slurmd loads as root) root or the running user. Under both, nobody else may
// write it: they could plant links or files in it. A directory made just now is checked too:
// between mkdir and open, whoever can write its parent could have put their own in its place.
Result<void> check_dir(int fd, const std::string& path, bool fresh, mode_t mode,
                       OwnedDir::Rule rule) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return fail(ErrorCode::kIo, "cannot stat: " + errno_text(), path);
  if (!S_ISDIR(st.st_mode)) return fail(ErrorCode::kIo, "exists and is not a directory", path);
  const auto me = ::geteuid();
  const bool admins = rule == OwnedDir::Rule::kAdmins;
  // A directory made just now is this user's, whatever the rule: one owned by root (when sync
  // runs as root) would be one swapped in, not the one it made.
  if (st.st_uid != me && !(admins && !fresh && st.st_uid == 0))
    return fail(ErrorCode::kIo,
                "is owned by uid " + std::to_string(st.st_uid) + ", not by " +
                    (admins ? "root or " : "") + "the user running fabricplace (uid " +
                    std::to_string(me) + "): it is refused, since its owner could plant " +
                    (admins ? "files that Slurm loads" : "links") +
                    " in it; chown it, or run fabricplace as its owner",
                path);
  if (fresh) {
    if (::fchmod(fd, mode) != 0) return fail(ErrorCode::kIo, "cannot set its mode: " + errno_text(), path);
    return {};
  }
  // Group write is allowed to root's group on an admin's directory (members of gid 0 may
  // already change what root runs); never to others.
  const bool group_ok = admins && st.st_gid == 0;
  if ((st.st_mode & S_IWOTH) != 0 || ((st.st_mode & S_IWGRP) != 0 && !group_ok))
    return fail(ErrorCode::kIo,
                std::string("is writable by its group or by others: it is refused, since they "
                            "could plant ") +
                    (admins ? "files that Slurm loads in it (chmod go-w; group write is "
                              "allowed to group root)"
                            : "links in it (chmod go-w)"),
                path);
  return {};
}

// Opens (creating when asked) the directory `name` relative to `at` (AT_FDCWD: a path).
// `follow`: the last component may be a link (an admin's directory named by the user).
Result<int> open_dir_at(int at, const std::string& name, const std::string& shown,
                        OwnedDir::Create create, mode_t mode, OwnedDir::Rule rule,
                        bool follow = false) {
  bool fresh = false;
  const int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW);
  int fd = ::openat(at, name.c_str(), flags);
  if (fd < 0 && errno == ENOENT && create == OwnedDir::Create::kYes) {
    if (::mkdirat(at, name.c_str(), mode) == 0)
      fresh = true;
    else if (errno != EEXIST)
      return fail(ErrorCode::kIo, "cannot create directory: " + errno_text(), shown);
    // The directory just made is opened without following a link, even where a link is
    // allowed (kAdmins): one there now was swapped in after the mkdir.
    fd = ::openat(at, name.c_str(), fresh ? flags | O_NOFOLLOW : flags);
  }
  if (fd < 0) {
    const int err = errno;
    struct stat st {};
    const bool link = ::fstatat(at, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                      S_ISLNK(st.st_mode);
    return std::unexpected(refused_dir(shown, err, link));
  }
  if (auto ok = check_dir(fd, shown, fresh, mode, rule); !ok) {
    ::close(fd);
    return std::unexpected(ok.error());
  }
  return fd;
}

// Removes what `fd` (a directory) holds, never following a link; `depth` bounds the descent.
void empty_dir(int fd, int depth) {
  const auto names = list_names(fd);
  for (const auto& n : names) {
    if (::unlinkat(fd, n.c_str(), 0) == 0) continue;
    if (errno != EISDIR && errno != EPERM) continue;
    if (depth <= 0) continue;
    const int sub = ::openat(fd, n.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sub < 0) continue;
    empty_dir(sub, depth - 1);
    ::close(sub);
    ::unlinkat(fd, n.c_str(), AT_REMOVEDIR);
  }
}

constexpr int kMaxRemoveDepth = 16;

std::string temporary_for(std::string_view name) {
  static std::atomic<unsigned> counter{0};
  return "." + std::string(name) + ".tmp." + std::to_string(::getpid()) + "." +
         std::to_string(counter.fetch_add(1));
}

// Replaces NAME in the directory `dfd` with `content`: an O_EXCL temporary beside it, renamed
// over the name (a link there is replaced, never followed; a directory there stays).
Result<void> replace_in(int dfd, const std::string& name, const std::string& shown,
                        std::string_view content, mode_t mode, Durability d) {
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    tmp = temporary_for(name);
    fd = ::openat(dfd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0)
    return fail(ErrorCode::kIo, "cannot create a temporary file next to it: " + errno_text(),
                shown);
  auto undo = [&](const std::string& what) {
    const std::string msg = what + ": " + errno_text();
    ::close(fd);
    ::unlinkat(dfd, tmp.c_str(), 0);
    return fail(ErrorCode::kIo, msg, shown);
  };
  if (!write_all(fd, content)) return undo("write failed");
  if (::fchmod(fd, mode) != 0) return undo("chmod failed");
  if (d == Durability::kDurable && ::fsync(fd) != 0) return undo("fsync failed");
  if (::close(fd) != 0) {
    const std::string msg = "close failed: " + errno_text();
    ::unlinkat(dfd, tmp.c_str(), 0);
    return fail(ErrorCode::kIo, msg, shown);
  }
  if (::renameat(dfd, tmp.c_str(), dfd, name.c_str()) != 0) {
    const int err = errno;
    ::unlinkat(dfd, tmp.c_str(), 0);
    std::string why = err == EISDIR ? std::string("is a directory, expected a file (move it away)")
                                    : "rename failed: " + std::string(std::strerror(err));
    if (err == EPERM || err == EACCES)
      why += " (in a sticky directory such as /tmp: another user's file or link has that name)";
    return fail(ErrorCode::kIo, why, shown);
  }
  if (d == Durability::kDurable && ::fsync(dfd) != 0)
    return fail(ErrorCode::kIo, "fsync of its directory failed: " + errno_text(), shown);
  return {};
}

}  // namespace

bool OwnedDir::one_name(std::string_view name) {
  return !name.empty() && name != "." && name != ".." &&
         name.find_first_of(std::string_view("/\0", 2)) == std::string_view::npos;
}

bool OwnedDir::is_temporary(std::string_view name) {
  // ".NAME.tmp.PID.N"
  if (!name.starts_with('.')) return false;
  const auto at = name.rfind(".tmp.");
  if (at == std::string_view::npos || at < 2) return false;
  const auto rest = name.substr(at + 5);
  const auto dot = rest.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == rest.size()) return false;
  const auto digits = [](std::string_view s) {
    return std::ranges::all_of(s, [](char c) { return c >= '0' && c <= '9'; });
  };
  return digits(rest.substr(0, dot)) && digits(rest.substr(dot + 1));
}

Result<OwnedDir> OwnedDir::open(const std::string& path, Create create, mode_t mode, Rule rule) {
  if (path.empty()) return fail(ErrorCode::kUsage, "empty directory name");
  // "dir/" names the directory, not a link's target: without the slash, O_NOFOLLOW applies.
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  auto fd = open_dir_at(AT_FDCWD, p, path, create, mode, rule, rule == Rule::kAdmins);
  if (!fd) return std::unexpected(fd.error());
  return OwnedDir(*fd, p);
}

Result<OwnedDir> OwnedDir::sub(std::string_view name, Create create, mode_t mode,
                               Rule rule) const {
  if (!one_name(name))
    return fail(ErrorCode::kUsage, "not a single name: " + str::quoted(name), path_);
  auto fd = open_dir_at(fd_, std::string(name), path_of(name), create, mode, rule);
  if (!fd) return std::unexpected(fd.error());
  return OwnedDir(*fd, path_of(name));
}

OwnedDir::OwnedDir(OwnedDir&& o) noexcept : fd_(o.fd_), path_(std::move(o.path_)) { o.fd_ = -1; }

OwnedDir& OwnedDir::operator=(OwnedDir&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    path_ = std::move(o.path_);
    o.fd_ = -1;
  }
  return *this;
}

OwnedDir::~OwnedDir() {
  if (fd_ >= 0) ::close(fd_);
}

std::string OwnedDir::path_of(std::string_view name) const { return join(path_, name); }

OwnedDir::Kind OwnedDir::kind(std::string_view name) const {
  if (!one_name(name)) return Kind::kOther;
  struct stat st {};
  if (::fstatat(fd_, std::string(name).c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
    return errno == ENOENT ? Kind::kMissing : Kind::kOther;
  if (S_ISLNK(st.st_mode)) return Kind::kLink;
  if (S_ISDIR(st.st_mode)) return Kind::kDirectory;
  if (S_ISREG(st.st_mode)) return Kind::kFile;
  return Kind::kOther;
}

std::vector<std::string> OwnedDir::list() const { return list_names(fd_); }

std::string OwnedDir::temporary_name(std::string_view name) const { return temporary_for(name); }

Result<void> OwnedDir::write_file(std::string_view name, std::string_view content, mode_t mode,
                                  Durability d) const {
  if (!one_name(name))
    return fail(ErrorCode::kUsage, "not a single name: " + str::quoted(name), path_);
  return replace_in(fd_, std::string(name), path_of(name), content, mode, d);
}

Result<void> OwnedDir::create_file(std::string_view name, std::string_view content,
                                   mode_t mode) const {
  const std::string shown = path_of(name);
  if (!one_name(name))
    return fail(ErrorCode::kUsage, "not a single name: " + str::quoted(name), path_);
  const int fd = ::openat(fd_, std::string(name).c_str(),
                          O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return fail(ErrorCode::kIo, "cannot create: " + errno_text(), shown);
  if (::fchmod(fd, mode) != 0 || !write_all(fd, content) || ::fsync(fd) != 0) {
    const auto e = errno_text();
    ::close(fd);
    return fail(ErrorCode::kIo, "write failed: " + e, shown);
  }
  if (::close(fd) != 0) return fail(ErrorCode::kIo, "close failed: " + errno_text(), shown);
  return {};
}

Result<std::string> OwnedDir::read_file(std::string_view name, std::uint64_t max_bytes) const {
  const std::string shown = path_of(name);
  if (!one_name(name))
    return fail(ErrorCode::kUsage, "not a single name: " + str::quoted(name), path_);
  // O_NONBLOCK: a FIFO planted here fails the type check below instead of hanging the open.
  const int fd = ::openat(fd_, std::string(name).c_str(),
                          O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    if (errno == ELOOP)
      return fail(ErrorCode::kIo,
                  "is a symbolic link: fabricplace reads only regular files in a directory it "
                  "owns (remove the link)",
                  shown);
    return fail(ErrorCode::kIo, "cannot open: " + errno_text(), shown);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return fail(ErrorCode::kIo,
                "is not a regular file (a directory, FIFO, socket or device): fabricplace reads "
                "only the files it wrote here (remove it)",
                shown);
  }
  auto data = read_open_file(fd, shown, max_bytes);
  ::close(fd);
  return data;
}

std::string OwnedDir::read_link(std::string_view name) const {
  if (!one_name(name)) return {};
  char buf[4096];
  const auto n = ::readlinkat(fd_, std::string(name).c_str(), buf, sizeof buf - 1);
  if (n <= 0) return {};
  return std::string(buf, static_cast<std::size_t>(n));
}

Result<void> OwnedDir::place_link(std::string_view name, const std::string& target) const {
  if (!one_name(name))
    return fail(ErrorCode::kUsage, "not a single name: " + str::quoted(name), path_);
  const std::string tmp = temporary_name(name);
  ::unlinkat(fd_, tmp.c_str(), 0);
  if (::symlinkat(target.c_str(), fd_, tmp.c_str()) != 0)
    return fail(ErrorCode::kIo, "cannot create a symlink: " + errno_text(), path_of(tmp));
  if (::renameat(fd_, tmp.c_str(), fd_, std::string(name).c_str()) != 0) {
    const auto e = errno_text();
    ::unlinkat(fd_, tmp.c_str(), 0);
    return fail(ErrorCode::kIo, "cannot rename a symlink into place: " + e, path_of(name));
  }
  return {};
}

Result<void> OwnedDir::rename(std::string_view from, std::string_view to) const {
  if (!one_name(from) || !one_name(to))
    return fail(ErrorCode::kUsage, "not a single name: " + str::quoted(from) + " or " +
                                       str::quoted(to), path_);
  if (::renameat(fd_, std::string(from).c_str(), fd_, std::string(to).c_str()) != 0)
    return fail(ErrorCode::kIo, "cannot rename into place: " + errno_text(), path_of(to));
  return {};
}

void OwnedDir::remove(std::string_view name) const {
  if (!one_name(name)) return;
  const std::string n(name);
  if (::unlinkat(fd_, n.c_str(), 0) == 0) return;
  if (errno != EISDIR && errno != EPERM) return;
  const int sub = ::openat(fd_, n.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (sub < 0) return;
  empty_dir(sub, kMaxRemoveDepth);
  ::close(sub);
  ::unlinkat(fd_, n.c_str(), AT_REMOVEDIR);
}

Result<void> OwnedDir::sync() const {
  if (::fsync(fd_) != 0) return fail(ErrorCode::kIo, "fsync failed: " + errno_text(), path_);
  return {};
}

OwnedDir::Lock::~Lock() {
  if (fd_ >= 0) ::close(fd_);
}

Result<OwnedDir::Lock> OwnedDir::lock(std::string_view name, int wait_s,
                                      const std::string& holder) const {
  const std::string shown = path_of(name);
  if (!one_name(name))
    return fail(ErrorCode::kUsage, "not a single name: " + str::quoted(name), path_);
  const int fd = ::openat(fd_, std::string(name).c_str(),
                          O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0644);
  if (fd < 0) {
    if (errno == ELOOP)
      return fail(ErrorCode::kIo,
                  "the lock is a symbolic link: fabricplace opens its lock only as a regular "
                  "file in a directory it owns (remove the link)",
                  shown);
    return fail(ErrorCode::kIo, "cannot open the lock: " + errno_text(), shown);
  }
  Lock lock(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    return fail(ErrorCode::kIo, "the lock is not a regular file (remove it)", shown);
  for (int waited = 0; ::flock(fd, LOCK_EX | LOCK_NB) != 0; ++waited) {
    if (errno != EWOULDBLOCK && errno != EINTR)
      return fail(ErrorCode::kIo, "cannot take the lock: " + errno_text(), shown);
    if (waited >= wait_s * 10)
      return fail(ErrorCode::kIo,
                  holder + " holds the lock for more than " + std::to_string(wait_s) +
                      " s (try again when it is done)",
                  shown);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return lock;
}

Result<void> write_file_by_name(const std::string& path, std::string_view content, mode_t mode,
                                Durability d) {
  if (path.empty()) return fail(ErrorCode::kUsage, "empty output file name");
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (!OwnedDir::one_name(name))
    return fail(ErrorCode::kUsage, "expected a file name at the end of the path", path);
  // Not an OwnedDir (the directory is the system's: /tmp, a job's cwd): the same writing.
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return fail(ErrorCode::kIo, "cannot open its directory: " + errno_text(), path);
  auto ok = write_file_by_name_at(dfd, name, path, content, mode, d);
  ::close(dfd);
  return ok;
}

Result<void> write_file_by_name_at(int dir_fd, std::string_view name, const std::string& shown,
                                   std::string_view content, mode_t mode, Durability d) {
  if (!OwnedDir::one_name(name))
    return fail(ErrorCode::kUsage, "expected a file name at the end of the path", shown);
  return replace_in(dir_fd, std::string(name), shown, content, mode, d);
}

}  // namespace fabricplace
