// The only file that implements SPANK hooks (pyxis layout): each hook dispatches on the
// context. Two C++ linkage traps, both checked by tests/plugin (exported symbol allow-list):
// spank.h must be included inside extern "C", and the plugin_* symbols must be declared
// extern "C" before SPANK_PLUGIN() or they get internal linkage and Slurm rejects the plugin.
// No exception may leave a hook: each body runs under guard(), which turns one into a
// logged error and the defined fallback (the plugin stands aside; the job runs unchanged).
extern "C" {
#include <slurm/spank.h>
}

#include <exception>
#include <string>
#include <vector>

#include "config.hpp"

// The module is built with hidden visibility; what Slurm looks up is declared visible here
// (and the version script plugin/fabricplace.lds exports nothing else).
#define FP_EXPORT __attribute__((visibility("default")))
extern "C" {
FP_EXPORT extern const char plugin_name[];
FP_EXPORT extern const char plugin_type[];
FP_EXPORT extern const unsigned int plugin_version;
FP_EXPORT extern const unsigned int spank_plugin_version;
FP_EXPORT int slurm_spank_init(spank_t sp, int ac, char** av);
}

SPANK_PLUGIN(fabricplace, 1)

namespace {

template <class Fn>
int guard(const char* hook, Fn&& fn) noexcept {
  try {
    return fn();
  } catch (const std::exception& e) {
    slurm_error("fabricplace: %s: internal error: %s; continuing without fabricplace", hook,
                e.what());
  } catch (...) {
    slurm_error("fabricplace: %s: internal error; continuing without fabricplace", hook);
  }
  return 0;
}

}  // namespace

extern "C" int slurm_spank_init(spank_t sp, int ac, char** av) {
  return guard("init", [&] {
    std::vector<std::string> args(av, av + ac);
    auto cfg = fabricplace::plugin::parse_plugin_args(args);
    if (!cfg) {
      // A bad plugstack.conf must not stop jobs: report and stand aside.
      slurm_error("fabricplace: plugstack.conf: %s; fabricplace is disabled",
                  cfg.error().message.c_str());
      return 0;
    }
    slurm_debug("fabricplace: loaded in context %d (fabric=%s policy=%s mode=%s)",
                static_cast<int>(spank_context()), cfg->fabric_path.c_str(), cfg->policy.c_str(),
                cfg->mode.c_str());
    (void)sp;
    return 0;
  });
}
