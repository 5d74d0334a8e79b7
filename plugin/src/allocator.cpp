// SPDX-License-Identifier: GPL-2.0-or-later
// sbatch and salloc (SPANK allocator context): check the request against the fabric, hand
// it to job_submit.lua (constrain) or pin the engine's nodes (exact).
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "fabricplace/common/file_io.hpp"
#include "fabricplace/common/hostlist.hpp"
#include "fabricplace/common/owned_dir.hpp"
#include "fabricplace/common/limits.hpp"
#include "fabricplace/common/strings.hpp"
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

// The running jobs as `squeue -h -t R -o '%i %N'` prints them: "jobid hostlist" per RUNNING
// job, the id spelt as squeue's %i spells it (4711, 4711_3 for an array task, 4711+1 for a
// heterogeneous job's component), through the Slurm API as node_states() reads the nodes.
// The text is bounded like an input file.
fp::Result<std::string> running_jobs() {
  using load_fn = int (*)(time_t, job_info_msg_t**, uint16_t);
  using free_fn = void (*)(job_info_msg_t*);
  auto load = reinterpret_cast<load_fn>(dlsym(RTLD_DEFAULT, "slurm_load_jobs"));
  auto release = reinterpret_cast<free_fn>(dlsym(RTLD_DEFAULT, "slurm_free_job_info_msg"));
  if (!load || !release)
    return fp::fail(fp::ErrorCode::kUnsupported, "slurm_load_jobs is not available here");
  job_info_msg_t* info = nullptr;
  if (load(static_cast<time_t>(0), &info, SHOW_ALL) != 0 || !info)
    return fp::fail(fp::ErrorCode::kIo, "slurm_load_jobs failed");
  const std::unique_ptr<job_info_msg_t, free_fn> owned(info, release);
  std::string text;
  for (uint32_t i = 0; i < info->record_count; ++i) {
    const auto& j = info->job_array[i];
    if ((j.job_state & JOB_STATE_BASE) != JOB_RUNNING || !j.nodes || !*j.nodes) continue;
    if (j.array_task_id != NO_VAL)
      text += std::to_string(j.array_job_id) + "_" + std::to_string(j.array_task_id);
    else if (j.het_job_id)
      text += std::to_string(j.het_job_id) + "+" + std::to_string(j.het_job_offset);
    else
      text += std::to_string(j.job_id);
    text += ' ';
    text += j.nodes;
    text += '\n';
    if (text.size() > fp::limits().input_bytes)
      return fp::fail(fp::ErrorCode::kIo, "the running jobs are more than " +
                                              std::to_string(fp::limits().input_bytes >> 20) +
                                              " MiB of text (FABRICPLACE_MAX_INPUT_MB)");
  }
  return text;
}

// The request as it will be when sbatch has parsed everything: --fabric-tp, --fabric-ep
// and --fabric-mode from #SBATCH lines and the command line (the callbacks run in that
// order, so an early one does not know the later values), else the options seen so far.
struct Request {
  Groups groups;
  Mode mode = Mode::kConstrain;
  SubmitShape shape;
};
Request final_request() {
  auto& st = state();
  Request r;
  r.shape = job_shape();
  r.groups = st.options.groups();
  if (r.shape.fabric_tp) {
    JobOptions o;
    if (set_option(o, Option::kTp, r.shape.fabric_tp->c_str())) r.groups.tp = o.tp;
  }
  if (r.shape.fabric_ep) {
    JobOptions o;
    if (set_option(o, Option::kEp, r.shape.fabric_ep->c_str())) r.groups.ep = o.ep;
  }
  r.mode = mode();
  if (r.shape.fabric_mode)
    if (auto m = parse_mode(*r.shape.fabric_mode)) r.mode = *m;
  return r;
}

// Takes back a pin (the user's later options turned exact mode off).
void unpin() {
  auto& st = state();
  if (!st.exact) return;
  if (const char* hf = std::getenv("SLURM_HOSTFILE"); hf && st.srun_hostfile == hf)
    unsetenv("SLURM_HOSTFILE");
  std::remove(st.srun_hostfile.c_str());
  st.srun_hostfile.clear();
  st.exact_nodes.clear();
  st.exact = false;
}

// Where Slurm keeps --fabric-tp and --fabric-ep for the job's own sbatch, salloc and srun
// (spank.c's option variables: SLURM_SPANK_ + _SLURM_SPANK_OPTION_<plugin>_<option>, '-'
// as '_').
constexpr const char* kInheritedTpVar = "SLURM_SPANK__SLURM_SPANK_OPTION_fabricplace_fabric_tp";
constexpr const char* kInheritedEpVar = "SLURM_SPANK__SLURM_SPANK_OPTION_fabricplace_fabric_ep";

