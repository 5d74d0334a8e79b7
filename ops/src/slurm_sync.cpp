// SPDX-License-Identifier: GPL-2.0-or-later
#include "fabricplace/ops/slurm_sync.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <map>
#include <optional>

#include "fabricplace/common/file_io.hpp"
#include "fabricplace/common/limits.hpp"
#include "fabricplace/common/owned_dir.hpp"
#include "fabricplace/common/strings.hpp"
#include "fabricplace/fabric/json_io.hpp"
#include "fabricplace/fabric/slurm_block.hpp"
#include "fabricplace/fabric/slurm_tree.hpp"
#include "fabricplace/ops/plugstack.hpp"
#include "fabricplace/placement/placement.hpp"
#include "fabricplace/placement/rank_layout.hpp"

namespace fabricplace::ops {

namespace {

constexpr const char* kStore = ".fabricplace";
constexpr const char* kCurrent = "current";
constexpr const char* kSnapshotPrefix = "snapshot.";
constexpr const char* kLinkPrefix = ".fabricplace/current/";
constexpr const char* kGenerationMark = "# fabricplace generation: ";

std::string join(const std::string& dir, const std::string& name) {
  return dir.empty() || dir.back() == '/' ? dir + name : dir + "/" + name;
}

std::string errno_text() {
  return std::strerror(errno);
}

// The body lines of a Slurm export (comments dropped), each with `params` appended.
std::string node_lines(const std::string& text, const std::string& params) {
  std::string out;
  for (auto line : str::lines(text)) {
    if (line.empty() || line.front() == '#') continue;
    out += std::string(line);
    if (!params.empty()) out += " " + params;
    out += "\n";
  }
  return out;
}

// The fabric's canonical JSON with "generation" after "version" (json_read.cpp reads it).
std::string stamp_json(std::string json, const std::string& generation) {
  // Version 1 or 2 (to_json() writes 2 only for a fabric with domains).
  const auto at = json.find("  \"version\": ");
  const auto eol = at == std::string::npos ? at : json.find('\n', at);
  if (eol == std::string::npos) return json;  // not canonical JSON: to_json() always has it
  json.insert(eol + 1, "  \"generation\": \"" + generation + "\",\n");
  return json;
}

// Whether a Slurm configuration value (a path, a node parameter list) is safe on one line.
bool one_line(const std::string& s) {
  return s.find('\n') == std::string::npos && s.find('\r') == std::string::npos;
}

}  // namespace

const char* to_string(FileChange::Kind k) {
  switch (k) {
    case FileChange::Kind::kAdded:
      return "added";
    case FileChange::Kind::kChanged:
      return "changed";
    case FileChange::Kind::kUnchanged:
      return "unchanged";
    case FileChange::Kind::kRemoved:
      return "removed";
  }
  return "?";
}

bool SyncPlan::changed() const {
  if (!links_to_fix.empty()) return true;
  return std::ranges::any_of(
      files, [](const FileChange& c) { return c.kind != FileChange::Kind::kUnchanged; });
}

bool SyncPlan::changed(const std::string& name) const {
  return std::ranges::any_of(files, [&](const FileChange& c) {
    return c.name == name && c.kind != FileChange::Kind::kUnchanged;
  });
}

Result<SlurmFileSet> slurm_files(const fabric::Fabric& f, const SyncOptions& o) {
  using namespace fabric;
  if (!f.topology().incomplete.empty())
    return fail(ErrorCode::kUnsupported,
                "the fabric is INCOMPLETE (a partial discovery): Slurm's files would lack what it "
                "misses; nothing written (rediscover)");
  for (const auto* s : {&o.dir, &o.plugin, &o.plugin_args, &o.node_params})
    if (!one_line(*s)) return fail(ErrorCode::kUsage, "a line break in a sync option");
  // plugstack.conf has no quoting: a blank or a tab splits a word there, a '#' ends the line.
  for (const auto& [what, path] :
       {std::pair<const char*, const std::string*>{"--out", &o.dir}, {"--plugin", &o.plugin}})
    if (const auto at = path->find_first_of(" \t#"); at != std::string::npos)
      return fail(ErrorCode::kUsage,
                  std::string(what) + " " + str::quoted(*path) + ": " +
                      ((*path)[at] == '#' ? "a '#' in the path (plugstack.conf ends a line at '#'"
                                          : "a blank or a tab in the path (plugstack.conf splits "
                                            "its lines at blanks and tabs") +
                      ", so the plugin could not be given it)");
  if (const auto at = o.node_params.find_first_of("#\\"); at != std::string::npos)
    return fail(ErrorCode::kUsage,
                "--node-params " + str::quoted(o.node_params) +
                    (o.node_params[at] == '#'
                         ? ": a '#' (slurm.conf ends a line at '#', so what follows it would be "
                           "dropped from every node line)"
                         : ": a '\\' (slurm.conf escapes with it, and one at the end joins the "
                           "next line to every node line)"));
  if (o.plugin.empty())
    return fail(ErrorCode::kUsage,
                "--plugin: empty; expected the path of fabricplace.so for the plugstack line");
  // The admin's arguments, split as Slurm will split them.
  std::vector<std::string> extra;
  if (const auto words = split_plugstack_line("optional x.so " + o.plugin_args))
    extra = words->args;
  if (o.plugin_args.find('#') != std::string::npos)
    return fail(ErrorCode::kUsage, "--plugin-args " + str::quoted(o.plugin_args) +
                                       ": a '#' (plugstack.conf ends the line there, and the "
                                       "arguments after it would be lost)");
  for (const auto& word : extra) {
    for (const char* k : {"fabric=", "hostmap=", "topology="})
      if (word.starts_with(k))
        return fail(ErrorCode::kUsage, std::string("--plugin-args: ") + k +
                                           " is set by slurm sync itself (the files it writes, "
                                           "--topology)");
  }
  SlurmFileSet set;
  set.topology_block = o.topology == SlurmTopology::kBlock;
  const auto tree = slurm_tree(f);
  set.warnings = tree.warnings;
  if (auto ok = check_slurm_topology(tree); !ok) return std::unexpected(ok.error());

  // Structural files first, unstamped, for the generation.
  std::vector<SlurmFile> files;
  auto map = placement::host_map(placement::prepare(f));
  // The structural files name the set's fabric.json as where they come from, not the
  // fabric's origin: the same fabric read from another file, or discovered from another
  // host, is the same generation (fabric.json keeps the origin).
  const std::string from = join(o.dir, "fabric.json");
  map.origin = from;
  const auto unorigin = [&](std::string text) {
    const std::string was = f.origin() + "\n", now = from + "\n";
    for (const char* mark : {"# from: ", "# fabricplace from: ", "# by fabricplace from: "}) {
      const auto at = text.find(std::string(mark) + was);
      if (at != std::string::npos) text.replace(at + std::strlen(mark), was.size(), now);
    }
    return text;
  };
  std::string topo_name = "topology.conf", topo, nodes_extra;
  if (o.topology == SlurmTopology::kTree) {
    topo = unorigin(to_slurm_topology(f, tree, /*with_link_speed=*/false));
  } else {
    const auto blocks = slurm_blocks(f, tree);
    nodes_extra = to_slurm_block_nodes(blocks);
    if (o.topology == SlurmTopology::kBlock) {
      topo = unorigin(to_slurm_block(f, blocks));
    } else {
      auto yaml = to_slurm_yaml(f, tree, blocks);
      if (!yaml) return std::unexpected(yaml.error());
      topo = unorigin(std::move(*yaml));
      topo_name = "topology.yaml";
    }
  }
  std::string nodes =
      "# Slurm node definitions for slurm.conf, written by `fabricplace slurm sync`\n"
      "# from: " +
      from +
      "\n"
      "# `Include " +
      join(o.dir, "fabricplace-nodes.conf") +
      "` in slurm.conf in place of these\n"
      "# hosts' NodeName= lines; their other parameters come from --node-params or a\n"
      "# `NodeName=DEFAULT CPUs=... Gres=...` line before the Include. Features: the host's leaf\n"
      "# and the switches above it (job_submit.lua keeps a job in one leaf with them).\n" +
      node_lines(to_slurm_features(f, tree), o.node_params);
  if (!nodes_extra.empty())
    nodes += "# topology/block placeholders (never scheduled; docs/slurm.md, topology/block)\n" +
             node_lines(nodes_extra, "");
  // The GPUs per node the NVLink domains state (a GB200 NVL72 host has 4, not the plugin's
  // default 8), unless the admin's arguments say it.
  std::vector<std::string> args = {"fabric=" + join(o.dir, "fabric.json"),
                                   "hostmap=" + join(o.dir, "fabric.hostmap")};
  if (o.topology == SlurmTopology::kBlock) args.emplace_back("topology=block");
  if (const auto g = fabric::domain_gpus(f);
      g && std::ranges::none_of(extra, [](const std::string& w) {
        return w.starts_with("gpus_per_node=");
      }))
    args.push_back("gpus_per_node=" + std::to_string(*g));
  args.insert(args.end(), extra.begin(), extra.end());
  // Checked as Slurm will split it and as the plugin will parse it: a line the plugin would
  // refuse or read otherwise is never written.
  auto line = plugstack_line(o.plugin, args);
  if (!line) return std::unexpected(line.error());
  const std::string plugstack =
      "# The fabricplace SPANK plugin (docs/slurm.md), written by `fabricplace slurm sync`.\n"
      "# `optional`: a missing plugin never stops jobs.\n" +
      *line;

  auto render = [&](const std::string& gen) {
    map.generation = gen;
    const std::string mark = gen.empty() ? "" : kGenerationMark + gen + "\n";
    files = {
        {"fabric.hostmap", placement::to_host_map_text(map), true},
        {"fabric.lua", placement::to_lua_table(map), true},
        {topo_name, mark + topo, true},
        {"fabricplace-nodes.conf", mark + nodes, true},
        {"plugstack.conf.d/fabricplace.conf", mark + plugstack, true},
    };
  };
  render("");
  // The generation: what slurmctld, job_submit.lua and the launches read of the structure;
  // not the plugin's line (its arguments are no structure).
  std::string all;
  for (const auto& file : files)
    if (file.name != kPlugstackFile) all += file.name + '\0' + file.text + '\0';
  set.generation = str::fnv1a_hex(all);
  render(set.generation);
  // Without the raw counters (their verdicts stay): counters move every minute and would
  // rewrite fabric.json at every watch run.
  files.insert(files.begin(),
               SlurmFile{"fabric.json",
                         stamp_json(to_json(f, /*with_counters=*/false), set.generation), false});

  // Read back what the plugin reads: a set that its readers refuse is never written.
  if (auto m = placement::parse_host_map(files[1].text, "fabric.hostmap"); !m)
    return std::unexpected(m.error());
  FabricBuilder b;
  if (auto ok = read_json(files[0].text, "fabric.json", b); !ok) return std::unexpected(ok.error());
  set.files = std::move(files);
  return set;
}

namespace {

// The store DIR/.fabricplace: a directory sync owns (common/owned_dir.hpp), reached by name from
// DIR's descriptor, never through a link. nullopt when it does not exist yet (a directory never
// synced).
Result<std::optional<OwnedDir>> open_store(const OwnedDir& top, OwnedDir::Create create) {
  if (create == OwnedDir::Create::kNo && top.kind(kStore) == OwnedDir::Kind::kMissing)
    return std::optional<OwnedDir>();
  auto s = top.sub(kStore, create, 0755);
  if (!s) return std::unexpected(s.error());
  return std::optional<OwnedDir>(std::move(*s));
}

// The same from DIR's path: DIR under the admins' rule (OwnedDir::Rule::kAdmins), then the store.
Result<std::optional<OwnedDir>> open_store(const std::string& dir, OwnedDir::Create create) {
  if (create == OwnedDir::Create::kNo) {
    struct stat st {};
    if (::lstat(dir.c_str(), &st) != 0 && errno == ENOENT) return std::optional<OwnedDir>();
  }
  auto top = OwnedDir::open(dir, create, 0755, OwnedDir::Rule::kAdmins);
  if (!top) return std::unexpected(top.error());
  return open_store(*top, create);
}

// Whether `n` is a snapshot's name as sync makes them ("snapshot." and six digits).
bool snapshot_name(std::string_view n) {
  if (!n.starts_with(kSnapshotPrefix)) return false;
  const auto digits = n.substr(std::strlen(kSnapshotPrefix));
  return digits.size() == 6 &&
         std::ranges::all_of(digits, [](char c) { return c >= '0' && c <= '9'; });
}

// The live snapshot's name ("snapshot.000003"), or "" when the store holds none.
std::string live_snapshot(const OwnedDir& store) {
  const auto s = store.read_link(kCurrent);
  return snapshot_name(s) ? s : std::string();
}

// The link DIR/NAME wants: relative, through `current`.
std::string link_target(const std::string& name) {
  std::string up;
  for (const char c : name)
    if (c == '/') up += "../";
  return up + kLinkPrefix + name;
}

// DIR/NAME: 0 missing, 1 sync's link to `want`, 2 sync's link elsewhere, 3 something else.
enum LinkState { kMissing = 0, kOurs = 1, kOursElsewhere = 2, kOther = 3 };
LinkState link_state_of(OwnedDir::Kind kind, const std::string& target, const std::string& want) {
  if (kind == OwnedDir::Kind::kMissing) return kMissing;
  if (kind != OwnedDir::Kind::kLink || target.empty()) return kOther;
  if (target == want) return kOurs;
  return target.find(kLinkPrefix) != std::string::npos ? kOursElsewhere : kOther;
}
LinkState link_state(const std::string& path, const std::string& want) {  // plan: by path
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return kMissing;
  if (!S_ISLNK(st.st_mode)) return kOther;
  char buf[4096];
  const auto n = ::readlink(path.c_str(), buf, sizeof buf - 1);
  return link_state_of(OwnedDir::Kind::kLink,
                       n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string(), want);
}
LinkState link_state(const OwnedDir& d, const std::string& base, const std::string& want) {
  return link_state_of(d.kind(base), d.read_link(base), want);
}

// The files of a snapshot, read (regular files only: never a link or a FIFO), by relative
// name (one level of subdirectories, as sync writes).
Result<std::map<std::string, std::string>> snapshot_files(const OwnedDir& store,
                                                          const std::string& snap) {
  std::map<std::string, std::string> out;
  auto dir = store.sub(snap, OwnedDir::Create::kNo);
  if (!dir) return std::unexpected(dir.error());
  for (const auto& n : dir->list()) {
    if (dir->kind(n) == OwnedDir::Kind::kDirectory) {
      auto sub = dir->sub(n, OwnedDir::Create::kNo);
      if (!sub) return std::unexpected(sub.error());
      for (const auto& m : sub->list()) {
        auto text = sub->read_file(m, limits().input_bytes);
        if (!text) return std::unexpected(text.error());
        out[n + "/" + m] = std::move(*text);
      }
    } else {
      auto text = dir->read_file(n, limits().input_bytes);
      if (!text) return std::unexpected(text.error());
      out[n] = std::move(*text);
    }
  }
  return out;
}

std::string parent_of(const std::string& name) {
  const auto slash = name.rfind('/');
  return slash == std::string::npos ? std::string() : name.substr(0, slash);
}

// A temporary name beside a set's link, as syncs before OwnedDir named them: hidden and marked
// (".NAME.fabricplace-tmp.PID"), so that the next sync removes what a killed one left.
constexpr const char* kTmpMark = ".fabricplace-tmp.";

bool all_digits(std::string_view s) {
  return !s.empty() && std::ranges::all_of(s, [](char c) { return c >= '0' && c <= '9'; });
}

// The last part of a set file's name ("plugstack.conf.d/fabricplace.conf" -> its file).
std::string_view base_of(std::string_view name) {
  const auto slash = name.rfind('/');
  return slash == std::string_view::npos ? name : name.substr(slash + 1);
}

// Whether `n`, in DIR or a subdirectory of the set, is a temporary link name sync makes for
// one of the set's names: OwnedDir's ".NAME.tmp.PID.N", or the older ".NAME.fabricplace-tmp.PID".
bool our_temporary_name(std::string_view n, const SlurmFileSet& set) {
  if (!n.starts_with('.')) return false;
  std::string_view base;
  if (const auto at = n.find(kTmpMark);
      at != std::string_view::npos && all_digits(n.substr(at + std::strlen(kTmpMark))))
    base = n.substr(1, at - 1);
  else if (OwnedDir::is_temporary(n))
    base = n.substr(1, n.rfind(".tmp.") - 1);
  else
    return false;
  return std::ranges::any_of(set.files,
                             [&](const SlurmFile& f) { return base_of(f.name) == base; });
}

// DIR and the set's subdirectories, each opened once and reached by descriptor (the admin's
// directories: no owner check, but never a link below DIR), made when missing with mode 0755
// (slurmctld and every user's srun read them).
class SetDirs {
 public:
  static Result<SetDirs> open(const std::string& dir) {
    auto top = OwnedDir::open(dir, OwnedDir::Create::kYes, 0755, OwnedDir::Rule::kAdmins);
    if (!top) return std::unexpected(top.error());
    return SetDirs(std::move(*top));
  }
  const OwnedDir& top() const { return top_; }
  // The directory holding set file `name`, made when missing and `create`; nullptr when it is
  // missing and not to be made.
  Result<const OwnedDir*> of(const std::string& name, bool create) {
    const auto sub = parent_of(name);
    if (sub.empty()) return &top_;
    if (auto it = subs_.find(sub); it != subs_.end()) return &it->second;
    if (!create && top_.kind(sub) == OwnedDir::Kind::kMissing) return nullptr;
    auto d = top_.sub(sub, create ? OwnedDir::Create::kYes : OwnedDir::Create::kNo, 0755,
                      OwnedDir::Rule::kAdmins);
    if (!d) return std::unexpected(d.error());
    return &subs_.emplace(sub, std::move(*d)).first->second;
  }
  // What a killed sync left beside the set's names: temporary links, nothing else.
  void remove_leftovers(const SlurmFileSet& set) {
    std::vector<const OwnedDir*> dirs = {&top_};
    for (const auto& file : set.files)
      if (auto d = of(file.name, false); d && *d && std::ranges::find(dirs, *d) == dirs.end())
        dirs.push_back(*d);
    for (const auto* d : dirs)
      for (const auto& n : d->list())
        if (our_temporary_name(n, set) && d->kind(n) == OwnedDir::Kind::kLink) d->remove(n);
  }

