// SPDX-License-Identifier: GPL-2.0-or-later
// The only file that implements SPANK hooks (pyxis layout): each hook dispatches on the
// context; the logic lives in the Slurm-free core (config, options, launch). Two C++ linkage
// traps, both checked by tests/plugin (exported symbol allow-list): spank.h must be included
// inside extern "C", and the plugin_* symbols must be declared extern "C" before
// SPANK_PLUGIN() or they get internal linkage and Slurm rejects the plugin.
//
// Never break a launch: no exception leaves a hook (guard()), and every fault (no host map,
// a host it lacks, an internal error) is one message and Slurm's own order. Only a bad
// option value on the command line fails, at once, as the user asked for something invalid.
extern "C" {
#include <slurm/slurm.h>
#include <slurm/spank.h>
}

#include <array>
#include <cstdlib>
#include <string>
#include <vector>

#include "spank_common.hpp"

// The module is built with hidden visibility; what Slurm looks up is declared visible here
// (and the version script plugin/fabricplace.lds exports nothing else).
#define FP_EXPORT __attribute__((visibility("default")))
extern "C" {
FP_EXPORT extern const char plugin_name[];
FP_EXPORT extern const char plugin_type[];
FP_EXPORT extern const unsigned int plugin_version;
FP_EXPORT extern const unsigned int spank_plugin_version;
FP_EXPORT int slurm_spank_init(spank_t sp, int ac, char** av);
FP_EXPORT int slurm_spank_init_post_opt(spank_t sp, int ac, char** av);
FP_EXPORT int slurm_spank_user_init(spank_t sp, int ac, char** av);
FP_EXPORT int slurm_spank_task_init(spank_t sp, int ac, char** av);
FP_EXPORT int slurm_spank_exit(spank_t sp, int ac, char** av);
}

SPANK_PLUGIN(fabricplace, 1)

namespace {

using namespace fabricplace::plugin::spank;
using fabricplace::plugin::Option;

int option_cb(int val, const char* optarg, int remote) {
  return guard("option", [&] {
    auto& st = state();
    const auto which = static_cast<Option>(val);
    if (auto r = fp::plugin::set_option(st.options, which, optarg); !r) {
      note(true, r.error().message);
      return remote ? 0 : -1;  // a bad value fails the command at once, never a launch
    }
    if (!remote && st.enabled && spank_context() == S_CTX_LOCAL) local_steer_srun();
    if (!remote && st.enabled && spank_context() == S_CTX_ALLOCATOR) return allocator_steer();
    return 0;
  });
}

// From the one table fabricplace-spank(8) is written from (options.cpp, option_docs()).
std::array<spank_option, fp::plugin::kOptionCount> make_options() {
  std::array<spank_option, fp::plugin::kOptionCount> out{};
  const auto& docs = fp::plugin::option_docs();
  for (std::size_t i = 0; i < docs.size(); ++i)
    out[i] = spank_option{const_cast<char*>(fp::plugin::option_name(docs[i].which)),
                          const_cast<char*>(docs[i].arg),
                          const_cast<char*>(docs[i].usage),
                          1,
                          static_cast<int>(docs[i].which),
                          option_cb};
  return out;
}
std::array<spank_option, fp::plugin::kOptionCount> g_options = make_options();

}  // namespace

extern "C" int slurm_spank_init(spank_t sp, int ac, char** av) {
  return guard("init", [&] {
    auto& st = state();
    std::vector<std::string> args(av, av + ac);
    auto cfg = fabricplace::plugin::parse_plugin_args(args);
    if (!cfg) {
      // A bad plugstack.conf must not stop jobs, nor make their --fabric-* options unknown:
      // register them, report, and stand aside.
      note(true, "plugstack.conf: " + cfg.error().message + "; fabricplace is disabled");
    } else {
      st.config = *cfg;
      st.enabled = true;
    }
    const auto ctx = spank_context();
    // FABRICPLACE_SEGMENT is this process's answer to cli_filter.lua, never an inherited one
    // (a job's sbatch, salloc or srun inside a steered job): cleared before any option.
    if (ctx == S_CTX_ALLOCATOR || ctx == S_CTX_LOCAL) unsetenv("FABRICPLACE_SEGMENT");
    if (ctx == S_CTX_ALLOCATOR || ctx == S_CTX_LOCAL || ctx == S_CTX_REMOTE)
      for (auto& o : g_options)
        if (spank_option_register(sp, &o) != ESPANK_SUCCESS)
          note(true, std::string("cannot register --") + o.name);
    return 0;
  });
}

extern "C" int slurm_spank_init_post_opt(spank_t sp, int, char**) {
  return guard("init_post_opt", [&] { return allocator_post_opt(sp); });
}

extern "C" int slurm_spank_user_init(spank_t sp, int, char**) {
  return guard("user_init", [&] { return remote_user_init(sp); });
}

extern "C" int slurm_spank_task_init(spank_t sp, int, char**) {
  return guard("task_init", [&] { return remote_task_init(sp); });
}

extern "C" int slurm_spank_exit(spank_t, int, char**) {
  return guard("exit", [&] {
    // srun's hostfile; a pin sbatch never got to clean up (it failed before init_post_opt).
    if (spank_context() == S_CTX_LOCAL || spank_context() == S_CTX_ALLOCATOR) local_exit();
    return 0;
  });
}
