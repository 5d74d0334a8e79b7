// SPDX-License-Identifier: GPL-2.0-or-later
// Helpers shared by the per-context files (spank_common.hpp).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "fabricplace/common/file_io.hpp"
#include "fabricplace/common/strings.hpp"
#include "launch.hpp"
#include "spank_common.hpp"

namespace fabricplace::plugin::spank {

State& state() {
  static State s;
  return s;
}

namespace {

// Appends one line to the plugstack log= file (launch.hpp, append_log_line: never through a
// link, only a plain file root may trust when run as root); when it cannot, the line goes to
// Slurm's log only.
void append_log(const char* line, std::size_t n) noexcept {
  (void)append_log_line(state().config.log_path, line, n);
}

void log_line(const char* level, const std::string& msg) {
  if (state().config.log_path.empty()) return;
  const std::string line = std::string(level) + " pid=" + std::to_string(getpid()) +
                           " ctx=" + std::to_string(static_cast<int>(spank_context())) + " " + msg +
                           "\n";
  append_log(line.data(), line.size());
}

}  // namespace

void note(bool error, const std::string& msg) {
  if (error)
    slurm_error("fabricplace: %s", msg.c_str());
  else
    slurm_info("fabricplace: %s", msg.c_str());
  log_line(error ? "error" : "info", msg);
}

void note_verbose(const std::string& msg) {
  slurm_verbose("fabricplace: %s", msg.c_str());
  log_line("verbose", msg);
}

void note_internal_error(const char* hook, const char* what) noexcept {
  slurm_error(
      "fabricplace: %s: internal error: %s; continuing without fabricplace (Slurm's own order)",
      hook, what);
  char line[512];
  const int n =
      std::snprintf(line, sizeof line,
                    "error pid=%d ctx=%d %s: internal error: %s; continuing without "
                    "fabricplace (Slurm's own order)\n",
                    static_cast<int>(getpid()), static_cast<int>(spank_context()), hook, what);
  if (n > 0) append_log(line, std::min(static_cast<std::size_t>(n), sizeof line - 1));
}

void note_once(const std::string& msg, bool error) {
  static std::vector<std::string> said;
  if (std::find(said.begin(), said.end(), msg) != said.end()) return;
  said.push_back(msg);
  note(error, msg);
}

std::string program() {
  std::ifstream in("/proc/self/comm");
  std::string name;
  std::getline(in, name);
  return name;
}

std::vector<std::string> own_args() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> args;
  std::string a;
  while (std::getline(in, a, '\0')) args.push_back(a);
  if (!args.empty()) args.erase(args.begin());
  return args;
}

namespace {
// The job's own --segment from SBATCH_SEGMENT_SIZE / SALLOC_SEGMENT_SIZE (Slurm 25.05.1+),
// which sit between the #SBATCH lines and the command line.
SubmitShape with_segment_env(SubmitShape shape, const std::vector<std::string>& args) {
  if (parse_srun_args(args).segment) return shape;
  const char* name = program() == "salloc" ? "SALLOC_SEGMENT_SIZE" : "SBATCH_SEGMENT_SIZE";
  if (const char* v = std::getenv(name); v && *v)
    if (auto n = fp::str::parse_uint(v, 65533)) shape.segment = static_cast<std::uint32_t>(*n);
  return shape;
}
}  // namespace

SubmitShape job_shape() {
  const auto args = own_args();
  auto shape = with_segment_env(submit_shape({}, args), args);
  // The script's #SBATCH lines, from a regular file only and of a size sbatch itself takes
  // (its default max_script_size, 4 MiB): sbatch has already read a FIFO, which would block
  // here forever, and a device would never end. Otherwise the count is unknown, which the
  // checks do not hold against the job.
  constexpr off_t kMaxScript = off_t{4} << 20;
  struct stat st {};
  if (!shape.script) return shape;
  if (::stat(shape.script->c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= kMaxScript)
    if (auto text = fp::read_file(*shape.script))
      return with_segment_env(submit_shape(sbatch_directives(*text), args), args);
  shape.script_unread = true;
  return shape;
}

Mode mode() {
  return state().options.mode.value_or(*parse_mode(state().config.mode));
}

std::string host_map_path() {
  const auto& c = state().config;
  return !c.host_map_path.empty() ? c.host_map_path : default_host_map_path(c.fabric_path);
}

fp::Result<const fp::placement::HostMap*> launch_host_map() {
  std::string said;
  auto m = load_host_map(host_map_path(), state().config.fabric_path, said);
  if (!said.empty()) note_once(said);
  return m;
}

}  // namespace fabricplace::plugin::spank
