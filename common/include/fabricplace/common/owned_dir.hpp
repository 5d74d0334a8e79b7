// SPDX-License-Identifier: GPL-2.0-or-later
// A directory fabricplace owns (the `slurm sync` store, the `fabric watch` state, ...) and the
// files in it, reached without following links (docs/operations.md, "Directories fabricplace
// owns").
//
// The rule: the directory is opened once, with O_NOFOLLOW, and checked (a real directory,
// owned by the user running fabricplace, writable by nobody else); everything in it is then
// reached relative to that descriptor (openat, renameat, unlinkat) by a single name, never a
// path, and never through a link:
//   - a file is written to an O_EXCL temporary in the directory and renamed over its name, so
//     a link planted at the name is replaced, not followed;
//   - a file is read only when it is a regular file (a link, a FIFO or a device is refused,
//     with O_NONBLOCK so that a planted FIFO cannot hang the open);
//   - a lock file is created with O_NOFOLLOW;
//   - removal never descends through a link, and callers remove only names they created.
// A user's own output file (`-o FILE`) is not under this rule: write_file_atomic() follows
// links there, as documented (docs/sources.md, Outputs).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fabricplace/common/error.hpp"
#include "fabricplace/common/file_io.hpp"

namespace fabricplace {

class OwnedDir {
 public:
  enum class Create : bool { kNo, kYes };
  /// What a name in the directory is (lstat: a link is a link).
  enum class Kind { kMissing, kFile, kDirectory, kLink, kOther };

  /// kOwned: a directory fabricplace owns (the rule above). kAdmins: an admin's directory it
  /// writes into by name, as the Slurm configuration directory `slurm sync --out` names: owned
  /// by root or the running user and not writable by group or others (what is in it decides
  /// what slurmd loads as root), and open() follows a link at `path` (the admin named it);
  /// sub() never follows one, and everything inside is still reached by name from the
  /// descriptor.
  enum class Rule : bool { kOwned, kAdmins };

  /// Opens `path` (its last component must not be a link; the components before it are the
  /// system's and are followed), creating it with exactly `mode` when missing and `create`.
  /// Errors (kIo) say why it is refused and what to do: a link, not a directory, owned by
  /// another user than the one running fabricplace, writable by group or others.
  static Result<OwnedDir> open(const std::string& path, Create create, mode_t mode = 0755,
                               Rule rule = Rule::kOwned);
  /// A subdirectory by one name (never through a link), under `rule`.
  [[nodiscard]] Result<OwnedDir> sub(std::string_view name, Create create, mode_t mode = 0755,
                                     Rule rule = Rule::kOwned) const;

  OwnedDir(OwnedDir&& o) noexcept;
  OwnedDir& operator=(OwnedDir&& o) noexcept;
  OwnedDir(const OwnedDir&) = delete;
  OwnedDir& operator=(const OwnedDir&) = delete;
  ~OwnedDir();

  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] int fd() const { return fd_; }
  /// path()/name, for messages.
  [[nodiscard]] std::string path_of(std::string_view name) const;

  [[nodiscard]] Kind kind(std::string_view name) const;
  /// The names in the directory, sorted, without "." and "..".
  [[nodiscard]] std::vector<std::string> list() const;

  /// Replaces NAME atomically with `content`, mode exactly `mode` (see above).
  [[nodiscard]] Result<void> write_file(std::string_view name, std::string_view content,
                                        mode_t mode = 0644,
                                        Durability d = Durability::kDurable) const;
  /// Creates NAME (it must not exist) with `content`, flushed; for files of a directory being
  /// built before it is renamed into place.
  [[nodiscard]] Result<void> create_file(std::string_view name, std::string_view content,
                                         mode_t mode = 0644) const;
  /// Reads NAME, a regular file, at most `max_bytes` (read_file's rules: gzip, BOM).
  [[nodiscard]] Result<std::string> read_file(std::string_view name,
                                              std::uint64_t max_bytes) const;

  /// The target of the link NAME; "" when NAME is no link.
  [[nodiscard]] std::string read_link(std::string_view name) const;
  /// NAME becomes a link to `target`, atomically (a temporary link renamed over it).
  [[nodiscard]] Result<void> place_link(std::string_view name, const std::string& target) const;
  /// Renames FROM over TO, both in this directory.
  [[nodiscard]] Result<void> rename(std::string_view from, std::string_view to) const;
  /// Removes NAME: a file or link is unlinked; a directory is removed with what it holds,
  /// never following a link. Only for names the caller created.
  void remove(std::string_view name) const;
  /// Flushes the directory itself (renames and creations in it) to disk.
  [[nodiscard]] Result<void> sync() const;

  /// An exclusive flock(2) on a lock file, released when the Lock goes.
  class Lock {
   public:
    explicit Lock(int fd) : fd_(fd) {}
    Lock(Lock&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
    Lock& operator=(Lock&&) = delete;
    Lock(const Lock&) = delete;
    ~Lock();

   private:
    int fd_ = -1;
  };
  /// Takes the exclusive lock on NAME (a regular file, created without following a link),
  /// waiting at most `wait_s` seconds; `holder` names who else would hold it, for the error.
  [[nodiscard]] Result<Lock> lock(std::string_view name, int wait_s,
                                  const std::string& holder) const;

  /// Whether `name` is one component: not empty, no '/', not "." or "..", no NUL.
  static bool one_name(std::string_view name);
  /// Whether NAME is a temporary that write_file() or place_link() made (".NAME.tmp.PID.N"),
  /// so that what a killed run left can be removed by name.
  static bool is_temporary(std::string_view name);

 private:
  OwnedDir(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  [[nodiscard]] std::string temporary_name(std::string_view name) const;
  int fd_ = -1;
  std::string path_;
};

/// The names in the open directory `dir_fd`, sorted, without "." and ".." (the descriptor
/// stays open).
std::vector<std::string> list_names(int dir_fd);

/// Writes `path` atomically without following a link at its last component: the file is
/// created beside it and renamed over the name, so a link there is replaced (in a sticky
/// directory such as /tmp, another user's file or link there is an error, not a target).
/// For the files fabricplace names itself in a directory it does not own (a launch's host
/// file in $TMPDIR); a user's own output file keeps write_file_atomic().
Result<void> write_file_by_name(const std::string& path, std::string_view content,
                                mode_t mode = 0644, Durability d = Durability::kDurable);
/// The same in the directory `dir_fd` (open, the caller's), `name` a single name; `shown` is
/// what errors name.
Result<void> write_file_by_name_at(int dir_fd, std::string_view name, const std::string& shown,
                                   std::string_view content, mode_t mode = 0644,
                                   Durability d = Durability::kDurable);

}  // namespace fabricplace
