// SPDX-License-Identifier: GPL-2.0-or-later
// slurmstepd (SPANK remote context): the step's ring, the job's rank files, each task's
// place in the ring.
#include <unistd.h>

#include <algorithm>

#include "fabricplace/common/strings.hpp"
#include "fabricplace/placement/slurm_env.hpp"
#include "launch.hpp"
#include "spank_common.hpp"
#ifdef FABRICPLACE_HAVE_HWLOC
#include "fabricplace/node/node_topology.hpp"
#endif

namespace fabricplace::plugin::spank {
namespace {

// A variable of the step's environment. Values are bounded: past 8 KiB (a hostlist of
// thousands of unrelated names) once more with room for 1 MiB; longer is ignored, said once.
std::optional<std::string> step_env(spank_t sp, const char* name) {
  char buf[8192];
  const auto rc = spank_getenv(sp, name, buf, sizeof buf);
  if (rc == ESPANK_SUCCESS) return *buf ? std::optional<std::string>(buf) : std::nullopt;
  if (rc != ESPANK_NOSPACE) return std::nullopt;
  constexpr std::size_t kMax = std::size_t{1} << 20;
  std::string big(kMax, '\0');
  if (spank_getenv(sp, name, big.data(), static_cast<int>(big.size())) != ESPANK_SUCCESS) {
    note_once(std::string(name) + " is longer than 1 MiB; fabricplace ignores it", true);
    return std::nullopt;
  }
  big.resize(std::char_traits<char>::length(big.c_str()));
  return big;
}

}  // namespace

std::vector<fp::placement::LocalRank> node_bindings(std::uint32_t tasks_per_node) {
  const auto& xml = state().config.hwloc_xml;
  if (xml.empty()) return {};
#ifdef FABRICPLACE_HAVE_HWLOC
  static std::optional<fp::Result<fp::node::NodeTopology>> topo;  // once per step daemon
  if (!topo) topo = fp::node::load_hwloc_xml(xml);
  if (!*topo) {
    note_once((*topo).error().to_string() + "; no GPU/HCA pairing", true);
    return {};
  }
  std::vector<fp::placement::LocalRank> out;
  for (const auto& b : fp::node::bind_local_ranks(**topo, tasks_per_node))
    out.push_back({fp::placement::core_list(b.cores), b.gpu,
                   b.hca.find(':') == std::string::npos ? b.hca : std::string()});
  return out;
#else
  (void)tasks_per_node;
  note_once(
      "hwloc_xml= needs a fabricplace built with hwloc (FABRICPLACE_WITH_HWLOC); no "
      "GPU/HCA pairing");
  return {};
#endif
}

// Remote, once per node and step, as the job user in the job's directory: the ring of the
// step's hosts (kept for task_init), and on the step's first node the job's rank files when
// the step spans the whole job (the batch step, or an srun over every node).
int remote_user_init(spank_t sp) {
  auto& st = state();
  if (!st.enabled || !st.options.groups().any() || mode() == Mode::kOff) return 0;
  std::uint32_t job_id = 0, step_id = 0, node_id = 0, local_tasks = 0;
  spank_get_item(sp, S_JOB_STEPID, &step_id);
  // The extern step (PrologFlags=contain) runs no task of the user's: nothing to order, and
  // the rank files are the batch step's (or the first job-wide srun's).
  if (step_id == SLURM_EXTERN_CONT) return 0;
  auto map = launch_host_map();
  if (!map) {
    note(true, map.error().to_string() + "; tasks keep Slurm's order");
    return 0;
  }
  st.map = *map;
  const fp::placement::EnvFn env = [sp](const char* n) { return step_env(sp, n); };
  spank_get_item(sp, S_JOB_ID, &job_id);
  spank_get_item(sp, S_JOB_NODEID, &node_id);
  spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &local_tasks);
  const auto gpus = static_cast<std::uint32_t>(st.config.gpus_per_node);