 private:
  explicit SetDirs(OwnedDir top) : top_(std::move(top)) {}
  OwnedDir top_;
  std::map<std::string, OwnedDir> subs_;
};

// The words of the first fabricplace line ("optional PATH/fabricplace.so key=value ..."), as
// Slurm splits it (ops/plugstack.hpp).
std::vector<std::string> plugin_line(std::string_view text) {
  for (auto raw : str::lines(text)) {
    const auto line = split_plugstack_line(raw);
    if (!line || (line->kind != "optional" && line->kind != "required") ||
        !line->plugin.ends_with("fabricplace.so"))
      continue;
    std::vector<std::string> w = {line->kind, line->plugin};
    w.insert(w.end(), line->args.begin(), line->args.end());
    return w;
  }
  return {};
}

// A plugstack file sync did not write, kept when its fabricplace line reads DIR/fabric.json,
// with why and what it lacks of the line sync would write (`ours`); nullopt: a conflict.
std::optional<std::string> adoptable_plugstack(const std::string& path, const std::string& dir,
                                               const std::string& ours) {
  // Never blocks on a FIFO planted there; follows a link (a package's file may be one).
  auto text = read_regular_file(path, 1u << 20);
  if (!text) return std::nullopt;
  const auto w = plugin_line(*text);
  const auto want = "fabric=" + join(dir, "fabric.json");
  if (w.empty() || std::ranges::find(w, want) == w.end()) return std::nullopt;
  std::string why = "not sync's (a package's or an admin's), and its plugin line reads " +
                    join(dir, "fabric.json");
  std::vector<std::string> lacks;
  const auto mine = plugin_line(ours);
  if (mine.size() >= 2 && mine[1] != w[1])
    lacks.push_back("the plugin " + mine[1] + " (it loads " + w[1] + ")");
  for (std::size_t k = 2; k < mine.size(); ++k) {
    if (std::ranges::find(w, mine[k]) != w.end()) continue;
    // hostmap= as sync writes it is the plugin's default for this fabric=.
    if (mine[k] == "hostmap=" + join(dir, "fabric.hostmap") &&
        std::ranges::none_of(w, [](const std::string& x) { return x.starts_with("hostmap="); }))
      continue;
    lacks.push_back(mine[k]);
  }
  if (!lacks.empty()) {
    why += "; but it lacks ";
    for (std::size_t k = 0; k < lacks.size(); ++k) why += (k ? ", " : "") + lacks[k];
    why += " (edit it: sync never changes a file it did not write)";
  }
  return why;
}

}  // namespace

namespace {

// What would stop the links after the switch is found before it: DIR and the set's
// subdirectories must be directories; a subdirectory sync would write a link into is never a
// link itself (the link would land where it points).
Result<void> check_dirs(const std::string& dir, const SlurmFileSet& set) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return {};  // made by the commit (its parent: the admin's)
  if (!S_ISDIR(st.st_mode)) return fail(ErrorCode::kUsage, "exists and is not a directory", dir);
  // DIR and the existing subdirectories of the set under the admins' rule (owner, mode), before
  // anything is written: SetDirs checks them again as it opens them.
  auto top = OwnedDir::open(dir, OwnedDir::Create::kNo, 0755, OwnedDir::Rule::kAdmins);
  if (!top) return std::unexpected(top.error());
  for (const auto& file : set.files) {
    const auto sub = parent_of(file.name);
    if (sub.empty()) continue;
    switch (top->kind(sub)) {
      case OwnedDir::Kind::kMissing:
        continue;
      case OwnedDir::Kind::kLink:
        return fail(ErrorCode::kUsage,
                    "is a symbolic link: slurm sync places its links only in a real directory "
                    "(make it one, or sync into the directory it points to)",
                    top->path_of(sub));
      case OwnedDir::Kind::kDirectory:
        if (auto d = top->sub(sub, OwnedDir::Create::kNo, 0755, OwnedDir::Rule::kAdmins); !d)
          return std::unexpected(d.error());
        continue;
      default:
        return fail(ErrorCode::kUsage, "exists and is not a directory", top->path_of(sub));
    }
  }
  return {};
}

Result<SyncPlan> plan_in(const std::string& dir, const std::optional<OwnedDir>& store,
                         const SlurmFileSet& set) {
  SyncPlan plan;
  if (auto ok = check_dirs(dir, set); !ok) return std::unexpected(ok.error());
  std::map<std::string, std::string> old;
  if (store) {
    plan.old_snapshot = live_snapshot(*store);
    if (!plan.old_snapshot.empty()) {
      auto files = snapshot_files(*store, plan.old_snapshot);
      if (!files) return std::unexpected(files.error());
      old = std::move(*files);
    }
  }
  for (const auto& file : set.files) {
    FileChange c{file.name, FileChange::Kind::kAdded};
    if (auto it = old.find(file.name); it != old.end()) {
      const auto& text = it->second;
      if (file.name == "fabric.json") plan.old_fabric_json = text;
      if (file.name == "fabric.hostmap")
        if (auto m = placement::parse_host_map(
                text, store->path_of(plan.old_snapshot + "/" + file.name)))
          plan.old_generation = m->generation;
      c.kind = text == file.text ? FileChange::Kind::kUnchanged : FileChange::Kind::kChanged;
      old.erase(it);
    }
    plan.files.push_back(c);
    const auto path = join(dir, file.name);
    switch (link_state(path, link_target(file.name))) {
      case kOurs:
        break;
      case kOther:
        if (file.name == kPlugstackFile)
          if (auto why = adoptable_plugstack(path, dir, file.text)) {
            plan.kept.emplace_back(file.name, *why);
            break;
          }
        plan.conflicts.push_back(file.name);
        [[fallthrough]];
      default:
        plan.links_to_fix.push_back(file.name);
    }
  }
  for (const auto& [name, text] : old) plan.files.push_back({name, FileChange::Kind::kRemoved});
  return plan;
}

}  // namespace

