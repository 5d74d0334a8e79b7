// SPDX-License-Identifier: GPL-2.0-or-later
// What the SPANK hooks share (plugin/src/dispatch.cpp dispatches; one file per context:
// local.cpp for srun, allocator.cpp for sbatch/salloc, remote.cpp for slurmstepd). The
// logic lives in the Slurm-free core (config, options, launch, submit); these files only
// talk to Slurm.
#pragma once

extern "C" {
#include <slurm/slurm.h>
#include <slurm/spank.h>
}

#include <exception>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "config.hpp"
#include "fabricplace/placement/rank_layout.hpp"
#include "options.hpp"
#include "submit.hpp"

namespace fabricplace::plugin::spank {

namespace fp = fabricplace;

struct State {
  bool enabled = false;  ///< plugstack.conf parsed
  PluginConfig config;
  JobOptions options;
  std::string srun_hostfile;  ///< the SLURM_HOSTFILE this process wrote (srun, exact mode)
  bool srun_aside = false;    ///< srun could not write its hostfile: Slurm's order, for good
  bool exact = false;         ///< exact mode pinned the nodes (allocator)
  std::string exact_nodes;    ///< Slurm 23.11+: the pin, for job_submit.lua (FABRICPLACE_NODES)
  bool validated = false;     ///< the request passed the submission checks (allocator)
  // Remote: the ring of this step, computed in user_init, read by task_init (forked after).
  std::optional<fp::placement::RankLayout> ring;
  const fp::placement::HostMap* map = nullptr;
  // Remote, when srun ran the step's tasks in ring order (its hostfile): a task's ring rank
  // is its task id; groups of these many ranks, of `order_size` ranks in all.
  std::optional<GroupRanks> order;
  std::uint32_t order_size = 0;
  // Remote, from hwloc_xml=: per local rank of this node, its GPU and nearest HCA.
  std::vector<fp::placement::LocalRank> local;
};
/// The plugin's state in this process.
State& state();

/// One line to Slurm's log (and the plugstack log= file, if any).
void note(bool error, const std::string& msg);
/// A line at Slurm's verbose level (`sbatch -v` shows it), and in the log= file: what the
/// plugin read and decided, for an admin following a submission.
void note_verbose(const std::string& msg);
/// note(), once per process for a given message (option callbacks run several times).
void note_once(const std::string& msg, bool error = false);

/// What guard() says when even a message could not be built (out of memory): fixed text,
/// no allocation of ours.
void note_internal_error(const char* hook, const char* what) noexcept;

/// Runs a hook body; an exception (std::bad_alloc included) becomes one logged error and the
/// fallback (return 0): nothing crosses extern "C", and a failure to build the message is
/// caught too. A hook returns 0 or -1, nothing else (docs/slurm.md, "Slurm versions"): -1
/// only where the user asked for something invalid or impossible (option_cb, allocator_steer),
/// which Slurm 22.05 to 26.05 all treat as the error it is; since 25.05 any other non-zero
/// value (an ESPANK_* code, say) would be one too, so none is passed through.
template <class Fn>
int guard(const char* hook, Fn&& fn) noexcept {
  try {
    return fn() == 0 ? 0 : -1;
  } catch (const std::bad_alloc&) {
    note_internal_error(hook, "out of memory");
  } catch (const std::exception& e) {
    try {
      note(true, std::string(hook) + ": internal error: " + e.what() +
                     "; continuing without fabricplace (Slurm's own order)");
    } catch (...) {
      note_internal_error(hook, "an exception");
    }
  } catch (...) {
    note_internal_error(hook, "an unknown exception");
  }
  return 0;
}

/// The client's program name ("sbatch", "salloc", "srun"), its own arguments (argv
/// without argv[0], from /proc/self/cmdline), the job's shape as sbatch will see it.
std::string program();
std::vector<std::string> own_args();
SubmitShape job_shape();
/// The --fabric-mode in force (the option, else plugstack.conf's mode=).
Mode mode();
std::string host_map_path();
/// The host map for this process (load_host_map with fabric= to fall back on); what the
/// fallback did is said once.
fp::Result<const fp::placement::HostMap*> launch_host_map();

// Per context.
void local_steer_srun();             ///< local: in every --fabric-* callback
void local_exit();                   ///< local: srun exits
int allocator_steer();               ///< allocator: in every --fabric-* callback; -1 rejects
int allocator_post_opt(spank_t sp);  ///< allocator: after all options
int remote_user_init(spank_t sp);    ///< remote: once per node and step
int remote_task_init(spank_t sp);    ///< remote: per task

}  // namespace fabricplace::plugin::spank
