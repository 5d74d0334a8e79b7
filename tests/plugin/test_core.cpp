// The plugin's Slurm-free core: option values, srun/sbatch command lines and #SBATCH lines,
// submission checks against the fabric, and a task's place in the ring.
#include <gtest/gtest.h>

#include "fabricplace/fabric/spec.hpp"
#include "fabricplace/placement/placement.hpp"
#include "launch.hpp"
#include "options.hpp"
#include "submit.hpp"

namespace fabricplace::plugin {
namespace {

std::string error_of(const Result<void>& r) {
  return r ? "" : r.error().message;
}

TEST(PluginOptions, ValuesAndMessages) {
  JobOptions o;
  EXPECT_EQ(error_of(set_option(o, Option::kTp, "16")), "");
  EXPECT_EQ(o.tp, 16u);
  EXPECT_EQ(error_of(set_option(o, Option::kTp, "0")),
            "--fabric-tp: expected a positive integer (GPUs per tensor-parallel group), got "
            "\"0\"");
  EXPECT_EQ(error_of(set_option(o, Option::kTp, nullptr)),
            "--fabric-tp: expected a positive integer (GPUs per tensor-parallel group), got "
            "\"\"");
  EXPECT_EQ(error_of(set_option(o, Option::kMode, "exact")), "");
  EXPECT_EQ(o.mode, Mode::kExact);
  EXPECT_EQ(error_of(set_option(o, Option::kMode, "fast")),
            "--fabric-mode: expected constrain, exact or off, got \"fast\"");
  EXPECT_EQ(error_of(set_option(o, Option::kPolicy, "best")),
            "--fabric-policy: expected fabric, slurm-tree or first-fit, got \"best\"");
  EXPECT_EQ(error_of(set_option(o, Option::kRankfile, "/tmp/r")), "");
  EXPECT_EQ(o.rankfile, "/tmp/r");
  // The remote callback runs twice per step: setting again is harmless.
  EXPECT_EQ(error_of(set_option(o, Option::kTp, "16")), "");
  EXPECT_EQ(o.tp, 16u);
}

TEST(PluginLaunch, SrunCommandLine) {
  auto c = parse_srun_args({"-l", "-N", "2", "--ntasks=8", "-c4", "python", "-n", "3"});
  EXPECT_EQ(c.nodes, 2u);
  EXPECT_EQ(c.ntasks, 8u);  // the command's own -n 3 is not srun's
  EXPECT_FALSE(c.ntasks_per_node);
  EXPECT_EQ(c.command, 5u);
  c = parse_srun_args({"--ntasks-per-node", "4", "-w", "node[001-002]", "--", "a.out"});
  EXPECT_EQ(c.ntasks_per_node, 4u);
  EXPECT_TRUE(c.nodelist);
  EXPECT_EQ(c.command, 5u);
  // Unknown options: a value unless the next word is an option itself.
  c = parse_srun_args({"--oversubscribe", "-N", "4", "--nice", "-n", "8", "--wait-all-nodes", "1",
                       "-m", "cyclic", "--fabric-tp=16", "job.sh"});
  EXPECT_EQ(c.nodes, 4u);
  EXPECT_EQ(c.ntasks, 8u);
  EXPECT_TRUE(c.distribution);
  EXPECT_EQ(c.fabric_tp, "16");
  EXPECT_EQ(c.command, 11u);
  // Options with values that look like commands; -W is seconds for srun, a flag for sbatch.
  c = parse_srun_args({"--cpu-bind", "cores", "--mem-bind", "local", "-W", "30", "-n", "8", "a"});
  EXPECT_EQ(c.ntasks, 8u);
  EXPECT_EQ(c.command, 8u);
  c = parse_srun_args({"-W", "-N", "4", "job.sh"});
  EXPECT_EQ(c.nodes, 4u);
  EXPECT_EQ(c.command, 3u);
  EXPECT_TRUE(
      submit_shape(sbatch_directives("#!/bin/sh\n#SBATCH -N 2\n#SBATCH hetjob\n#SBATCH -N 2\n"),
                   {"x.sh"})
          .het);
  c = parse_srun_args({"-N", "2", ":", "-N", "3", "job.sh"});
  EXPECT_TRUE(c.het);
  c = parse_srun_args({"-N2-4", "--exclusive", "hostname"});
  EXPECT_EQ(c.nodes, 2u);
  EXPECT_EQ(c.command, 2u);
}

TEST(PluginSubmit, DirectivesThenCommandLine) {
  const auto words = sbatch_directives(
      "#!/bin/bash\n#SBATCH -N 4  # four nodes\n# plain comment\n\n#SBATCH --ntasks-per-node=8\n"
      "srun hostname\n#SBATCH -N 99\n");
  EXPECT_EQ(words, (std::vector<std::string>{"-N", "4", "--ntasks-per-node=8"}));
  auto s = submit_shape(words, {"--fabric-tp=16", "job.sh", "-N", "7"});
  EXPECT_EQ(s.nodes, 4u);  // job.sh's own argument is not sbatch's
  EXPECT_EQ(s.ntasks_per_node, 8u);
  EXPECT_EQ(s.script, "job.sh");
  s = submit_shape(words, {"-N", "2", "job.sh"});
  EXPECT_EQ(s.nodes, 2u);  // the command line overrides #SBATCH
  EXPECT_EQ(submit_shape({}, {"-n", "8", "--ntasks-per-node=2", "x.sh"}).node_count(), 4u);
  EXPECT_EQ(submit_shape({}, {"x.sh"}).node_count(), 1u);  // sbatch's default
  EXPECT_FALSE(submit_shape({}, {}).node_count());         // a script on stdin: unknown
  EXPECT_EQ(submit_shape({"--fabric-tp=32"}, {"--fabric-tp=4", "x.sh"}).fabric_tp, "4");
}

struct Fabric8 : ::testing::Test {
  // 2 pods x 2 leaves x 2 hosts.
  placement::HostMap m = placement::host_map(
      placement::prepare(*fabric::generate("fat3:pods=2,leaves=2,down=2,up=2")));
};

TEST_F(Fabric8, SubmissionChecks) {
  EXPECT_EQ(error_of(validate_submission(m, 4, 8, 16)), "");
  EXPECT_EQ(error_of(validate_submission(m, 9, 8, 8)),
            "the job asks for 9 nodes; the fabric has 8 hosts");
  EXPECT_EQ(error_of(validate_submission(m, 6, 8, 24)),
            "--fabric-tp 24: a TP group needs 3 nodes under one leaf; the largest leaf "
            "(p01-leaf01) has 2 hosts");
  EXPECT_EQ(error_of(validate_submission(m, 3, 8, 16)),
            "--fabric-tp 16 does not tile the job: 3 nodes x 8 GPUs = 24 GPUs, not a multiple "
            "of 16");
  EXPECT_EQ(error_of(validate_submission(m, 2, 8, 3)),
            "--fabric-tp 3: a TP group inside a node must divide its 8 GPUs");
  EXPECT_EQ(error_of(validate_submission(m, 2, 8, 12)),
            "--fabric-tp 12: a TP group larger than a node must span whole 8-GPU nodes");
}

TEST_F(Fabric8, TaskPlaces) {
  // Hosts per leaf 2, 1 | 1 (0): groups of 2 hosts; the two 1-host leaves share a group.
  auto l = plan_launch(m, "node[001-003,005]", 2, 4);
  ASSERT_TRUE(l) << l.error().message;
  const auto place = task_place(m, *l, "node005", 1);
  ASSERT_TRUE(place);
  EXPECT_EQ(place->ring_rank, 7u);  // node001 node002 node003 node005: position 3 x 2 + 1
  EXPECT_EQ(place->tp_group, 1u);
  EXPECT_EQ(place->tp_rank, 3u);
  EXPECT_EQ(l->tp_groups_split, 1u);
  EXPECT_FALSE(task_place(m, *l, "node004", 0));  // not in the step
  EXPECT_FALSE(task_place(m, *l, "node001", 2));  // local id beyond K
  auto odd = plan_launch(m, "node[001-003]", 2, 4);
  ASSERT_FALSE(odd);
  EXPECT_EQ(odd.error().message, "a TP group of 4 ranks does not tile 3 hosts x 2 tasks");
  auto bad = plan_launch(m, "node[001,042]", 1, 1);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "the job's nodes: 1 host(s) not in the fabric: node042");
}

TEST(PluginLaunch, TpInRanksAndPaths) {
  EXPECT_EQ(*tp_in_ranks(16, 8, 8), 16u);
  EXPECT_EQ(*tp_in_ranks(16, 8, 1), 2u);  // one rank per node driving 8 GPUs
  EXPECT_EQ(*tp_in_ranks(4, 8, 1), 1u);   // one rank drives two whole TP groups
  EXPECT_EQ(*tp_in_ranks(4, 8, 2), 1u);
  EXPECT_EQ(tp_in_ranks(4, 8, 3).error().message,
            "--fabric-tp 4 with 3 task(s) per node on 8-GPU nodes is not a whole number of "
            "tasks per TP group");
  EXPECT_EQ(default_host_map_path("/etc/slurm/fabric.json"), "/etc/slurm/fabric.hostmap");
  EXPECT_EQ(default_host_map_path("/etc/slurm.d/fabric"), "/etc/slurm.d/fabric.hostmap");
}

}  // namespace
}  // namespace fabricplace::plugin