  // The step's ring, for the tasks here (task_init): K = this node's task count.
  const auto step_nodes = env("SLURM_STEP_NODELIST");
  // Uneven tasks per node (srun -n 3 -N 2): no ring of whole hosts; wrong ranks would be
  // worse than none.
  const auto step_tasks = env("SLURM_STEP_TASKS_PER_NODE");
  const auto counts = step_tasks ? fp::placement::task_counts(*step_tasks) : std::nullopt;
  const bool uniform = counts && counts->size() == 1;
  if (step_nodes && local_tasks > 0 && step_id != SLURM_BATCH_SCRIPT && !uniform) {
    note_once("the step's tasks per node are uneven (" +
              fp::str::excerpt(step_tasks.value_or("?")) + "); no FABRICPLACE_* task variables");
  } else if (step_nodes && local_tasks > 0 && step_id != SLURM_BATCH_SCRIPT) {
    // srun ran the tasks in its ring order (its hostfile): task id = ring rank, whatever
    // host map this node reads now. Else this node's ring, unless srun read another version
    // of the host map (it was replaced during the launch): other nodes may hold either, and
    // ranks of two rings would collide.
    const auto hostfile = env("SLURM_HOSTFILE");
    const bool steered = hostfile && hostfile->find("/fabricplace-srun-") != std::string::npos;
    const auto srun_map = env("FABRICPLACE_HOSTMAP_ID");
    std::uint32_t total = 0;
    spank_get_item(sp, S_JOB_TOTAL_TASK_COUNT, &total);
    if (auto r = group_ranks(st.options.groups(), gpus, local_tasks); !r) {
      note(false, r.error().message + "; no FABRICPLACE_* task variables");
    } else if (steered && total > 0 && total % std::max(r->tp, r->ep) == 0) {
      st.order = *r;
      st.order_size = total;
    } else if (srun_map && *srun_map != loaded_host_map_id(host_map_path())) {
      note_once(host_map_path() +
                ": replaced during this launch (srun read another version than this node); no "
                "FABRICPLACE_* task variables");
    } else if (auto ring = plan_launch(**map, *step_nodes, st.options.groups(), gpus, local_tasks);
               !ring) {
      note(ring.error().code != fp::ErrorCode::kUsage,
           ring.error().message + "; no FABRICPLACE_* task variables");
    } else {
      st.ring = std::move(*ring);
    }
  }

