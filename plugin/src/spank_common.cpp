// Helpers shared by the per-context files (spank_common.hpp).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "fabricplace/common/file_io.hpp"
#include "launch.hpp"
#include "spank_common.hpp"

namespace fabricplace::plugin::spank {

State& state() {
  static State s;
  return s;
}

void note(bool error, const std::string& msg) {
  if (error)
    slurm_error("fabricplace: %s", msg.c_str());
  else
    slurm_info("fabricplace: %s", msg.c_str());
  if (const auto& log = state().config.log_path; !log.empty()) {
    if (FILE* f = std::fopen(log.c_str(), "a")) {
      std::fprintf(f, "%s pid=%d ctx=%d %s\n", error ? "error" : "info", static_cast<int>(getpid()),
                   static_cast<int>(spank_context()), msg.c_str());
      std::fclose(f);
    }
  }
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

SubmitShape job_shape() {
  const auto args = own_args();
  auto shape = submit_shape({}, args);
  if (shape.script)
    if (auto text = fp::read_file(*shape.script))
      shape = submit_shape(sbatch_directives(*text), args);
  return shape;
}

Mode mode() {
  return state().options.mode.value_or(*parse_mode(state().config.mode));
}

std::string host_map_path() {
  const auto& c = state().config;
  return !c.host_map_path.empty() ? c.host_map_path : default_host_map_path(c.fabric_path);
}

}  // namespace fabricplace::plugin::spank
