// srun (SPANK local context) inside an allocation: the tasks in the fabric's ring order.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "fabricplace/common/file_io.hpp"
#include "fabricplace/placement/slurm_env.hpp"
#include "launch.hpp"
#include "spank_common.hpp"

namespace fabricplace::plugin::spank {

// srun reads SLURM_HOSTFILE after the option callbacks (opt.c _opt_verify) and before
// spank_init_post_opt, so this runs in every --fabric-* callback with what is known then:
// srun's own command line (all of it, from /proc) and the job's environment. The file lists
// the job's hosts in ring order, K lines each; srun runs the first ntasks lines.
void local_steer_srun() {
  auto& st = state();
  if (!st.options.tp || mode() == Mode::kOff) return;
  const char* job = std::getenv("SLURM_JOB_ID");
  if (!job) return;  // srun outside an allocation: Slurm allocates; nothing to order yet
  const char* user_file = std::getenv("SLURM_HOSTFILE");
  if (user_file && st.srun_hostfile != user_file) return;  // the user's own order wins
  const auto counts = parse_srun_args(own_args());
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
  auto map = load_host_map(host_map_path());
  if (!map) {
    note(true, map.error().to_string() + "; srun keeps Slurm's order");
    return;
  }
  auto tp = tp_in_ranks(*st.options.tp, static_cast<std::uint32_t>(st.config.gpus_per_node), K);
  if (!tp) {
    note(true, tp.error().message + "; srun keeps Slurm's order");
    return;
  }
  auto ring = plan_launch(**map, nodes->second, K, *tp);
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

void local_exit() {
  auto& st = state();
  if (!st.srun_hostfile.empty()) {
    std::remove(st.srun_hostfile.c_str());
    st.srun_hostfile.clear();
  }
}

}  // namespace fabricplace::plugin::spank