Result<SyncPlan> plan_sync(const std::string& dir, const SlurmFileSet& set) {
  if (auto ok = check_dirs(dir, set); !ok) return std::unexpected(ok.error());
  auto store = open_store(dir, OwnedDir::Create::kNo);
  if (!store) return std::unexpected(store.error());
  return plan_in(dir, *store, set);
}

// After the switch, an error leaves the new set live: say so.
std::string live_note(const std::string& dir, const std::string& live) {
  return " (the new set is live: " + join(dir, std::string(kStore) + "/" + live) +
         "; sync again once fixed)";
}

Error conflict_error(const std::string& dir, const std::string& name) {
  return Error{ErrorCode::kUsage,
               "exists and was not written by slurm sync: move it away, or pass --replace (it is "
               "then kept in " +
                   join(dir, std::string(kStore) + "/replaced/") + "), and sync links it to " +
                   join(dir, std::string(kLinkPrefix) + name),
               join(dir, name), 0};
}

namespace {

// What killed syncs left in the store (we hold the lock: nobody else writes here), each by a
// name sync makes and nothing else: a snapshot being written (tmp.PID) and temporary links.
void remove_store_leftovers(const OwnedDir& store) {
  // `current`'s temporary link as syncs before OwnedDir named it: ".current" kTmpMark PID.
  const std::string legacy = std::string(".") + kCurrent + kTmpMark;
  for (const auto& n : store.list()) {
    const bool building = n.starts_with("tmp.") && all_digits(std::string_view(n).substr(4));
    const bool old_link =
        n.starts_with(legacy) && all_digits(std::string_view(n).substr(legacy.size()));
    if (building || old_link || OwnedDir::is_temporary(n)) store.remove(n);
  }
}

// --replace: the file at DIR/NAME (`base` in `parent`) kept under a second name in
// .fabricplace/replaced/ before sync's link is renamed over it, so the path never goes
// missing. The name is free (.TIME, .TIME.1, ...); one already linked to the file (a killed
// --replace) is kept as it is. Never deleted.
Result<void> keep_replaced(const OwnedDir& store, const OwnedDir& parent, const std::string& base,
                           const std::string& name) {
  auto keep = store.sub("replaced", OwnedDir::Create::kYes);
  if (!keep) return std::unexpected(keep.error());
  std::string flat = name;
  std::ranges::replace(flat, '/', '_');
  const std::string stamp = flat + "." + std::to_string(std::time(nullptr));
  std::string to = stamp;
  struct stat was {
  }, there{};
  ::fstatat(parent.fd(), base.c_str(), &was, AT_SYMLINK_NOFOLLOW);
  for (int k = 1; ::fstatat(keep->fd(), to.c_str(), &there, AT_SYMLINK_NOFOLLOW) == 0 &&
                  there.st_ino != was.st_ino;
       ++k)
    to = stamp + "." + std::to_string(k);
  // linkat without AT_SYMLINK_FOLLOW: a link at DIR/NAME is kept as the link it is.
  if (::linkat(parent.fd(), base.c_str(), keep->fd(), to.c_str(), 0) != 0 && errno != EEXIST)
    return fail(ErrorCode::kIo, "cannot keep it as " + keep->path_of(to) + ": " + errno_text(),
                parent.path_of(base));
  return {};
}

// The new snapshot, written beside the live one (tmp.PID, every file and directory flushed)
// and renamed to its number; then `current` switched to it in one rename: the commit. Returns
// the snapshot's name.
Result<std::string> write_snapshot(const OwnedDir& store, const SlurmFileSet& set,
                                   const std::string& live) {
  unsigned seq = 0;
  for (const auto& n : store.list())
    if (snapshot_name(n))
      if (auto v = str::parse_uint(std::string_view(n).substr(std::strlen(kSnapshotPrefix)), 999999))
        seq = std::max(seq, static_cast<unsigned>(*v));
  char name[32];
  // After a wrap of a million syncs, never the live snapshot's number (it becomes the previous
  // one, kept for rollback); any other snapshot here is pruned once this one is live anyway.
  do {
    seq = (seq + 1) % 1000000;
    std::snprintf(name, sizeof name, "%s%06u", kSnapshotPrefix, seq);
  } while (name == live);
  const std::string tmp_name = "tmp." + std::to_string(::getpid());
  {
    auto tmp = store.sub(tmp_name, OwnedDir::Create::kYes);
    if (!tmp) return std::unexpected(tmp.error());
    std::map<std::string, OwnedDir> subdirs;
    for (const auto& file : set.files) {
      const OwnedDir* in = &*tmp;
      if (const auto sub = parent_of(file.name); !sub.empty()) {
        auto it = subdirs.find(sub);
        if (it == subdirs.end()) {
          auto d = tmp->sub(sub, OwnedDir::Create::kYes);
          if (!d) return std::unexpected(d.error());
          it = subdirs.emplace(sub, std::move(*d)).first;
        }
        in = &it->second;
      }
      if (auto ok = in->create_file(std::string(base_of(file.name)), file.text); !ok)
        return std::unexpected(ok.error());
    }
    for (const auto& [sub, d] : subdirs)
      if (auto ok = d.sync(); !ok) return std::unexpected(ok.error());
    if (auto ok = tmp->sync(); !ok) return std::unexpected(ok.error());
  }
  store.remove(name);  // a number reused after a wrap of a million syncs
  if (auto ok = store.rename(tmp_name, name); !ok) return std::unexpected(ok.error());
  if (auto ok = store.sync(); !ok) return std::unexpected(ok.error());
  if (auto ok = store.place_link(kCurrent, name); !ok) return std::unexpected(ok.error());
  if (auto ok = store.sync(); !ok) return std::unexpected(ok.error());
  return std::string(name);
}

}  // namespace