  // GPU k <-> nearest HCA for the tasks here.
  if (local_tasks > 0 && step_id != SLURM_BATCH_SCRIPT) st.local = node_bindings(local_tasks);

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
      // Slurm sets no SLURM_TASKS_PER_NODE for an arbitrary layout, and Open MPI's mpirun
      // needs it: what Slurm sets for the same job without a hostfile.
      if (!env("SLURM_TASKS_PER_NODE")) {
        const auto nnodes = env("SLURM_JOB_NUM_NODES");
        std::string tpn;
        if (const auto k = env("SLURM_NTASKS_PER_NODE"); k && nnodes)
          tpn = *k + "(x" + *nnodes + ")";
        else if (*exact == "notasks")
          tpn = env("SLURM_JOB_CPUS_PER_NODE").value_or("");
        else if (const auto n = env("SLURM_NTASKS"); n && nnodes)
          if (auto nt = fp::str::parse_uint(*n, 1u << 30),
              nn = fp::str::parse_uint(*nnodes, 1u << 30);
              nt && nn && *nn > 0 && *nt % *nn == 0)
            tpn = std::to_string(*nt / *nn) + "(x" + *nnodes + ")";
        if (!tpn.empty()) spank_setenv(sp, "SLURM_TASKS_PER_NODE", tpn.c_str(), 1);
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
  if (auto r = group_ranks(st.options.groups(), gpus, k->first); !r) {
    note(true, r.error().message + "; no rank files written");
    return 0;
  }
  auto ring = plan_launch(**map, *job_nodes, st.options.groups(), gpus, k->first);
  if (!ring) {
    note(ring.error().code != fp::ErrorCode::kUsage,
         ring.error().message + "; no rank files written");
    return 0;
  }
  std::string prefix = st.options.rankfile.value_or("fabricplace." + std::to_string(job_id));
  // Relative to the job's directory (this process's), made absolute so messages in slurmd's
  // log say where.
  if (prefix.front() != '/')
    if (char cwd[4096]; getcwd(cwd, sizeof cwd)) prefix = std::string(cwd) + "/" + prefix;
  // The batch step writes them; in a job without one (salloc), the first job-wide step does,
  // and later steps (with their own task counts) leave them as they are.
  if (step_id != SLURM_BATCH_SCRIPT && access((prefix + ".rankfile").c_str(), F_OK) == 0) return 0;
  fp::placement::RankFileOptions ro;
  ro.cores.cores = static_cast<std::uint32_t>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  ro.origin = (*map)->origin;
  ro.local = node_bindings(k->first);
  // As `fabricplace rankfile` writes them: NCCL_IB_HCA with rail and plane on a
  // rail-optimised fabric, NCCL_MNNVL_ENABLE when hosts of the job share an NVLink domain.
  ro.rails = (*map)->rails;
  ro.mnnvl = fp::placement::shares_domain(**map, ring->hosts);
  if (!ro.local.empty()) ro.node_source = st.config.hwloc_xml;
  // All four or none (a full disk, a read-only directory): the message names the file and
  // the reason, and says no rank files were written; the step runs on.
  // The default names are ours: a link planted at one (a shared job directory) is replaced,
  // never followed; a --fabric-rankfile of the user's own follows links, as -o does.
  const auto links = st.options.rankfile ? LinkPolicy::kFollow : LinkPolicy::kReplace;
  if (auto w = write_launch_files(**map, *ring, prefix, ro, links); !w)
    note(true, w.error().to_string());
  return 0;
}

// Remote, per task (forked from the step daemon after user_init): the task's place in the
// fabric ring of its step.
int remote_task_init(spank_t sp) {
  auto& st = state();
  if (!st.enabled) return 0;
  int local_id = 0;
  if (spank_get_item(sp, S_TASK_ID, &local_id) != ESPANK_SUCCESS) return 0;
  // The task's GPU and its nearest HCA (hwloc_xml=); a user's own NCCL_IB_HCA wins.
  if (local_id >= 0 && static_cast<std::size_t>(local_id) < st.local.size()) {
    const auto& b = st.local[static_cast<std::size_t>(local_id)];
    if (b.gpu) spank_setenv(sp, "FABRICPLACE_GPU", std::to_string(*b.gpu).c_str(), 1);
    if (!b.hca.empty()) spank_setenv(sp, "NCCL_IB_HCA", ("=" + b.hca).c_str(), 0);
  }
  // The hostfile srun wrote for this step is gone when srun exits: a nested srun or sbatch
  // in the task must not take it (nor the arbitrary layout it implied) for its own.
  if (const auto hf = step_env(sp, "SLURM_HOSTFILE");
      hf && hf->find("/fabricplace-srun-") != std::string::npos) {
    spank_unsetenv(sp, "SLURM_HOSTFILE");
    spank_unsetenv(sp, "SLURM_DISTRIBUTION");
  }
  spank_unsetenv(sp, "FABRICPLACE_HOSTMAP_ID");  // srun's, for user_init; not the tasks'
  const auto set_place = [sp](const TaskPlace& place, std::uint32_t size) {
    spank_setenv(sp, "FABRICPLACE_RING_RANK", std::to_string(place.ring_rank).c_str(), 1);
    spank_setenv(sp, "FABRICPLACE_RING_SIZE", std::to_string(size).c_str(), 1);
    spank_setenv(sp, "FABRICPLACE_TP_GROUP", std::to_string(place.tp_group).c_str(), 1);
    spank_setenv(sp, "FABRICPLACE_TP_RANK", std::to_string(place.tp_rank).c_str(), 1);
    if (place.ep_group && place.ep_rank) {
      spank_setenv(sp, "FABRICPLACE_EP_GROUP", std::to_string(*place.ep_group).c_str(), 1);
      spank_setenv(sp, "FABRICPLACE_EP_RANK", std::to_string(*place.ep_rank).c_str(), 1);
    }
  };
  if (st.order) {
    std::uint32_t task_id = 0;
    if (spank_get_item(sp, S_TASK_GLOBAL_ID, &task_id) != ESPANK_SUCCESS) return 0;
    set_place(place_in_order(task_id, *st.order), st.order_size);
    return 0;
  }
  if (!st.ring || !st.map) return 0;
  const auto host = step_env(sp, "SLURMD_NODENAME");
  if (!host) return 0;
  const auto place = task_place(*st.map, *st.ring, *host, static_cast<std::uint32_t>(local_id));
  if (!place) return 0;
  set_place(*place, st.ring->ranks());
  return 0;
}

}  // namespace fabricplace::plugin::spank
