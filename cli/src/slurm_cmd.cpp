// SPDX-License-Identifier: GPL-2.0-or-later
// `fabricplace slurm check`: is the installed SPANK plugin built for the Slurm that will load
// it? Slurm refuses a spank plugin of another major.minor and, for an `optional` one, says so
// only at verbose level (docs/slurm.md, "Slurm versions"): this says it plainly.
#include <dlfcn.h>
#include <glob.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include <iostream>
#include <memory>

#include "commands.hpp"
#include "fabricplace/common/file_io.hpp"
#include "fabricplace/common/slurm_plugin.hpp"
#include "fabricplace/common/strings.hpp"

namespace fabricplace::cli {

namespace {

namespace sl = fabricplace::slurm;

struct CheckOpts {
  std::string plugin, plugstack, slurm_conf, version;
};

/// A plugin line of plugstack.conf that names fabricplace: where it is and how it is listed.
struct Entry {
  std::string path, mode;         ///< mode: "optional" or "required"
  std::string where;              ///< "plugstack.conf:3"
  std::vector<std::string> args;  ///< the plugin's arguments (fabric=..., topology=block)
};

std::string getenv_or(const char* name, std::string fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

std::vector<std::string_view> words_of(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const auto start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

std::string dir_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

/// `Key=value` of slurm.conf (the first, case-insensitive key as Slurm reads it), or "".
std::string conf_value(const std::string& text, std::string_view key) {
  for (const auto raw : str::lines(text)) {
    auto line = str::trim(raw);
    if (line.size() <= key.size() || line[key.size()] != '=') continue;
    if (!str::starts_with_icase(line, key)) continue;
    auto v = str::trim(line.substr(key.size() + 1));
    return std::string(v.substr(0, v.find_first_of(" \t#")));
  }
  return {};
}

/// Every fabricplace line of plugstack.conf `path` and the files it includes (globs; at most
/// 8 deep, our own bound against an include loop). A relative plugin path is looked up in
/// each directory of `plugin_dirs` (slurm.conf's PluginDir), the first that has it, as Slurm
/// does; without PluginDir it stays relative and check() says it cannot know where Slurm
/// looks (its built-in plugin directory).
Result<void> scan_plugstack(const std::string& path, const std::vector<std::string>& plugin_dirs,
                            int depth, std::vector<Entry>& out) {
  if (depth > 8) return fail(ErrorCode::kSyntax, "includes nested more than 8 deep", path);
  auto text = read_file(path);
  if (!text) return std::unexpected(text.error());
  if (auto ok = str::check_text(*text, path); !ok) return ok;
  int n = 0;
  for (const auto raw : str::lines(*text)) {
    ++n;
    const auto line = str::trim(raw.substr(0, raw.find('#')));
    if (line.empty()) continue;
    const auto words = words_of(line);
    if (words[0] == "include") {
      if (words.size() < 2)
        return fail(ErrorCode::kSyntax, "include without a file or glob", path, n);
      std::string pattern(words[1]);
      if (pattern[0] != '/') pattern = dir_of(path) + "/" + pattern;
      glob_t g{};
      if (glob(pattern.c_str(), 0, nullptr, &g) == 0) {
        std::unique_ptr<glob_t, void (*)(glob_t*)> hold(&g, globfree);
        for (std::size_t i = 0; i < g.gl_pathc; ++i)
          if (auto r = scan_plugstack(g.gl_pathv[i], plugin_dirs, depth + 1, out); !r) return r;
      }
      continue;
    }
    if (words[0] != "optional" && words[0] != "required")
      return fail(ErrorCode::kSyntax,
                  "expected `required PLUGIN ...`, `optional PLUGIN ...` or `include GLOB`, got '" +
                      str::excerpt(words[0]) + "'",
                  path, n);
    if (words.size() < 2)
      return fail(ErrorCode::kSyntax, std::string(words[0]) + " without a plugin path", path, n);
    std::string plugin(words[1]);
    if (plugin.find("fabricplace") == std::string::npos) continue;
    if (plugin[0] != '/')
      for (const auto& dir : plugin_dirs)
        if (::access((dir + "/" + plugin).c_str(), F_OK) == 0) {
          plugin = dir + "/" + plugin;
          break;
        }
    out.push_back({plugin, std::string(words[0]), path + ":" + std::to_string(n),
                   std::vector<std::string>(words.begin() + 2, words.end())});
  }
  return {};
}

/// Slurm's own library, which every Slurm process that loads a spank plugin has loaded
/// (srun, sbatch, slurmstepd): the first libslurmfull.so in slurm.conf's PluginDir, beside
/// the plugin, or in the usual plugin directories of Debian and of Slurm's own install.
std::string find_libslurmfull(const std::vector<std::string>& plugin_dirs,
                              const std::string& plugin) {
  std::vector<std::string> dirs = plugin_dirs;
  dirs.push_back(dir_of(plugin));
  for (const char* d :
       {"/usr/lib/x86_64-linux-gnu/slurm-wlm", "/usr/lib/aarch64-linux-gnu/slurm-wlm",
        "/usr/lib64/slurm", "/usr/lib/slurm", "/usr/local/lib/slurm", "/usr/local/lib64/slurm"})
    dirs.emplace_back(d);
  for (const auto& d : dirs)
    if (::access((d + "/libslurmfull.so").c_str(), R_OK) == 0) return d + "/libslurmfull.so";
  return {};
}

/// Loads the plugin as Slurm does (dlopen RTLD_LAZY, with libslurmfull.so loaded globally
/// first), in a child process so that nothing it runs can touch this one, within 10 s.
/// Returns "" when it loads, else dlopen's message: a plugin built on a newer distribution
/// asks for a libstdc++ or glibc this machine lacks, which no version number shows.
std::string try_load(const std::string& libslurm, const std::string& plugin) {
  int fds[2];
  if (::pipe(fds) != 0) return "cannot create a pipe to load it";
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return "cannot fork to load it";
  }
  if (pid == 0) {
    ::close(fds[0]);
    std::string msg;
    if (!::dlopen(libslurm.c_str(), RTLD_LAZY | RTLD_GLOBAL)) {
      msg = std::string("cannot load Slurm's ") + libslurm + ": " + ::dlerror();
    } else if (!::dlopen(plugin.c_str(), RTLD_LAZY)) {
      msg = ::dlerror();
    } else {
      msg = "ok";
    }
    [[maybe_unused]] auto n = ::write(fds[1], msg.data(), std::min<std::size_t>(msg.size(), 4096));
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string got;
  char buf[1024];
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  bool timed_out = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    const auto n = ::read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    if (got.size() < 4096) got.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (timed_out) return "loading it took more than 10 s";
  if (got == "ok") return {};
  if (got.empty())
    return WIFSIGNALED(status)
               ? "loading it killed the process (signal " + std::to_string(WTERMSIG(status)) + ")"
               : "loading it failed without a message";
  return got;
}

/// The Slurm that loads the plugin here: --slurm-version, else `srun --version` (srun,
/// salloc and sbatch load it at submission; slurmstepd, of the same installation, at launch),
/// else `slurmd -V` (srun needs a reachable configuration even to print its version; slurmd
/// does not, but login nodes have none).
Result<std::pair<sl::Version, std::string>> slurm_here(const CheckOpts& o) {
  if (!o.version.empty()) {
    auto v = sl::parse_version(o.version, "--slurm-version");
    if (!v) return fail(ErrorCode::kUsage, v.error().message);
    return std::pair{*v, std::string("--slurm-version")};
  }
  std::string tried;
  // srun without a reachable configuration retries for a minute: 10 s is plenty to print
  // a version.
  for (const char* command : {"srun --version", "slurmd -V"}) {
    auto text = run_slurm("slurm check", "timeout 10 " + std::string(command) + " 2>/dev/null");
    if (!text) {
      tried += (tried.empty() ? "" : "; ") + text.error().message;
      continue;
    }
    auto v = sl::parse_version(str::trim(*text), command);
    if (!v) return std::unexpected(v.error());
    return std::pair{*v, std::string(command)};
  }
  return fail(ErrorCode::kIo, tried + "; give the Slurm version with --slurm-version");
}

int check(const CheckOpts& o) {
  std::vector<Entry> entries;
  std::vector<std::string> plugin_dirs;
  if (!o.plugin.empty()) {
    entries.push_back({o.plugin, "", "--plugin", {}});
  } else {
    const std::string conf =
        !o.slurm_conf.empty() ? o.slurm_conf : getenv_or("SLURM_CONF", "/etc/slurm/slurm.conf");
    std::string conf_text;
    if (auto t = read_file(conf)) conf_text = std::move(*t);
    std::string plugstack = o.plugstack;
    if (plugstack.empty()) plugstack = conf_value(conf_text, "PlugStackConfig");
    if (plugstack.empty()) plugstack = dir_of(conf) + "/plugstack.conf";
    for (auto d : str::split(conf_value(conf_text, "PluginDir"), ':'))
      if (!d.empty()) plugin_dirs.emplace_back(d);
    if (auto r = scan_plugstack(plugstack, plugin_dirs, 0, entries); !r) return report(r.error());
    // Constrain mode (the default) needs etc/job_submit.lua in slurmctld, and so does exact
    // mode from Slurm 23.11 on (docs/slurm.md, "Slurm versions"): say so when it is missing.
    const auto submit = conf_value(conf_text, "JobSubmitPlugins");
    if (!conf_text.empty() && submit.find("lua") == std::string::npos)
      std::cerr << "fabricplace: warning: " << conf
                << ": no JobSubmitPlugins=lua: without etc/job_submit.lua in slurmctld, "
                   "--fabric-tp jobs are ordered at launch but not steered at submission "
                   "(constrain mode; exact mode too on Slurm 23.11+)\n";
    // topology/block wants the plugin to know it (else job_submit.lua asks for per-leaf
    // counts, which Slurm refuses there) and cli_filter.lua to set the TP groups' --segment.
    const bool block_conf =
        str::starts_with_icase(conf_value(conf_text, "TopologyPlugin"), "topology/block");
    for (const auto& e : entries) {
      const bool block_arg =
          std::find(e.args.begin(), e.args.end(), "topology=block") != e.args.end();
      if (block_conf && !block_arg)
        std::cerr << "fabricplace: warning: " << e.where << ": slurm.conf has "
                  << "TopologyPlugin=topology/block, but this line has no topology=block: "
                     "job_submit.lua then asks for per-leaf node counts, which topology/block "
                     "refuses at submission; add topology=block\n";
      // topology=block on a cluster without topology/block (topology.yaml, 25.05+, may give
      // a partition its block topology: then slurm.conf names no TopologyPlugin=block).
      if (block_arg && !conf_text.empty() && !block_conf &&
          ::access((dir_of(conf) + "/topology.yaml").c_str(), F_OK) != 0)
        std::cerr << "fabricplace: warning: " << e.where << ": topology=block, but " << conf
                  << " has no TopologyPlugin=topology/block (nor a topology.yaml beside it): "
                     "job_submit.lua then makes only one-leaf constraints and proposes a "
                     "--segment that topology/tree ignores, so TP groups may split; remove "
                     "topology=block\n";
      if (block_arg && !conf_text.empty() &&
          conf_value(conf_text, "CliFilterPlugins").find("lua") == std::string::npos)
        std::cerr << "fabricplace: warning: " << conf << ": topology=block (" << e.where
                  << "), but no CliFilterPlugins=lua: without etc/cli_filter.lua, a "
                     "--fabric-tp job gets no --segment, and Slurm may split its TP groups "
                     "(Slurm 24.05 to 25.11.1; from 25.11.2 job_submit.lua sets it)\n";
    }
    if (entries.empty())
      return report(Error{ErrorCode::kUsage,
                          "no fabricplace plugin is listed (nor included) here; give --plugin "
                          "FILE to check a plugin file",
                          plugstack, 0});
  }
  // Each file's version first: a file that is no plugin is said whatever Slurm is here.
  std::vector<std::uint32_t> numbers;
  int rc = kExitOk;
  for (const auto& e : entries) {
    if (e.path[0] != '/' && e.where != "--plugin") {
      numbers.push_back(0);
      rc = report(Error{ErrorCode::kIo,
                        "plugin " + str::quoted(e.path) +
                            " is a relative path found in no PluginDir of slurm.conf: Slurm "
                            "looks in its built-in plugin directory; give --plugin FILE",
                        e.where, 0});
      continue;
    }
    auto number = sl::read_elf_u32(e.path, "plugin_version");
    numbers.push_back(number ? *number : 0);
    if (!number) {
      auto err = number.error();
      if (e.where != "--plugin") err.message += " (listed at " + e.where + ")";
      rc = report(err);
    }
  }
  auto here = slurm_here(o);
  if (!here) return report(here.error());
  const auto& [slurm, how] = *here;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const auto& e = entries[i];
    if (numbers[i] == 0) continue;
    const auto built = sl::from_number(numbers[i]);
    char hex[16];
    std::snprintf(hex, sizeof hex, "0x%06x", numbers[i]);
    const std::string what = e.path + " (" + e.where + "): built for Slurm " + built.series() +
                             " (plugin_version " + hex + ", " + built.to_string() + ")";
    if (built.same_series(slurm)) {
      // The version is right; the libraries it was linked with must be here too.
      const auto lib = find_libslurmfull(plugin_dirs, e.path);
      if (lib.empty()) {
        std::cout << "fabricplace: " << what << "; Slurm here is " << slurm.to_string() << " ("
                  << how << "): the version matches (its libraries not checked: no "
                  << "libslurmfull.so in PluginDir, beside it or in the usual directories)\n";
        continue;
      }
      if (const auto why = try_load(lib, e.path); !why.empty()) {
        std::cerr << "fabricplace: error: " << what << "; Slurm here is " << slurm.to_string()
                  << " (" << how << "), but it does not load on this machine: " << why
                  << "; build it on this distribution (or one no newer), against Slurm "
                  << slurm.series() << "'s headers\n";
        rc = kExitError;
        continue;
      }
      std::cout << "fabricplace: " << what << "; Slurm here is " << slurm.to_string() << " (" << how
                << "): it loads\n";
      continue;
    }
    std::cerr << "fabricplace: error: " << what << ", but Slurm here is " << slurm.to_string()
              << " (" << how << "): Slurm refuses it (\"Incompatible Slurm plugin ... version\") "
              << (e.mode == "required"
                      ? "and, as it is `required`, every srun, salloc, sbatch and job step fails"
                  : e.mode == "optional"
                      ? "and, as it is `optional`, runs jobs without it, saying only "
                        "`spank: ...: Incompatible plugin version`: srun, salloc and sbatch "
                        "reject --fabric-* as unrecognized options"
                      : "(an `optional` plugin is left out, its --fabric-* options unrecognized; "
                        "a `required` one fails every job)")
              << "; install the plugin built against Slurm " << slurm.series()
              << "'s headers (cmake says \"SPANK plugin for Slurm " << slurm.series() << "\")\n";
    rc = kExitError;
  }
  return rc;
}

}  // namespace

void add_slurm_commands(CLI::App& app, RunFn& run) {
  auto* slurm = app.add_subcommand(
      "slurm",
      "the Slurm side: write Slurm's files from the fabric; is the plugin built for this Slurm?");
  slurm->require_subcommand(1);
  auto o = std::make_shared<CheckOpts>();
  auto* cmd = slurm->add_subcommand(
      "check",
      "compare the SPANK plugin's plugin_version with the Slurm that loads it (Slurm loads a "
      "spank plugin only on the major.minor it was built for); exit 1 when they differ");
  cmd->add_option("--plugin", o->plugin,
                  "the plugin file (default: every fabricplace line of plugstack.conf)")
      ->check(non_empty("a plugin file", "--plugin"));
  cmd->add_option("--plugstack", o->plugstack,
                  "plugstack.conf (default: slurm.conf's PlugStackConfig, else plugstack.conf "
                  "beside slurm.conf)")
      ->check(non_empty("a file", "--plugstack"));
  cmd->add_option("--slurm-conf", o->slurm_conf,
                  "slurm.conf (default: $SLURM_CONF, else /etc/slurm/slurm.conf)")
      ->check(non_empty("a file", "--slurm-conf"));
  cmd->add_option("--slurm-version", o->version,
                  "the Slurm to compare with, MAJOR.MINOR[.MICRO] (default: `srun --version`, "
                  "else `slurmd -V`)")
      ->check(non_empty("a version", "--slurm-version"));
  cmd->callback([&run, o] { run = [o] { return check(*o); }; });
  add_sync_command(slurm, run);
}

}  // namespace fabricplace::cli
