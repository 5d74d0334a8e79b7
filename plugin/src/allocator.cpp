// sbatch and salloc (SPANK allocator context): check the request against the fabric, hand
// it to job_submit.lua (constrain) or pin the engine's nodes (exact).
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "fabricplace/common/file_io.hpp"
#include "launch.hpp"
#include "spank_common.hpp"

namespace fabricplace::plugin::spank {
namespace {

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
}  // namespace

void allocator_steer() {
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
  ExactRequest r;
  r.fabric_path = st.config.fabric_path;
  r.states = *states;
  r.nodes = shape.nodes.value_or(1);
  r.gpus_per_node = static_cast<std::uint32_t>(st.config.gpus_per_node);
  r.tp = *st.options.tp;
  r.policy = st.options.policy.value_or(st.config.policy);
  auto hosts = exact_hostfile(r);
  if (!hosts) {
    // No placement now (a busy cluster) is a normal outcome, not a fault.
    note(hosts.error().code != fp::ErrorCode::kUsage,
         hosts.error().to_string() + "; exact mode falls back to constrain");
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

// Allocator (sbatch, salloc), after every option is parsed: check the request against the
// fabric (an impossible one is rejected here, with the reason), then hand it to slurmctld's
// job_submit.lua (constrain mode) through the job's SPANK environment.
int allocator_post_opt(spank_t sp) {
  auto& st = state();
  if (!st.enabled || spank_context() != S_CTX_ALLOCATOR || !st.options.tp || mode() == Mode::kOff)
    return 0;
  auto map = load_host_map(host_map_path());
  if (!map) {
    note(true, map.error().to_string() + "; the job is submitted without fabricplace");
    return 0;
  }
  const auto shape = job_shape();
  const auto G = static_cast<std::uint32_t>(st.config.gpus_per_node);
  if (auto v = validate_submission(**map, shape.nodes.value_or(1), G, *st.options.tp); !v) {
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
}

}  // namespace fabricplace::plugin::spank
