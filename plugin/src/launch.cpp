// SPDX-License-Identifier: GPL-2.0-or-later
#include "launch.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <set>

#include "fabricplace/common/file_io.hpp"
#include "fabricplace/common/strings.hpp"
#include "fabricplace/fabric/builder.hpp"
#include "fabricplace/fabric/json_io.hpp"
#include "fabricplace/placement/placement.hpp"

namespace fabricplace::plugin {

using placement::HostMap;
using placement::RankLayout;

namespace {

struct LoadedMap {
  HostMap map;
  std::string id;  ///< host_map_id() of the text it was parsed from
};
std::mutex g_maps_mu;
std::map<std::string, std::unique_ptr<LoadedMap>> g_maps;

}  // namespace

namespace {

Result<HostMap> read_host_map(const std::string& path, std::string* text_out) {
  // A FIFO or a device (a misconfigured hostmap=) would block or never end: every launch
  // would hang on it. Regular files only.
  if (struct stat sb{}; ::stat(path.c_str(), &sb) == 0 && !S_ISREG(sb.st_mode))
    return fail(ErrorCode::kIo,
                "not a regular file (expected a host map written by `fabricplace fabric export "
                "--format hostmap`)",
                path);
  auto text = read_file(path);
  if (!text) return std::unexpected(text.error());
  auto m = placement::parse_host_map(*text, path);
  if (m && text_out) *text_out = std::move(*text);
  return m;
}

bool errno_is_missing(const std::string& path) {
  struct stat sb {};
  return ::stat(path.c_str(), &sb) != 0 && errno == ENOENT;
}

Result<HostMap> derive_host_map(const std::string& fabric_path) {
  if (struct stat sb{}; ::stat(fabric_path.c_str(), &sb) == 0 && !S_ISREG(sb.st_mode))
    return fail(ErrorCode::kIo, "not a regular file (expected a fabric JSON)", fabric_path);
  auto text = read_file(fabric_path);
  if (!text) return std::unexpected(text.error());
  fabric::FabricBuilder b;
  if (auto ok = fabric::read_json(*text, fabric_path, b); !ok) return std::unexpected(ok.error());
  auto f = b.build();
  if (!f) return std::unexpected(f.error());
  auto m = placement::host_map(placement::prepare(*f));
  // As `slurm sync` writes it beside this JSON (its "from:" names the JSON): the same text and
  // id as the host map the other nodes may read.
  m.origin = fabric_path;
  m.generation = fabric_json_generation(fabric_path);
  return m;
}

}  // namespace

std::string fabric_json_generation(const std::string& fabric_path) {
  const int fd = ::open(fabric_path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return {};
  char buf[512];
  ssize_t n = 0;
  if (struct stat sb{}; ::fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode))
    n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  if (n <= 0) return {};
  const std::string_view head(buf, static_cast<std::size_t>(n));
  constexpr std::string_view kKey = "\n  \"generation\": \"";
  const auto at = head.find(kKey);
  if (at == std::string_view::npos || at + kKey.size() + 17 > head.size()) return {};
  const auto g = head.substr(at + kKey.size(), 16);
  return str::is_generation(g) && head[at + kKey.size() + 16] == '"' ? std::string(g)
                                                                     : std::string();
}

Result<const HostMap*> load_host_map(const std::string& path, const std::string& fabric_path,
                                     std::string& note) {
  note.clear();
  {
    const std::lock_guard lock(g_maps_mu);
    if (auto it = g_maps.find(path); it != g_maps.end()) return &it->second->map;
  }
  if (fabric_path.empty()) return load_host_map(path);
  std::string text;
  auto m = read_host_map(path, &text);
  std::string why;
  if (!m) {
    why = m.error().code == ErrorCode::kIo && errno_is_missing(path) ? path + ": no host map"
                                                                     : m.error().to_string();
  } else {
    const auto json_gen = fabric_json_generation(fabric_path);
    if (m->generation.empty() || json_gen.empty() || json_gen == m->generation) {
      const std::lock_guard lock(g_maps_mu);
      auto& slot = g_maps[path];
      slot = std::make_unique<LoadedMap>(LoadedMap{std::move(*m), host_map_id(text)});
      return &slot->map;
    }
    why = path + " is generation " + m->generation + " but " + fabric_path + " is " + json_gen +
          " (a stale host map: run `fabricplace slurm sync`, and copy its files to every node)";
  }
  auto derived = derive_host_map(fabric_path);
  if (!derived) {
    if (m) {  // stale, but all there is
      note = why + "; " + fabric_path + " unreadable (" + derived.error().to_string() +
             "): the host map is used as it is";
      const std::lock_guard lock(g_maps_mu);
      auto& slot = g_maps[path];
      slot = std::make_unique<LoadedMap>(LoadedMap{std::move(*m), host_map_id(text)});
      return &slot->map;
    }
    auto e = m.error();
    e.message +=
        " (and " + fabric_path + " could not stand in: " + derived.error().to_string() + ")";
    return std::unexpected(e);
  }
  note = why + "; derived from " + fabric_path +
         " instead (slower: `fabricplace slurm sync` writes the host map)";
  const std::lock_guard lock(g_maps_mu);
  auto& slot = g_maps[path];
  const auto id = host_map_id(placement::to_host_map_text(*derived));
  slot = std::make_unique<LoadedMap>(LoadedMap{std::move(*derived), id});
  return &slot->map;
}

Result<const HostMap*> load_host_map(const std::string& path) {
  const std::lock_guard lock(g_maps_mu);
  if (auto it = g_maps.find(path); it != g_maps.end()) return &it->second->map;
  std::string text;
  auto m = read_host_map(path, &text);
  if (!m) return std::unexpected(m.error());
  auto& slot = g_maps[path];
  slot = std::make_unique<LoadedMap>(LoadedMap{std::move(*m), host_map_id(text)});
  return &slot->map;
}

std::string host_map_id(std::string_view text) {
  return str::fnv1a_hex(text);
}

std::string loaded_host_map_id(const std::string& path) {
  const std::lock_guard lock(g_maps_mu);
  const auto it = g_maps.find(path);
  return it == g_maps.end() ? std::string() : it->second->id;
}

std::string default_host_map_path(const std::string& fabric_path) {
  const auto slash = fabric_path.rfind('/');
  const auto dot = fabric_path.rfind('.');
  if (dot != std::string::npos && (slash == std::string::npos || dot > slash))
    return fabric_path.substr(0, dot) + ".hostmap";
  return fabric_path + ".hostmap";
}

placement::ShapeSpec shape_spec(const Groups& g, std::uint32_t gpus_per_node) {
  placement::ShapeSpec spec;
  spec.gpus_per_node = gpus_per_node;
  spec.tp = g.tp;
  spec.ep = g.ep;
  return spec;
}

Result<GroupRanks> group_ranks(const Groups& g, std::uint32_t gpus_per_node,
                               std::uint32_t tasks_per_node) {
  auto spec = shape_spec(g, gpus_per_node);
  spec.ranks_per_node = tasks_per_node;
  auto shape = placement::JobShape::make(spec, kShapeNames);
  if (!shape) return std::unexpected(shape.error());
  return GroupRanks{shape->ranks_per_group(), shape->ranks_per_ep_group()};
}

Result<RankLayout> plan_launch(const HostMap& m, std::string_view nodelist, const Groups& g,
                               std::uint32_t gpus_per_node, std::uint32_t tasks_per_node) {
  auto hosts = placement::resolve_hosts(m, nodelist, "the job's nodes");
  if (!hosts) {  // the host map and the cluster disagree: a configuration fault
    Error e = hosts.error();
    e.code = ErrorCode::kReference;
    return std::unexpected(e);
  }
  auto spec = shape_spec(g, gpus_per_node);
  spec.nodes = static_cast<std::uint32_t>(hosts->size());
  spec.ranks_per_node = tasks_per_node;
  auto shape = placement::JobShape::make(spec, kShapeNames);
  if (!shape) return std::unexpected(shape.error());
  return placement::rank_layout(m, std::move(*hosts), *shape);
}

std::optional<TaskPlace> task_place(const HostMap& m, const RankLayout& l, std::string_view host,
                                    std::uint32_t local_id) {
  if (local_id >= l.tasks_per_node()) return std::nullopt;
  for (std::size_t i = 0; i < l.hosts.size(); ++i)
    if (m.names[fabric::idx(l.hosts[i])] == host)
      return place_in_order(static_cast<std::uint32_t>(i) * l.tasks_per_node() + local_id,
                            GroupRanks{l.tp_ranks(), l.shape.ranks_per_ep_group()});
  return std::nullopt;
}

TaskPlace place_in_order(std::uint32_t task_id, const GroupRanks& r) {
  TaskPlace p;
  p.ring_rank = task_id;
  p.tp_group = r.tp ? task_id / r.tp : 0;
  p.tp_rank = r.tp ? task_id % r.tp : 0;
  if (r.ep) {
    p.ep_group = task_id / r.ep;
    p.ep_rank = task_id % r.ep;
  }
  return p;
}

namespace {

constexpr const char* kNoneWritten = "; no rank files were written";

// Creates a fresh temporary file next to `target`, mode 0666 less the umask (the kernel
// applies it: no umask() call, which would race with other threads), close-on-exec so no
// task inherits it. -1 with errno set on failure.
int create_temporary(const std::string& target, std::string& tmp_path) {
  static std::atomic<unsigned> counter{0};
  const auto slash = target.rfind('/');
  const std::string dir = slash == std::string::npos ? std::string() : target.substr(0, slash + 1);
  const std::string name = slash == std::string::npos ? target : target.substr(slash + 1);
  for (int attempt = 0; attempt < 100; ++attempt) {
    const auto salt =
        static_cast<unsigned>(std::chrono::steady_clock::now().time_since_epoch().count());
    tmp_path = dir + "." + name + ".tmp." + std::to_string(getpid()) + "." +
               std::to_string(counter.fetch_add(1)) + "." + std::to_string(salt % 100000u);
    const int fd = ::open(tmp_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;
}

// Writes one temporary: contents, then the mode (and owner, where allowed) of the file it
// replaces. An empty string on success, else what failed and why.
std::string write_temporary(int fd, std::string_view text, const std::string& target) {
  if (!write_all(fd, text)) return std::string("write failed: ") + std::strerror(errno);
  struct stat old {};
  // lstat: `target` is already what a link resolved to (kFollow), or the name itself.
  if (::lstat(target.c_str(), &old) == 0 && S_ISREG(old.st_mode)) {
    if (::fchmod(fd, old.st_mode & 07777) != 0)
      return std::string("chmod failed: ") + std::strerror(errno);
    (void)!::fchown(fd, old.st_uid, old.st_gid);  // keeps owner and group where we may (root)
  }
  return {};
}

}  // namespace

Result<std::vector<std::string>> write_file_set(const std::vector<FileContent>& files,
                                                LinkPolicy links) {
  std::vector<std::string> targets, temps;  // temps[i] is "" once renamed (or never made)
  targets.reserve(files.size());
  temps.reserve(files.size());
  for (const auto& f : files)
    targets.push_back(links == LinkPolicy::kFollow ? resolve_symlinks(f.path)  // as write_file_atomic
                                                   : f.path);
  // Any failure: no temporary, and none of the set's files, is left; a reader sees no set
  // rather than part of this one or part of an earlier one mixed with it.
  auto fail_set = [&](std::size_t i, const std::string& why) -> Result<std::vector<std::string>> {
    for (const auto& t : temps)
      if (!t.empty()) ::unlink(t.c_str());
    for (const auto& t : targets) {
      struct stat st {};
      if (::lstat(t.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) ::unlink(t.c_str());
    }
    return fail(ErrorCode::kIo, why + kNoneWritten, files[i].path);
  };
  for (std::size_t i = 0; i < files.size(); ++i) {
    std::string tmp;
    const int fd = create_temporary(targets[i], tmp);
    if (fd < 0)
      return fail_set(
          i, std::string("cannot create a temporary file next to it: ") + std::strerror(errno));
    temps.push_back(tmp);
    std::string why = write_temporary(fd, files[i].text, targets[i]);
    if (::close(fd) != 0 && why.empty()) why = std::string("close failed: ") + std::strerror(errno);
    if (!why.empty()) return fail_set(i, why);
  }
  std::vector<std::string> written;
  written.reserve(files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (::rename(temps[i].c_str(), targets[i].c_str()) != 0)
      return fail_set(i, std::string("rename failed: ") + std::strerror(errno));
    temps[i].clear();
    written.push_back(files[i].path);
  }
  return written;
}

Result<std::vector<std::string>> write_launch_files(
    const std::string& prefix, const std::function<std::string(placement::RankFormat)>& render,
    LinkPolicy links) {
  using placement::RankFormat;
  static constexpr RankFormat kFormats[] = {RankFormat::kOpenMpi, RankFormat::kSlurm,
                                            RankFormat::kTorchrun, RankFormat::kJson};
  static_assert(std::size(kFormats) == std::size(kLaunchFileSuffixes));
  // Everything rendered before anything is written: a renderer that fails leaves no file.
  std::vector<FileContent> files;
  for (std::size_t i = 0; i < std::size(kFormats); ++i) {
    const std::string path = prefix + kLaunchFileSuffixes[i];
    try {
      files.push_back({path, render(kFormats[i])});
    } catch (const std::bad_alloc&) {
      return fail(ErrorCode::kIo, std::string("cannot render: out of memory") + kNoneWritten, path);
    } catch (const std::exception& e) {
      return fail(ErrorCode::kIo, std::string("cannot render: ") + e.what() + kNoneWritten, path);
    } catch (...) {
      return fail(ErrorCode::kIo, std::string("cannot render") + kNoneWritten, path);
    }
  }
  return write_file_set(files, links);
}

Result<std::vector<std::string>> write_launch_files(const HostMap& m, const RankLayout& l,
                                                    const std::string& prefix,
                                                    const placement::RankFileOptions& o,
                                                    LinkPolicy links) {
  return write_launch_files(
      prefix, [&](placement::RankFormat f) { return placement::write_rank_file(m, l, f, o); },
      links);
}

SrunCounts parse_srun_args(const std::vector<std::string>& args) {
  SrunCounts c;
  // srun, sbatch and salloc options that take no value: after them the next word may be the
  // command (or the script). Any other option takes the next word as its value unless that
  // word is an option itself (--oversubscribe -N 4) or it carries one (--nice=5, -n4).
  static const std::set<std::string_view> kFlags = {
      "-l", "-u", "-v", "-vv", "-vvv", "-Q", "-K", "-X", "-Z", "-O", "-E", "-H", "-k", "-s", "-h",
      "-V", "-I", "--label", "--unbuffered", "--exclusive", "--overlap", "--verbose", "--quiet",
      "--kill-on-bad-exit", "--no-kill", "--pty", "--overcommit", "--oversubscribe",
      "--disable-status", "--test-only", "--contiguous", "--spread-job", "--use-min-nodes",
      "--exact", "--whole", "--multi-prog", "--preserve-env", "--no-allocate", "--hold",
      "--immediate", "--reboot", "--help", "--usage", "--version", "--parsable", "--requeue",
      "--no-requeue", "--ignore-pbs", "--no-shell", "--bell", "--no-bell",
      // optional values, given only as --opt=value
      "--get-user-env", "--nice", "--propagate", "--x11", "--bcast", "--compress", "--send-libs",
      "--resv-ports"};
  // -W/--wait: a flag for sbatch, seconds for srun: a value only when it is a number.
  auto numeric = [](const std::string& w) {
    return !w.empty() && w.find_first_not_of("0123456789") == std::string::npos;
  };
  auto count = [](std::string_view v) -> std::optional<std::uint32_t> {
    // "-N 2-4" ranges: the minimum counts.
    const auto dash = v.find('-');
    if (auto n = str::parse_uint(v.substr(0, dash), 1u << 24); n && *n > 0)
      return static_cast<std::uint32_t>(*n);
    return std::nullopt;
  };
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == ":") {  // the next component of a heterogeneous job
      c.het = true;
      continue;
    }
    if (a == "--") {
      if (i + 1 < args.size()) c.command = i + 1;
      break;
    }
    if (a.empty() || a[0] != '-') {  // the command
      c.command = i;
      break;
    }
    std::string name = a, value;
    bool has_value = false;
    if (a.rfind("--", 0) == 0) {
      if (const auto eq = a.find('='); eq != std::string::npos) {
        name = a.substr(0, eq);
        value = a.substr(eq + 1);
        has_value = true;
      }
    } else if (a.size() > 2) {  // -n4
      name = a.substr(0, 2);
      value = a.substr(2);
      has_value = true;
    }
    if (!has_value) {
      if (kFlags.count(name) || i + 1 >= args.size() || args[i + 1].rfind('-', 0) == 0 ||
          args[i + 1] == ":" || ((name == "-W" || name == "--wait") && !numeric(args[i + 1])))
        continue;  // a flag
      value = args[++i];
    }
    if (name == "-n" || name == "--ntasks")
      c.ntasks = count(value);
    else if (name == "-N" || name == "--nodes") {
      c.nodes = count(value);
      c.nodes_range = value.find('-') != std::string::npos;
    } else if (name == "--ntasks-per-node")
      c.ntasks_per_node = count(value);
    else if (name == "-w" || name == "--nodelist" || name == "-F" || name == "--nodefile")
      c.nodelist = true;
    else if (name == "-m" || name == "--distribution")
      c.distribution = true;
    else if (name == "--fabric-tp")
      c.fabric_tp = value;
    else if (name == "--fabric-ep")
      c.fabric_ep = value;
    else if (name == "--segment")
      c.segment = count(value);
    else if (name == "--fabric-mode")
      c.fabric_mode = value;
  }
  return c;
}

bool append_log_line(const std::string& path, const char* line, std::size_t n) noexcept {
  if (path.empty()) return false;
  const int fd =
      ::open(path.c_str(),
             O_WRONLY | O_APPEND | O_CREAT | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW, 0666);
  if (fd < 0) return false;
  struct stat st {};
  bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1;
  if (ok && ::geteuid() == 0 && st.st_uid != 0) {
    // Another user's file collects root's lines only where only root can have put it there (a
    // root-owned directory nobody else may write: logrotate's `create 0640 slurm slurm`).
    const auto slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
    struct stat d {};
    ok = ::stat(dir.c_str(), &d) == 0 && d.st_uid == 0 && (d.st_mode & (S_IWGRP | S_IWOTH)) == 0;
  }
  ok = ok && ::write(fd, line, n) == static_cast<ssize_t>(n);
  ::close(fd);
  return ok;
}

}  // namespace fabricplace::plugin
