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

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "config.hpp"
#include "fabricplace/common/file_io.hpp"
#include "fabricplace/placement/slurm_env.hpp"
#include "launch.hpp"
#include "options.hpp"
#include "submit.hpp"

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

namespace fp = fabricplace;
using fp::plugin::Mode;
using fp::plugin::Option;

struct State {
  bool enabled = false;  ///< plugstack.conf parsed
  fp::plugin::PluginConfig config;
  fp::plugin::JobOptions options;
  std::string srun_hostfile;  ///< the SLURM_HOSTFILE this process wrote (srun, exact mode)
  bool exact = false;         ///< exact mode pinned the nodes (allocator)
  // Remote: the ring of this step, computed in user_init, read by task_init (forked after).
  std::optional<fp::placement::RankLayout> ring;
  const fp::placement::HostMap* map = nullptr;
};
State& state() {
  static State s;
  return s;
}

/// One line to Slurm's log (and the plugstack log= file, if any).
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

template <class Fn>
int guard(const char* hook, Fn&& fn) noexcept {
  try {
    return fn();
  } catch (const std::exception& e) {
    note(true, std::string(hook) + ": internal error: " + e.what() +
                   "; continuing without fabricplace (Slurm's own order)");
  } catch (...) {
    note(true, std::string(hook) + ": internal error; continuing without fabricplace");
  }
  return 0;
}

// The client's program name: "sbatch", "salloc", "srun".
std::string program() {
  std::ifstream in("/proc/self/comm");
  std::string name;
  std::getline(in, name);
  return name;
}

// note(), once per process for a given message (option callbacks run several times).
void note_once(const std::string& msg, bool error = false) {
  static std::vector<std::string> said;
  if (std::find(said.begin(), said.end(), msg) != said.end()) return;
  said.push_back(msg);
  note(error, msg);
}

Mode mode() {
  return state().options.mode.value_or(*fp::plugin::parse_mode(state().config.mode));
}

std::string host_map_path() {
  const auto& c = state().config;
  return !c.host_map_path.empty() ? c.host_map_path
                                  : fp::plugin::default_host_map_path(c.fabric_path);
}

// ---- local context (srun inside an allocation) ------------------------------------------

std::vector<std::string> own_args() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> args;
  std::string a;
  while (std::getline(in, a, '\0')) args.push_back(a);
  if (!args.empty()) args.erase(args.begin());
  return args;
}

// srun reads SLURM_HOSTFILE after the option callbacks (opt.c _opt_verify) and before
// spank_init_post_opt, so this runs in every --fabric-* callback with what is known then:
// srun's own command line (all of it, from /proc) and the job's environment. The file lists
// the job's hosts in ring order, K lines each; srun runs the first ntasks lines.
void steer_srun() {
  auto& st = state();
  if (!st.options.tp || mode() == Mode::kOff) return;
  const char* job = std::getenv("SLURM_JOB_ID");
  if (!job) return;  // srun outside an allocation: Slurm allocates; nothing to order yet
  const char* user_file = std::getenv("SLURM_HOSTFILE");
  if (user_file && st.srun_hostfile != user_file) return;  // the user's own order wins
  const auto counts = fp::plugin::parse_srun_args(own_args());
  if (counts.nodelist) return;
  const fp::placement::EnvFn env = [](const char* n) -> std::optional<std::string> {
    const char* v = std::getenv(n);
    return v && *v ? std::optional<std::string>(v) : std::nullopt;
  };
  auto nodes = fp::placement::slurm_job_nodes(env);
  if (!nodes) return;
  std::uint32_t K = 0;
  if (counts.ntasks_per_node) {
    K = *counts.ntasks_per_node;
  } else if (counts.ntasks && counts.nodes && *counts.ntasks % *counts.nodes == 0) {
    K = *counts.ntasks / *counts.nodes;
  } else if (!counts.ntasks && !counts.nodes) {
    auto k = fp::placement::slurm_tasks_per_node(env);
    if (!k) {
      note(false, k.error().message + "; srun keeps Slurm's order");
      return;
    }
    K = k->first;
  } else {
    note_once(
        "srun's task count does not give a whole number of tasks per node; srun keeps "
        "Slurm's order");
    return;
  }
  auto map = fp::plugin::load_host_map(host_map_path());
  if (!map) {
    note(true, map.error().to_string() + "; srun keeps Slurm's order");
    return;
  }
  auto tp = fp::plugin::tp_in_ranks(*st.options.tp,
                                    static_cast<std::uint32_t>(st.config.gpus_per_node), K);
  if (!tp) {
    note(true, tp.error().message + "; srun keeps Slurm's order");
    return;
  }
  auto ring = fp::plugin::plan_launch(**map, nodes->second, K, *tp);
  if (!ring) {
    note(true, ring.error().message + "; srun keeps Slurm's order");
    return;
  }
  // A subset of the job (-N smaller than the job): the first hosts of the ring.
  if (counts.nodes && *counts.nodes < ring->hosts.size()) ring->hosts.resize(*counts.nodes);
  const char* tmp = std::getenv("TMPDIR");
  const std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/fabricplace-srun-" + job +
                           "-" + std::to_string(getpid()) + ".hosts";
  const auto text =
      fp::placement::write_rank_file(**map, *ring, fp::placement::RankFormat::kSlurm, {});
  if (auto w = fp::write_file_atomic(path, text); !w) {
    note(true, w.error().to_string() + "; srun keeps Slurm's order");
    return;
  }
  st.srun_hostfile = path;
  setenv("SLURM_HOSTFILE", path.c_str(), 1);
}