// topology/block (plugstack.conf topology=block, Slurm 24.05+): the group's --segment,
// for etc/cli_filter.lua to apply, in this process's environment (FABRICPLACE_SEGMENT):
// cli_filter's pre_submit runs after every option callback and before the job is built, and
// nothing else on the way to slurmctld can set --segment before Slurm 25.11.2. Worked out
// again in every callback, as a later option may change the answer; none for a pinned job
// (Slurm refuses a node list with a segment).
void segment_env() {
  auto& st = state();
  unsetenv("FABRICPLACE_SEGMENT");
  if (st.config.topology != "block") return;
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(24, 5, 0)
  const auto req = final_request();
  if (!req.groups.any() || req.mode == Mode::kOff || req.shape.het || req.shape.nodelist ||
      st.exact || !st.validated ||
      req.shape.segment)  // the job's own segment: cli_filter.lua keeps it
    return;
  const auto s = block_segment(req.shape.nodes_range ? std::nullopt : req.shape.node_count(),
                               static_cast<std::uint32_t>(st.config.gpus_per_node), req.groups);
  if (!s.nodes) {
    note_verbose("topology/block: no --segment (" + s.why_not + ")");
    return;
  }
  setenv("FABRICPLACE_SEGMENT", std::to_string(*s.nodes).c_str(), 1);
#endif
}