Result<SyncPlan> commit_sync(const std::string& dir, const SlurmFileSet& set, bool replace,
                             int lock_wait_s) {
  if (auto ok = check_dirs(dir, set); !ok) return std::unexpected(ok.error());
  auto dirs = SetDirs::open(dir);
  if (!dirs) return std::unexpected(dirs.error());
  auto opened = open_store(dirs->top(), OwnedDir::Create::kYes);
  if (!opened) return std::unexpected(opened.error());
  const OwnedDir& store = **opened;
  auto lock = store.lock("lock", lock_wait_s, "another slurm sync");
  if (!lock) return std::unexpected(lock.error());
  // Planned under the lock: another sync may have committed since the caller looked.
  auto planned = plan_in(dir, *opened, set);
  if (!planned) return std::unexpected(planned.error());
  const SyncPlan& plan = *planned;
  if (!plan.conflicts.empty() && !replace)
    return std::unexpected(conflict_error(dir, plan.conflicts[0]));
  remove_store_leftovers(store);
  dirs->remove_leftovers(set);

  std::string live = plan.old_snapshot;
  bool switched = false;  // errors after the switch say that the new set is live
  auto after_switch = [&](const Error& e) {
    return std::unexpected(
        Error{e.code, e.message + (switched ? live_note(dir, live) : std::string()), e.file, e.line});
  };
  // The fixed links DIR/NAME -> .fabricplace/current/NAME. Missing ones are placed before
  // the switch (they resolve from the moment it happens: a new topology.yaml is there as the
  // old topology.conf goes); the others (sync's links elsewhere, --replace) after it.
  std::vector<const OwnedDir*> parents;
  auto link_all = [&](bool missing_only) -> Result<void> {
    for (const auto& file : set.files) {
      // Not the plugin's line: a dangling one (a sync killed before its switch) would be an
      // unreadable `include plugstack.conf.d/*.conf` for every srun. It comes after the switch.
      if (missing_only && file.name == kPlugstackFile) continue;
      if (std::ranges::any_of(plan.kept, [&](const auto& k) { return k.first == file.name; }))
        continue;
      const auto want = link_target(file.name);
      const std::string base(base_of(file.name));
      auto parent = dirs->of(file.name, false);
      if (!parent) return after_switch(parent.error());
      const auto state = *parent ? link_state(**parent, base, want) : kMissing;
      if (state == kOurs || (missing_only && state != kMissing)) continue;
      if (!*parent) {
        parent = dirs->of(file.name, true);
        if (!parent) return after_switch(parent.error());
      }
      const OwnedDir& in = **parent;
      if (state == kOther)  // --replace: kept, never deleted
        if (auto ok = keep_replaced(store, in, base, file.name); !ok) return after_switch(ok.error());
      if (auto ok = in.place_link(base, want); !ok) return after_switch(ok.error());
      if (std::ranges::find(parents, &in) == parents.end()) parents.push_back(&in);
    }
    return {};
  };
  const bool write =
      std::ranges::any_of(
          plan.files, [](const FileChange& c) { return c.kind != FileChange::Kind::kUnchanged; }) ||
      live.empty();
  if (auto ok = link_all(true); !ok) return std::unexpected(ok.error());
  if (write) {
    auto name = write_snapshot(store, set, live);
    if (!name) return std::unexpected(name.error());
    live = *name;
    switched = true;
  }
  if (auto ok = link_all(false); !ok) return std::unexpected(ok.error());
  // Links to files the set does not have (topology.conf after a switch to topology.yaml),
  // whatever the live snapshot held: a sync killed after the switch leaves none for long.
  for (const std::string name : {"fabric.json", "fabric.hostmap", "fabric.lua", "topology.conf",
                                 "topology.yaml", "fabricplace-nodes.conf", kPlugstackFile}) {
    if (std::ranges::any_of(set.files, [&](const SlurmFile& f) { return f.name == name; }))
      continue;
    const std::string base(base_of(name));
    if (auto parent = dirs->of(name, false); parent && *parent &&
                                             link_state(**parent, base, link_target(name)) == kOurs)
      (*parent)->remove(base);
  }
  for (const auto* p : parents)
    if (auto ok = p->sync(); !ok) return after_switch(ok.error());

  // Keep the live snapshot and the one before it (rollback); drop the rest. A sync that wrote
  // nothing keeps what is there.
  if (write)
    for (const auto& n : store.list())
      if (snapshot_name(n) && n != live && n != plan.old_snapshot) store.remove(n);
  return planned;
}