// The job's shape as sbatch/salloc will see it: the script's #SBATCH lines, then the
// command line.
fp::plugin::SubmitShape job_shape() {
  const auto args = own_args();
  auto shape = fp::plugin::submit_shape({}, args);
  if (shape.script)
    if (auto text = fp::read_file(*shape.script))
      shape = fp::plugin::submit_shape(fp::plugin::sbatch_directives(*text), args);
  return shape;
}

// ---- allocator context, exact mode --------------------------------------------------------

// sinfo's compact state for a node's state bits (node_state_string_compact), which
// placement::parse_slurm_state reads.
std::string compact_state(uint32_t st) {
  const uint32_t base = st & NODE_STATE_BASE;
  std::string s;
  if (st & NODE_STATE_MAINT)
    s = "maint";
  else if (st & NODE_STATE_DRAIN)
    s = (base == NODE_STATE_ALLOCATED || base == NODE_STATE_MIXED) ? "drng" : "drain";
  else if (st & NODE_STATE_COMPLETING)
    s = "comp";
  else if (st & NODE_STATE_PLANNED)
    s = "plnd";
  else if (base == NODE_STATE_IDLE)
    s = "idle";
  else if (base == NODE_STATE_ALLOCATED)
    s = "alloc";
  else if (base == NODE_STATE_MIXED)
    s = "mix";
  else if (base == NODE_STATE_DOWN)
    s = "down";
  else if (base == NODE_STATE_FUTURE)
    s = "futr";
  else
    s = "unk";
  if (st & NODE_STATE_NO_RESPOND) s += "*";
  if (st & NODE_STATE_POWERED_DOWN) s += "~";
  return s;
}

// The cluster's node states through the Slurm API of the host process (sbatch, salloc are
// linked with libslurm), looked up at run time so the plugin loads in any Slurm process.
fp::Result<std::string> node_states() {
  using load_fn = int (*)(time_t, node_info_msg_t**, uint16_t);
  using free_fn = void (*)(node_info_msg_t*);
  auto load = reinterpret_cast<load_fn>(dlsym(RTLD_DEFAULT, "slurm_load_node"));
  auto release = reinterpret_cast<free_fn>(dlsym(RTLD_DEFAULT, "slurm_free_node_info_msg"));
  if (!load || !release)
    return fp::fail(fp::ErrorCode::kUnsupported, "slurm_load_node is not available here");
  node_info_msg_t* info = nullptr;
  if (load(static_cast<time_t>(0), &info, SHOW_ALL) != 0 || !info)
    return fp::fail(fp::ErrorCode::kIo, "slurm_load_node failed");
  std::string text;
  for (uint32_t i = 0; i < info->record_count; ++i)
    if (const char* name = info->node_array[i].name)
      text += std::string(name) + " " + compact_state(info->node_array[i].node_state) + "\n";
  release(info);
  return text;
}

