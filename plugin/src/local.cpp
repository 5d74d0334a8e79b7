// SPDX-License-Identifier: GPL-2.0-or-later
// srun (SPANK local context) inside an allocation: the tasks in the fabric's ring order.
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "fabricplace/common/file_io.hpp"
#include "fabricplace/common/hostlist.hpp"
#include "fabricplace/common/owned_dir.hpp"
#include "fabricplace/common/strings.hpp"
#include "fabricplace/placement/slurm_env.hpp"
#include "launch.hpp"
#include "spank_common.hpp"

namespace fabricplace::plugin::spank {
namespace {

// Whether slurmctld has heard from `host` since it started: a node it has just recovered
// from its state (a restart: every node UNKNOWN until slurmd registers again, a few
// seconds) or one that stopped responding cannot take a step with an explicit host list
// yet: slurmctld refuses it at once ("Memory required by task is not available"), where
// without the hostfile srun waits until the node answers. Read through the host process's
// Slurm API (srun links libslurm): one small RPC. Unknown (the RPC failed): true, so the
// plugin behaves as before.
bool node_answers(const std::string& host) {
  using load_fn = int (*)(node_info_msg_t**, char*, uint16_t);
  using free_fn = void (*)(node_info_msg_t*);
  auto load = reinterpret_cast<load_fn>(dlsym(RTLD_DEFAULT, "slurm_load_node_single"));
  auto release = reinterpret_cast<free_fn>(dlsym(RTLD_DEFAULT, "slurm_free_node_info_msg"));
  if (!load || !release) return true;
  node_info_msg_t* info = nullptr;
  std::string name = host;
  if (load(&info, name.data(), SHOW_ALL) != 0 || !info) return true;
  bool answers = true;
  for (uint32_t i = 0; i < info->record_count; ++i) {
    const uint32_t st = info->node_array[i].node_state;
    if ((st & NODE_STATE_BASE) == NODE_STATE_UNKNOWN || (st & NODE_STATE_NO_RESPOND))
      answers = false;
  }
  release(info);
  return answers;
}

// A hostfile an earlier callback of this srun wrote: unset and removed (Slurm's order).
void take_back_hostfile() {
  auto& st = state();
  if (st.srun_hostfile.empty()) return;
  if (const char* hf = std::getenv("SLURM_HOSTFILE"); hf && st.srun_hostfile == hf)
    unsetenv("SLURM_HOSTFILE");
  std::remove(st.srun_hostfile.c_str());
  st.srun_hostfile.clear();
}

}  // namespace

// Messages are said once per srun: srun runs the option callbacks more than once.
// srun reads SLURM_HOSTFILE after the option callbacks (opt.c _opt_verify) and before
// spank_init_post_opt, so this runs in every --fabric-* callback with what is known then:
// srun's own command line (all of it, from /proc) and the job's environment. The file lists
// the job's hosts in ring order, K lines each; srun runs the first ntasks lines.
void local_steer_srun() {
  auto& st = state();
  if (!st.options.groups().any() || mode() == Mode::kOff || st.srun_aside) return;
  // Which host map this srun read, for the step's nodes: one that reads another version
  // (the file replaced meanwhile) sets no ring variables from it (remote.cpp).
  if (launch_host_map())
    setenv("FABRICPLACE_HOSTMAP_ID", loaded_host_map_id(host_map_path()).c_str(), 1);
  const char* job = std::getenv("SLURM_JOB_ID");
  if (!job) return;  // srun outside an allocation: Slurm allocates; nothing to order yet
  const char* user_file = std::getenv("SLURM_HOSTFILE");
  if (user_file && st.srun_hostfile != user_file) return;  // the user's own order wins
  const auto counts = parse_srun_args(own_args());
  // The user chose the hosts (-w), the layout (-m), or this is a heterogeneous job (the
  // file could hold only one component's hosts): stand aside.
  if (counts.nodelist || counts.distribution || counts.het || std::getenv("SLURM_HET_SIZE")) return;
  const fp::placement::EnvFn env = [](const char* n) -> std::optional<std::string> {
    const char* v = std::getenv(n);
    return v && *v ? std::optional<std::string>(v) : std::nullopt;
  };
  auto nodes = fp::placement::slurm_job_nodes(env);
  if (!nodes) return;
  auto stand_aside = [](const std::string& why) { note_once(why + "; srun keeps Slurm's order"); };
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 11, 0)
  // Since 23.11 srun refuses -N on its command line together with a node order
  // ("--nodes is incompatible with --distribution=arbitrary"; SLURM_NNODES from the
  // allocation is allowed): a step with -N runs in Slurm's order rather than not at all.
  if (counts.nodes)
    return stand_aside(
        "srun -N with a node order is refused by Slurm 23.11+ (--nodes is "
        "incompatible with --distribution=arbitrary); leave -N out (-n, "
        "--ntasks-per-node) for the ring order");
#endif
  // The step's node count and ranks per node: srun's command line first, else the job's.
  auto job_hosts = fp::hostlist::expand(nodes->second);
  if (!job_hosts || job_hosts->empty()) return;  // bounded by common's hostlist limit
  if (job_hosts->size() > std::numeric_limits<std::uint32_t>::max()) return;
  std::uint32_t N = static_cast<std::uint32_t>(job_hosts->size());
  if (counts.nodes)
    N = std::min(N, *counts.nodes);
  else if (counts.ntasks && counts.ntasks_per_node && *counts.ntasks % *counts.ntasks_per_node == 0)
    N = std::min(N, *counts.ntasks / *counts.ntasks_per_node);
  std::uint32_t K = 0;
  if (counts.ntasks_per_node) {
    K = *counts.ntasks_per_node;
  } else if (counts.ntasks) {
    if (*counts.ntasks % N != 0)
      return stand_aside("srun -n " + std::to_string(*counts.ntasks) + " on " + std::to_string(N) +
                         " nodes is not a whole number of tasks per node");
    K = *counts.ntasks / N;
  } else {
    auto k = fp::placement::slurm_tasks_per_node(env);
    if (!k) return stand_aside(k.error().message);
    K = k->first;
  }
  // srun runs as many tasks as -n says, else the job's SLURM_NTASKS, else one line each:
  // the file must hold exactly that many lines.
  std::uint64_t ntasks = std::uint64_t{N} * K;
  if (counts.ntasks)
    ntasks = *counts.ntasks;
  else if (auto v = env("SLURM_NTASKS"))
    if (auto n = fp::str::parse_uint(*v, 1u << 30)) ntasks = *n;
  if (ntasks != std::uint64_t{N} * K)
    return stand_aside("srun would run " + std::to_string(ntasks) + " tasks, not " +
                       std::to_string(N) + " nodes x " + std::to_string(K));
  auto map = launch_host_map();
  if (!map) {
    note_once(map.error().to_string() + "; srun keeps Slurm's order", true);
    return;
  }
  const auto G = static_cast<std::uint32_t>(st.config.gpus_per_node);
  if (auto r = group_ranks(st.options.groups(), G, K); !r) {
    note_once(r.error().message + "; srun keeps Slurm's order", true);
    return;
  }
  auto ring = plan_launch(**map, nodes->second, st.options.groups(), G, K);
  if (!ring) {
    note_once(ring.error().message + "; srun keeps Slurm's order",
              ring.error().code != fp::ErrorCode::kUsage);
    return;
  }
  // A subset of the job (-N smaller than the job): the first hosts of the ring.
  if (N < ring->hosts.size()) ring->hosts.resize(N);
  // The step's first host stands for all: slurmctld re-registers every node at once after a
  // restart. A node it has not heard from would make the hostfile fail the step.
  if (const auto& first = (**map).names[fp::fabric::idx(ring->hosts.front())];
      !node_answers(first)) {
    take_back_hostfile();
    st.srun_aside = true;
    return stand_aside(first +
                       " has not answered slurmctld yet (slurmctld restarted, or the "
                       "node is not responding)");
  }
  const char* tmp = std::getenv("TMPDIR");
  const std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/fabricplace-srun-" + job +
                           "-" + std::to_string(getpid()) + ".hosts";
  const auto text =
      fp::placement::write_rank_file(**map, *ring, fp::placement::RankFormat::kSlurm, {});
  // A name of ours in a directory that is not (/tmp): a link planted there is replaced, never
  // followed (another user's file there is an error, and srun keeps Slurm's order).
  if (auto w = fp::write_file_by_name(path, text, 0644, fp::Durability::kAtomic); !w) {
    // Slurm's order, as the message says, for the rest of this srun: no later callback
    // retries (a disk with room again would make the message false), and a hostfile an
    // earlier callback wrote is taken back.
    note_once(w.error().to_string() + "; srun keeps Slurm's order", true);
    take_back_hostfile();
    st.srun_aside = true;
    return;
  }
  st.srun_hostfile = path;
  setenv("SLURM_HOSTFILE", path.c_str(), 1);
}

void local_exit() {
  auto& st = state();
  if (!st.srun_hostfile.empty()) {
    std::remove(st.srun_hostfile.c_str());
    st.srun_hostfile.clear();
  }
}

}  // namespace fabricplace::plugin::spank