// The request checked and, in exact mode, pinned: allocator_steer's work.
int steer_request() {
  auto& st = state();
  auto req = final_request();
  if (!req.groups.any() || req.mode == Mode::kOff) {
    unpin();
    return 0;
  }
  auto map = launch_host_map();
  if (!map) {
    note_once(map.error().to_string() + "; the job is submitted without fabricplace", true);
    return 0;
  }
  const auto G = static_cast<std::uint32_t>(st.config.gpus_per_node);
  if (!st.validated) {
    auto v = validate_submission(**map, req.shape.node_count(), G, req.groups);
    if (!v) {
      // An sbatch or salloc inside a steered job inherits --fabric-tp and --fabric-ep through
      // Slurm's SPANK option variables: what was not asked for here never fails the
      // submission. An inherited option that does not fit is left out, said once; what this
      // command asked for is then checked alone.
      const bool tp_inherited =
          req.groups.tp && !req.shape.fabric_tp && std::getenv(kInheritedTpVar);
      const bool ep_inherited =
          req.groups.ep && !req.shape.fabric_ep && std::getenv(kInheritedEpVar);
      if (tp_inherited || ep_inherited) {
        // What this command asked for must fit on its own: if it does not, that is the error.
        Groups own = req.groups;
        if (tp_inherited) own.tp.reset();
        if (ep_inherited) own.ep.reset();
        if (own.any())
          if (auto alone = validate_submission(**map, req.shape.node_count(), G, own); !alone) {
            note(true, alone.error().message);
            return -1;
          }
        std::string what;
        if (tp_inherited) {
          what = "--fabric-tp " + std::to_string(*req.groups.tp);
          req.groups.tp.reset();
          st.options.tp.reset();
        }
        if (ep_inherited) {
          what += (what.empty() ? "" : " ") + std::string("--fabric-ep ") +
                  std::to_string(*req.groups.ep);
          req.groups.ep.reset();
          st.options.ep.reset();
        }
        const std::string why = what + " inherited from the enclosing job does not fit this one (" +
                                v.error().message + ")";
        if (!req.groups.any()) {
          note_once(why + "; it is submitted without fabricplace");
          unpin();
          return 0;
        }
        note_once(why + "; it is left out");
        v = validate_submission(**map, req.shape.node_count(), G, req.groups);
      }
      if (!v) {
        note(true, v.error().message);
        return -1;  // the user asked for something impossible: reject at submission
      }
    }
    st.validated = true;
  }
  if (req.mode != Mode::kExact || req.shape.nodelist || req.shape.het) {
    unpin();
    return 0;
  }
  const char* user_file = std::getenv("SLURM_HOSTFILE");
  if (user_file && st.srun_hostfile != user_file) return 0;  // the user's own nodes win
  if (st.exact) return 0;                                    // pinned already
  if (program() != "sbatch") {
    // salloc hands its shell SLURM_DISTRIBUTION=arbitrary after the allocation, where no
    // hook can take it back, and the shell's sruns would inherit it.
    note_once("--fabric-mode=exact applies to sbatch; salloc uses constrain");
    return 0;
  }
  auto states = node_states();
  if (!states) {
    note_once(states.error().message + "; exact mode falls back to constrain", true);
    return 0;
  }
  // The node count must be known (-N, or -n with --ntasks-per-node): with -n alone Slurm
  // decides how many nodes, and the pin would be a guess.
  // Exact mode pins N hosts with K tasks each: it needs a fixed node count and a whole
  // number of tasks per node (else Slurm's own layout, which a hostfile would replace).
  const auto N = req.shape.node_count();
  if (!N || req.shape.nodes_range ||
      (req.shape.ntasks && !req.shape.nodes && !req.shape.ntasks_per_node)) {
    note_once("exact mode needs a fixed node count (-N); constrain mode instead");
    return 0;
  }
  if (req.shape.ntasks && !req.shape.ntasks_per_node && *req.shape.ntasks % *N != 0) {
    note_once("exact mode needs the same number of tasks on every node; constrain mode instead");
    return 0;
  }
  // Running jobs that cannot be loaded are no reason to fail the submission: said once, and
  // the job is placed without them.
  std::string running;
  if (auto jobs = running_jobs())
    running = std::move(*jobs);
  else
    note_once(jobs.error().message + "; exact mode places without the running jobs", true);
  ExactRequest r;
  r.fabric_path = st.config.fabric_path;
  r.states = *states;
  r.running = std::move(running);
  r.nodes = *N;
  r.gpus_per_node = G;
  r.groups = req.groups;
  r.policy = st.options.policy.value_or(st.config.policy);
  auto placed = exact_hostfile(r);
  if (!placed) {
    // No placement now (a busy cluster) is a normal outcome, not a fault.
    note_once(placed.error().to_string() + "; exact mode falls back to constrain",
              placed.error().code != fp::ErrorCode::kUsage);
    return 0;
  }
  note_verbose("exact mode: " + std::to_string(placed->running_jobs) + " running job(s) on " +
               std::to_string(placed->running_hosts) + " host(s) read from slurmctld");
  for (const auto& n : placed->notes) note_verbose(n);
  const std::string& hosts = placed->hostfile;
  if (st.config.topology == "block") {
    // topology/block keeps a job inside one block of its size, over as few base blocks as
    // its size needs, and refuses a node list together with a --segment of fewer nodes than
    // the job: only a pin inside one base block, without such a segment, is sure to be
    // admitted.
    const bool own_segment = req.shape.segment && *req.shape.segment > 0 && *req.shape.segment < *N;
    if (own_segment || !in_one_block(**map, hosts)) {
      const auto seg = block_segment(*N, G, req.groups);
      const std::string one(fp::fabric::block_noun((*map)->blocks.kind));
      note_once(
          std::string(own_segment
                          ? "exact mode on topology/block pins no job that has its own "
                            "--segment (Slurm refuses a node list with one)"
                          : "exact mode on topology/block pins only a job inside one " + one) +
          "; constrain mode instead" +
          (!own_segment && seg.nodes
               ? " (each " + std::string(req.groups.kept(G)) + " group inside one " + one +
                     " through --segment=" + std::to_string(*seg.nodes) + ")"
               : std::string()));
      return 0;
    }
  }
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 11, 0)
  // Since 23.11 sbatch refuses -N with a hostfile ("--nodes is incompatible with
  // --distribution=arbitrary"), and it has no other variable that names nodes: the pin goes
  // to job_submit.lua in the job's SPANK environment (FABRICPLACE_NODES, set in
  // init_post_opt), which makes it the job's node list (docs/slurm.md, "Slurm versions").
  std::vector<std::string> names;
  for (const auto& h : fp::str::split(hosts, '\n'))
    if (!h.empty()) names.emplace_back(h);
  st.exact_nodes = fp::hostlist::compress(names);
  st.exact = true;
#else
  // One line per task: sbatch wants at least as many lines as tasks (-n, --ntasks-per-node).
  std::uint64_t per_node = 1;
  if (req.shape.ntasks_per_node)
    per_node = *req.shape.ntasks_per_node;
  else if (req.shape.ntasks)
    per_node = (*req.shape.ntasks + *N - 1) / *N;
  // Bounded: a hostfile of more lines than any job has tasks is a request Slurm refuses
  // anyway; building it would only eat the submitting host's memory.
  constexpr std::uint64_t kMaxLines = std::uint64_t{1} << 22;
  if (per_node * *N > kMaxLines) {
    note_once("exact mode: " + std::to_string(per_node * *N) +
              " tasks are more than a hostfile is written for; constrain mode instead");
    return 0;
  }
  std::string lines;
  for (const auto& h : fp::str::split(hosts, '\n'))
    if (!h.empty())
      for (std::uint64_t k = 0; k < per_node; ++k) lines += std::string(h) + "\n";
  char cwd[4096];
  const std::string dir = getcwd(cwd, sizeof cwd) ? cwd : "/tmp";
  const std::string path = dir + "/.fabricplace-exact." + std::to_string(getpid()) + ".hosts";
  // Our own name in the job's directory: a link planted there is replaced, never followed.
  if (auto w = fp::write_file_by_name(path, lines, 0644, fp::Durability::kAtomic); !w) {
    note_once(w.error().to_string() + "; exact mode falls back to constrain", true);
    return 0;
  }
  st.srun_hostfile = path;
  st.exact = true;
  setenv("SLURM_HOSTFILE", path.c_str(), 1);