// Exact mode, in every --fabric-* callback of sbatch/salloc (they read SLURM_HOSTFILE after
// the callbacks, before init_post_opt): place the job now and pin its nodes. The file lives
// is removed, and SLURM_HOSTFILE unset, in init_post_opt, once sbatch or salloc has read it.
// Any fault: a message, and the job goes on unpinned (constrain mode).
void steer_allocation() {
  auto& st = state();
  if (!st.options.tp || mode() != Mode::kExact) return;
  const char* user_file = std::getenv("SLURM_HOSTFILE");
  if (user_file && st.srun_hostfile != user_file) return;  // the user's own nodes win
  if (program() != "sbatch") {
    // salloc hands its shell SLURM_DISTRIBUTION=arbitrary after the allocation, where no
    // hook can take it back, and the shell's sruns would inherit it.
    note_once("--fabric-mode=exact applies to sbatch; salloc uses constrain");
    return;
  }
  const auto shape = job_shape();
  if (shape.nodelist) return;
  auto states = node_states();
  if (!states) {
    note(true, states.error().message + "; exact mode falls back to constrain");
    return;
  }
  fp::plugin::ExactRequest r;
  r.fabric_path = st.config.fabric_path;
  r.states = *states;
  r.nodes = shape.nodes.value_or(1);
  r.gpus_per_node = static_cast<std::uint32_t>(st.config.gpus_per_node);
  r.tp = *st.options.tp;
  r.policy = st.options.policy.value_or(st.config.policy);
  auto hosts = fp::plugin::exact_hostfile(r);
  if (!hosts) {
    note(true, hosts.error().to_string() + "; exact mode falls back to constrain");
    return;
  }
  char cwd[4096];
  const std::string dir = getcwd(cwd, sizeof cwd) ? cwd : "/tmp";
  const std::string path = dir + "/.fabricplace-exact." + std::to_string(getpid()) + ".hosts";
  if (auto w = fp::write_file_atomic(path, *hosts); !w) {
    note(true, w.error().to_string() + "; exact mode falls back to constrain");
    return;
  }
  st.srun_hostfile = path;
  st.exact = true;
  setenv("SLURM_HOSTFILE", path.c_str(), 1);
}

int option_cb(int val, const char* optarg, int remote) {
  return guard("option", [&] {
    auto& st = state();
    const auto which = static_cast<Option>(val);
    if (auto r = fp::plugin::set_option(st.options, which, optarg); !r) {
      note(true, r.error().message);
      return remote ? 0 : -1;  // a bad value fails the command at once, never a launch
    }
    if (!remote && st.enabled && spank_context() == S_CTX_LOCAL) steer_srun();
    if (!remote && st.enabled && spank_context() == S_CTX_ALLOCATOR) steer_allocation();
    return 0;
  });
}

spank_option g_options[] = {
    {const_cast<char*>("fabric-tp"), const_cast<char*>("N"),
     const_cast<char*>("fabricplace: GPUs per tensor-parallel group; each group stays inside one "
                       "leaf switch and ranks follow the fabric ring"),
     1, static_cast<int>(Option::kTp), option_cb},
    {const_cast<char*>("fabric-mode"), const_cast<char*>("MODE"),
     const_cast<char*>("fabricplace: constrain (default), exact or off"), 1,
     static_cast<int>(Option::kMode), option_cb},
    {const_cast<char*>("fabric-policy"), const_cast<char*>("NAME"),
     const_cast<char*>("fabricplace: fabric (default), slurm-tree or first-fit"), 1,
     static_cast<int>(Option::kPolicy), option_cb},
    {const_cast<char*>("fabric-rankfile"), const_cast<char*>("PREFIX"),
     const_cast<char*>("fabricplace: rank files PREFIX.rankfile, .hosts, .torchrun.env, .json "
                       "(default: fabricplace.JOBID in the job's directory)"),
     1, static_cast<int>(Option::kRankfile), option_cb},
};

// ---- remote context (slurmstepd) ---------------------------------------------------------

std::optional<std::string> step_env(spank_t sp, const char* name) {
  char buf[8192];
  if (spank_getenv(sp, name, buf, sizeof buf) != ESPANK_SUCCESS || !*buf) return std::nullopt;
  return std::string(buf);
}

}  // namespace