std::string slurmctld_digest(const std::string& dir) {
  auto store = open_store(dir, OwnedDir::Create::kNo);
  if (!store || !*store) return {};
  const auto live = live_snapshot(**store);
  if (live.empty()) return {};
  auto snap = (*store)->sub(live, OwnedDir::Create::kNo);
  if (!snap) return {};
  std::string all;
  for (const char* name : {"topology.conf", "topology.yaml", "fabricplace-nodes.conf"})
    if (auto text = snap->read_file(name, limits().input_bytes)) {
      std::string_view body = *text;  // without the generation line: the content is the point
      if (body.starts_with(kGenerationMark))
        body.remove_prefix(std::min(body.size(), body.find('\n') + 1));
      all += std::string(name) + '\0' + std::string(body) + '\0';
    }
  return str::fnv1a_hex(all);
}

std::string reconfigured_digest(const std::string& dir) {
  auto store = open_store(dir, OwnedDir::Create::kNo);
  if (!store || !*store) return {};
  auto text = (*store)->read_file("reconfigured", 4096);
  return text ? std::string(str::trim(*text)) : std::string();
}

Result<void> record_reconfigured(const std::string& dir, const std::string& digest) {
  auto store = open_store(dir, OwnedDir::Create::kNo);
  if (!store) return std::unexpected(store.error());
  if (!*store) return fail(ErrorCode::kIo, "no slurm sync store here", join(dir, kStore));
  return (*store)->write_file("reconfigured", digest + "\n");
}

}  // namespace fabricplace::ops