#endif
  return 0;
}

}  // namespace

// In every --fabric-* callback of sbatch/salloc: check the request against the fabric (an
// impossible one fails the command here, which Slurm honours even for an `optional`
// plugin, where a failing init_post_opt is ignored), then, in exact mode, place the job now
// and pin its nodes (sbatch reads SLURM_HOSTFILE after the callbacks, before
// init_post_opt). The file is removed, and SLURM_HOSTFILE unset, in init_post_opt, once
// sbatch has read it. Any fault: a message, and the job goes on unpinned (constrain mode).
// On topology/block, then the segment for cli_filter.lua.
int allocator_steer() {
  const int rc = steer_request();
  segment_env();
  return rc;
}

// Allocator (sbatch, salloc), after every option is parsed: hand the request to slurmctld's
// job_submit.lua (constrain mode) through the job's SPANK environment, and clean up a pin.
int allocator_post_opt(spank_t sp) {
  auto& st = state();
  if (!st.enabled || spank_context() != S_CTX_ALLOCATOR) return 0;
  // cli_filter.lua has read FABRICPLACE_SEGMENT (its pre_submit ran before this hook); the
  // job's environment, built after it, must not carry it to the job's own sbatch and srun.
  std::string segment;
  if (const char* s = std::getenv("FABRICPLACE_SEGMENT")) segment = s;
  unsetenv("FABRICPLACE_SEGMENT");
  const auto req = final_request();
  if (st.exact && !st.exact_nodes.empty()) {
    spank_job_control_setenv(sp, "FABRICPLACE_NODES", st.exact_nodes.c_str(), 1);
    return 0;
  }
  if (st.exact) {
    // sbatch has read the pinned nodes (_opt_verify). The job must not inherit the file,
    // and the batch step undoes what a hostfile implies for its sruns (user_init):
    // FABRICPLACE_EXACT travels in the exported environment to say so.
    unsetenv("SLURM_HOSTFILE");
    std::remove(st.srun_hostfile.c_str());
    st.srun_hostfile.clear();
    setenv("FABRICPLACE_EXACT", req.shape.ntasks || req.shape.ntasks_per_node ? "tasks" : "notasks",
           1);
  }
  if (!req.groups.any() || req.mode == Mode::kOff || req.shape.het || !st.validated) return 0;
  if (req.mode == Mode::kConstrain || (req.mode == Mode::kExact && !st.exact)) {
    const auto G = static_cast<std::uint32_t>(st.config.gpus_per_node);
    // The groups for job_submit.lua: TP (a node's GPUs when only EP was asked for) and EP.
    spank_job_control_setenv(sp, "FABRICPLACE_TP",
                             std::to_string(req.groups.tp.value_or(G)).c_str(), 1);
    if (req.groups.ep)
      spank_job_control_setenv(sp, "FABRICPLACE_EP", std::to_string(*req.groups.ep).c_str(), 1);
    spank_job_control_setenv(sp, "FABRICPLACE_GPUS_PER_NODE", std::to_string(G).c_str(), 1);
    // The `slurm sync` generation of the files this submit host read: job_submit.lua
    // compares it with its own table's (a node whose files were not copied after a sync).
    if (auto map = launch_host_map(); map && !(*map)->generation.empty())
      spank_job_control_setenv(sp, "FABRICPLACE_GENERATION", (*map)->generation.c_str(), 1);
    // topology/block: job_submit.lua makes no per-leaf counts there (Slurm refuses them);
    // the segment cli_filter.lua was handed, for its log.
    if (st.config.topology == "block") {
      spank_job_control_setenv(sp, "FABRICPLACE_TOPOLOGY", "block", 1);
      if (!segment.empty()) spank_job_control_setenv(sp, "FABRICPLACE_SEGMENT", segment.c_str(), 1);
    }
  }
  return 0;
}

}  // namespace fabricplace::plugin::spank