extern "C" int slurm_spank_init(spank_t sp, int ac, char** av) {
  return guard("init", [&] {
    auto& st = state();
    std::vector<std::string> args(av, av + ac);
    auto cfg = fp::plugin::parse_plugin_args(args);
    if (!cfg) {
      // A bad plugstack.conf must not stop jobs: report and stand aside.
      note(true, "plugstack.conf: " + cfg.error().message + "; fabricplace is disabled");
      return 0;
    }
    st.config = *cfg;
    st.enabled = true;
    const auto ctx = spank_context();
    if (ctx == S_CTX_ALLOCATOR || ctx == S_CTX_LOCAL || ctx == S_CTX_REMOTE)
      for (auto& o : g_options)
        if (spank_option_register(sp, &o) != ESPANK_SUCCESS)
          note(true, std::string("cannot register --") + o.name);
    return 0;
  });
}

// Allocator (sbatch, salloc), after every option is parsed: check the request against the
// fabric (an impossible one is rejected here, with the reason), then hand it to slurmctld's
// job_submit.lua (constrain mode) through the job's SPANK environment.
extern "C" int slurm_spank_init_post_opt(spank_t sp, int, char**) {
  return guard("init_post_opt", [&] {
    auto& st = state();
    if (!st.enabled || spank_context() != S_CTX_ALLOCATOR || !st.options.tp || mode() == Mode::kOff)
      return 0;
    auto map = fp::plugin::load_host_map(host_map_path());
    if (!map) {
      note(true, map.error().to_string() + "; the job is submitted without fabricplace");
      return 0;
    }
    const auto shape = job_shape();
    const auto G = static_cast<std::uint32_t>(st.config.gpus_per_node);
    if (auto v = fp::plugin::validate_submission(**map, shape.nodes.value_or(1), G, *st.options.tp);
        !v) {
      note(true, v.error().message);
      return -1;  // the user asked for something impossible: reject at submission
    }
    if (st.exact) {
      // sbatch has read the pinned nodes (_opt_verify). The job must not inherit the file,
      // and the batch step undoes what a hostfile implies for its sruns (user_init):
      // FABRICPLACE_EXACT travels in the exported environment to say so.
      unsetenv("SLURM_HOSTFILE");
      std::remove(st.srun_hostfile.c_str());
      st.srun_hostfile.clear();
      setenv("FABRICPLACE_EXACT", shape.ntasks || shape.ntasks_per_node ? "tasks" : "notasks", 1);
    }
    if (mode() == Mode::kConstrain || (mode() == Mode::kExact && !st.exact)) {
      spank_job_control_setenv(sp, "FABRICPLACE_TP", std::to_string(*st.options.tp).c_str(), 1);
      spank_job_control_setenv(sp, "FABRICPLACE_GPUS_PER_NODE", std::to_string(G).c_str(), 1);
    }
    return 0;
  });
}

// Remote, once per node and step, as the job user in the job's directory: the ring of the
// step's hosts (kept for task_init), and on the step's first node the job's rank files when
// the step spans the whole job (the batch step, or an srun over every node).
extern "C" int slurm_spank_user_init(spank_t sp, int, char**) {
  return guard("user_init", [&] {
    auto& st = state();
    if (!st.enabled || !st.options.tp || mode() == Mode::kOff) return 0;
    auto map = fp::plugin::load_host_map(host_map_path());
    if (!map) {
      note(true, map.error().to_string() + "; tasks keep Slurm's order");
      return 0;
    }
    st.map = *map;
    const fp::placement::EnvFn env = [sp](const char* n) { return step_env(sp, n); };
    std::uint32_t job_id = 0, step_id = 0, node_id = 0, local_tasks = 0;
    spank_get_item(sp, S_JOB_ID, &job_id);
    spank_get_item(sp, S_JOB_STEPID, &step_id);
    spank_get_item(sp, S_JOB_NODEID, &node_id);
    spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &local_tasks);
    const auto gpus = static_cast<std::uint32_t>(st.config.gpus_per_node);

    // The step's ring, for the tasks here (task_init): K = this node's task count.
    const auto step_nodes = env("SLURM_STEP_NODELIST");
    if (step_nodes && local_tasks > 0 && step_id != SLURM_BATCH_SCRIPT) {
      if (auto tp = fp::plugin::tp_in_ranks(*st.options.tp, gpus, local_tasks); !tp) {
        note(false, tp.error().message + "; no FABRICPLACE_* task variables");
      } else if (auto ring = fp::plugin::plan_launch(**map, *step_nodes, local_tasks, *tp); !ring) {
        note(true, ring.error().message + "; no FABRICPLACE_* task variables");
      } else {
        st.ring = std::move(*ring);
      }
    }

    // Exact mode pinned the nodes with a hostfile, which made sbatch set an arbitrary task
    // distribution (and one task per line when no task count was given): take both back, so
    // the batch script's sruns lay tasks out as without fabricplace.
    if (step_id == SLURM_BATCH_SCRIPT)
      if (const auto exact = env("FABRICPLACE_EXACT")) {
        spank_unsetenv(sp, "SLURM_DISTRIBUTION");
        spank_unsetenv(sp, "SLURM_ARBITRARY_NODELIST");
        if (*exact == "notasks") {
          spank_unsetenv(sp, "SLURM_NTASKS");
          spank_unsetenv(sp, "SLURM_NPROCS");
        }
        spank_unsetenv(sp, "FABRICPLACE_EXACT");
      }

    // The job's rank files, once per job-wide step, from its first node.
    const auto job_nodes = env("SLURM_JOB_NODELIST");
    const bool job_wide =
        step_id == SLURM_BATCH_SCRIPT || (step_nodes && job_nodes && *step_nodes == *job_nodes);
    if (node_id != 0 || !job_wide || !job_nodes) return 0;
    auto k = fp::placement::slurm_tasks_per_node(env);
    if (!k) {
      note(false, k.error().message + "; no rank files written");
      return 0;
    }
    auto tp = fp::plugin::tp_in_ranks(*st.options.tp, gpus, k->first);
    if (!tp) {
      note(true, tp.error().message + "; no rank files written");
      return 0;
    }
    auto ring = fp::plugin::plan_launch(**map, *job_nodes, k->first, *tp);
    if (!ring) {
      note(true, ring.error().message + "; no rank files written");
      return 0;
    }
    const std::string prefix =
        st.options.rankfile.value_or("fabricplace." + std::to_string(job_id));
    fp::placement::RankFileOptions ro;
    ro.cores.cores = static_cast<std::uint32_t>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
    ro.origin = (*map)->origin;
    if (auto w = fp::plugin::write_launch_files(**map, *ring, prefix, ro); !w)
      note(true, w.error().to_string() + "; rank files not written");
    return 0;
  });
}

// Remote, per task (forked from the step daemon after user_init): the task's place in the
// fabric ring of its step.
extern "C" int slurm_spank_task_init(spank_t sp, int, char**) {
  return guard("task_init", [&] {
    auto& st = state();
    if (!st.enabled || !st.ring || !st.map) return 0;
    int local_id = 0;
    if (spank_get_item(sp, S_TASK_ID, &local_id) != ESPANK_SUCCESS) return 0;
    const auto host = step_env(sp, "SLURMD_NODENAME");
    if (!host) return 0;
    const auto place =
        fp::plugin::task_place(*st.map, *st.ring, *host, static_cast<std::uint32_t>(local_id));
    if (!place) return 0;
    spank_setenv(sp, "FABRICPLACE_RING_RANK", std::to_string(place->ring_rank).c_str(), 1);
    spank_setenv(sp, "FABRICPLACE_RING_SIZE", std::to_string(st.ring->ranks()).c_str(), 1);
    spank_setenv(sp, "FABRICPLACE_TP_GROUP", std::to_string(place->tp_group).c_str(), 1);
    spank_setenv(sp, "FABRICPLACE_TP_RANK", std::to_string(place->tp_rank).c_str(), 1);
    return 0;
  });
}

extern "C" int slurm_spank_exit(spank_t, int, char**) {
  return guard("exit", [&] {
    auto& st = state();
    if (!st.srun_hostfile.empty() && spank_context() == S_CTX_LOCAL) {
      std::remove(st.srun_hostfile.c_str());
      st.srun_hostfile.clear();
    }
    return 0;
  });
}
