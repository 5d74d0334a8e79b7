// SPDX-License-Identifier: GPL-2.0-or-later
// The plugin's Slurm-free core: option values, srun/sbatch command lines and #SBATCH lines,
// submission checks against the fabric, a task's place in the ring, and the rank files
// written all or none (a missing or read-only directory, a full disk, a renderer that throws).
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <set>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <new>
#include <sstream>
#include <stdexcept>

#include "fabricplace/common/file_io.hpp"
#include "fabricplace/fabric/json_io.hpp"
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

// The one table Slurm's option registration and fabricplace-spank(8) are made from: every
// option once, each with its argument name and both texts.
TEST(PluginOptions, DocsNameEveryOptionOnce) {
  std::set<std::string> names;
  for (const auto& d : option_docs()) {
    const std::string name = option_name(d.which);
    EXPECT_NE(name, "?");
    EXPECT_TRUE(names.insert(name).second) << name << " twice";
    ASSERT_NE(d.arg, nullptr) << name;
    ASSERT_NE(d.usage, nullptr) << name;
    ASSERT_NE(d.more, nullptr) << name;
    EXPECT_EQ(std::string(d.usage).rfind("fabricplace: ", 0), 0u) << name;
  }
  EXPECT_EQ(names, (std::set<std::string>{"fabric-tp", "fabric-ep", "fabric-mode", "fabric-policy",
                                          "fabric-rankfile"}));
}

TEST(PluginOptions, ValuesAndMessages) {
  JobOptions o;
  EXPECT_EQ(error_of(set_option(o, Option::kEp, "32")), "");
  EXPECT_EQ(o.ep, 32u);
  EXPECT_TRUE(o.groups().any());
  EXPECT_EQ(error_of(set_option(o, Option::kEp, "-4")),
            "--fabric-ep: expected a positive integer (GPUs per expert-parallel group), got "
            "\"-4\"");
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
            "--fabric-policy: expected fabric, slurm-tree, slurm-block or first-fit, got \"best\"");
  EXPECT_EQ(error_of(set_option(o, Option::kRankfile, "/tmp/r\n")),
            "--fabric-rankfile: expected a file path prefix, got \"/tmp/r\\n\"");
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
  auto unread = submit_shape({}, {"fifo.sh"});  // a FIFO or device: its #SBATCH -N is unknown
  unread.script_unread = true;
  EXPECT_FALSE(unread.node_count());
  unread = submit_shape({}, {"-N", "3", "fifo.sh"});  // the command line still counts
  unread.script_unread = true;
  EXPECT_EQ(unread.node_count(), 3u);
  EXPECT_EQ(submit_shape({"--fabric-tp=32"}, {"--fabric-tp=4", "x.sh"}).fabric_tp, "4");
  // The job's own --segment (#SBATCH, then the command line), for exact mode on block.
  EXPECT_EQ(submit_shape({"--segment=4"}, {"x.sh"}).segment, 4u);
  EXPECT_EQ(submit_shape({"--segment=4"}, {"--segment", "2", "x.sh"}).segment, 2u);
  EXPECT_FALSE(submit_shape({}, {"-N", "4", "x.sh"}).segment);
}

struct Fabric8 : ::testing::Test {
  // 2 pods x 2 leaves x 2 hosts.
  placement::HostMap m = placement::host_map(
      placement::prepare(*fabric::generate("fat3:pods=2,leaves=2,down=2,up=2")));
};

TEST_F(Fabric8, SubmissionChecks) {
  EXPECT_EQ(error_of(validate_submission(m, 4, 8, {16})), "");
  EXPECT_EQ(error_of(validate_submission(m, 9, 8, {8})),
            "the job asks for 9 nodes; the fabric has 8 hosts");
  EXPECT_EQ(error_of(validate_submission(m, 6, 8, {24})),
            "--fabric-tp 24: a TP group needs 3 nodes in one leaf; the largest leaf "
            "(p01-leaf01) has 2 hosts");
  EXPECT_EQ(error_of(validate_submission(m, 3, 8, {16})),
            "--fabric-tp 16 does not tile the job: 3 nodes x 8 GPUs per node = 24 GPUs, not a "
            "multiple of 16");
  EXPECT_EQ(error_of(validate_submission(m, 2, 8, {3})),
            "--fabric-tp 3 with 8 GPUs per node: a TP group smaller than a node must divide it "
            "(8 is not a multiple of 3)");
  EXPECT_EQ(error_of(validate_submission(m, 2, 8, {12})),
            "--fabric-tp 12 with 8 GPUs per node: a TP group larger than a node must span whole "
            "nodes (a multiple of 8)");
  // The node count unknown (a script on stdin): the checks that do not need it still run.
  EXPECT_EQ(error_of(validate_submission(m, std::nullopt, 8, {16})), "");
  EXPECT_EQ(error_of(validate_submission(m, std::nullopt, 8, {24})),
            "--fabric-tp 24: a TP group needs 3 nodes in one leaf; the largest leaf "
            "(p01-leaf01) has 2 hosts");
  EXPECT_EQ(error_of(validate_submission(m, std::nullopt, 8, {12})),
            "--fabric-tp 12 with 8 GPUs per node: a TP group larger than a node must span whole "
            "nodes (a multiple of 8)");
}

// topology/block: the TP group's --segment, and which exact-mode pins block admits.
TEST_F(Fabric8, BlockSegmentAndOneLeaf) {
  const auto seg = [](std::optional<std::uint32_t> n, std::uint32_t g, std::uint32_t tp) {
    const auto s = block_segment(n, g, {tp});
    return s.nodes ? std::to_string(*s.nodes) : s.why_not;
  };
  EXPECT_EQ(seg(6, 2, 4), "2");
  EXPECT_EQ(seg(4, 8, 32), "4");
  EXPECT_EQ(seg(2, 8, 16), "2");  // one group: the whole job in one leaf
  EXPECT_EQ(seg(4, 8, 8), "a group fits inside one node");
  EXPECT_EQ(seg(4, 8, 4), "a group fits inside one node");
  EXPECT_EQ(seg(std::nullopt, 2, 4), "the node count (-N) is not known");
  EXPECT_EQ(seg(5, 2, 4),
            "--fabric-tp 4 does not tile the job: 5 nodes x 2 GPUs per node = 10 GPUs, not a "
            "multiple of 4");
  EXPECT_EQ(seg(4, 8, 12),
            "--fabric-tp 12 with 8 GPUs per node: a TP group larger than a node must span whole "
            "nodes (a multiple of 8)");
  // Fabric8's leaves: node001-002, node003-004 (pod 1), node005-006, node007-008 (pod 2).
  EXPECT_TRUE(in_one_block(m, "node001\nnode002\n"));
  EXPECT_TRUE(in_one_block(m, "node008\n"));
  EXPECT_FALSE(in_one_block(m, "node002\nnode003\n"));  // two leaves of one pod
  EXPECT_FALSE(in_one_block(m, "node001\nnode005\n"));
  EXPECT_FALSE(in_one_block(m, "node001\nnode999\n"));  // a host the map does not know
  EXPECT_FALSE(in_one_block(m, "\n"));
}

TEST_F(Fabric8, TaskPlaces) {
  // Hosts per leaf 2, 1 | 1 (0): --fabric-tp 16 on 8-GPU nodes is a group of 2 hosts (4
  // ranks at 2 per node); the two 1-host leaves share a group.
  auto l = plan_launch(m, "node[001-003,005]", {16}, 8, 2);
  ASSERT_TRUE(l) << l.error().message;
  const auto place = task_place(m, *l, "node005", 1);
  ASSERT_TRUE(place);
  EXPECT_EQ(place->ring_rank, 7u);  // node001 node002 node003 node005: position 3 x 2 + 1
  EXPECT_EQ(place->tp_group, 1u);
  EXPECT_EQ(place->tp_rank, 3u);
  EXPECT_EQ(l->tp_groups_split, 1u);
  EXPECT_FALSE(task_place(m, *l, "node004", 0));  // not in the step
  EXPECT_FALSE(task_place(m, *l, "node001", 2));  // local id beyond K
  auto odd = plan_launch(m, "node[001-003]", {16}, 8, 2);
  ASSERT_FALSE(odd);
  EXPECT_EQ(odd.error().code, ErrorCode::kUsage);
  EXPECT_EQ(odd.error().message,
            "--fabric-tp 16 does not tile the job: 3 nodes x 8 GPUs per node = 24 GPUs, not a "
            "multiple of 16");
  auto bad = plan_launch(m, "node[001,042]", {8}, 8, 1);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "the job's nodes: 1 host(s) not in the fabric: node042");
}

// --fabric-ep: the larger of the TP and EP groups is the one a submission checks, a
// --segment keeps and the launch ring holds together; on a fabric with NVLink domains the
// blocks are the domains, and the messages say so.
TEST(PluginSubmit, ExpertParallelGroupsAndDomains) {
  // 12 hosts of 4 GPUs on 3 leaves of 4; domains of 6: nvl01 = node001-006 (leaf01 and half
  // of leaf02), nvl02 = node007-012.
  const auto f = *fabric::generate("fat2:leaves=3,down=4,up=4,nvl=6,gpus=4");
  const auto m = placement::host_map(placement::prepare(f));
  EXPECT_EQ(error_of(validate_submission(m, 8, 4, {4, 16})), "");
  EXPECT_EQ(error_of(validate_submission(m, 8, 4, {std::nullopt, 16})), "");
  EXPECT_EQ(error_of(validate_submission(m, 8, 4, {4, 32})),
            "--fabric-ep 32: an EP group needs 8 nodes in one NVLink domain; the largest NVLink "
            "domain (nvl01) has 6 hosts");
  EXPECT_EQ(error_of(validate_submission(m, 6, 4, {2, 6})),
            "--fabric-ep 6 with 4 GPUs per node: an EP group larger than a node must span whole "
            "nodes (a multiple of 4)");
  EXPECT_EQ(error_of(validate_submission(m, 6, 4, {8, 12})),
            "--fabric-ep 12 with --fabric-tp 8: EP and TP groups must nest (one size a multiple "
            "of the other)");
  EXPECT_EQ(error_of(validate_submission(m, 6, 4, {8, 4})), "");  // EP inside TP
  EXPECT_EQ(error_of(validate_submission(m, 12, 4, {16, 8})), "");
  EXPECT_EQ(error_of(validate_submission(m, 12, 4, {8, 16})), "");
  // The segment: the EP group's nodes; TP's when TP is the larger.
  const auto seg = [](std::optional<std::uint32_t> n, Groups g) {
    const auto s = block_segment(n, 4, g);
    return s.nodes ? std::to_string(*s.nodes) : s.why_not;
  };
  EXPECT_EQ(seg(8, {4, 16}), "4");
  EXPECT_EQ(seg(8, {16, 8}), "4");
  EXPECT_EQ(seg(8, {std::nullopt, 8}), "2");
  EXPECT_EQ(seg(8, {2, 4}), "a group fits inside one node");
  EXPECT_EQ(seg(6, {4, 16}),
            "--fabric-ep 16 does not tile the job: 24 GPUs are not a multiple of 16");
  EXPECT_TRUE(in_one_block(m, "node004\nnode005\nnode006\n"));  // one domain, two leaves
  EXPECT_FALSE(in_one_block(m, "node006\nnode007\n"));          // one leaf, two domains
  // Ranks: TP 4 and EP 16 on 4-GPU nodes, one rank per GPU: TP groups of 4 ranks, EP groups
  // of 16; one rank per node: 1 and 4.
  EXPECT_EQ(group_ranks({4, 16}, 4, 4)->tp, 4u);
  EXPECT_EQ(group_ranks({4, 16}, 4, 4)->ep, 16u);
  EXPECT_EQ(group_ranks({4, 16}, 4, 1)->ep, 4u);
  EXPECT_EQ(group_ranks({4}, 4, 4)->ep, 0u);
  EXPECT_EQ(group_ranks({2, 6}, 4, 4).error().message,
            "--fabric-ep 6 with 4 GPUs per node: an EP group larger than a node must span whole "
            "nodes (a multiple of 4)");
  const auto p = place_in_order(37, {4, 16});
  EXPECT_EQ(p.tp_group, 9u);
  EXPECT_EQ(p.tp_rank, 1u);
  EXPECT_EQ(p.ep_group, 2u);
  EXPECT_EQ(p.ep_rank, 5u);
  EXPECT_FALSE(place_in_order(37, {4}).ep_group);
  // The launch ring over 8 hosts, 4 of each domain given out of order: each EP group of 4
  // hosts inside one domain, domain by domain.
  auto l = plan_launch(m, "node[003,004,005,006,007,008,011,012]", {4, 16}, 4, 4);
  ASSERT_TRUE(l) << l.error().message;
  std::string ring;
  for (auto h : l->hosts) ring += m.names[fabric::idx(h)] + " ";
  EXPECT_EQ(ring, "node003 node004 node005 node006 node007 node008 node011 node012 ");
  EXPECT_EQ(l->tp_groups_split, 0u);
  EXPECT_EQ(l->leaves, (std::vector<std::string>{"nvl01", "nvl02"}));
  const auto t = task_place(m, *l, "node011", 2);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->ring_rank, 26u);
  EXPECT_EQ(t->ep_group, 1u);
  EXPECT_EQ(t->ep_rank, 10u);
  // A host set that cannot keep every EP group inside a domain: the warning names domains.
  auto split = plan_launch(m, "node[004-011]", {4, 16}, 4, 4);
  ASSERT_TRUE(split) << split.error().message;
  EXPECT_EQ(split->tp_groups_split, 1u);
  ASSERT_EQ(split->warnings.size(), 1u);
  EXPECT_EQ(split->warnings[0],
            "1 EP group(s) of 4 hosts span NVLink domains (the fewest this allocation allows in "
            "a domain-contiguous ring): the hosts per NVLink domain (nvl01 3, nvl02 5) are not "
            "multiples of 4");
}

// Exact mode with --fabric-ep on a fabric with domains: the engine keeps each EP group
// inside one domain; without EP the same job (TP inside a node) may take any hosts.
TEST(PluginSubmit, ExactModeKeepsEpGroupsInDomains) {
  ExactRequest r;
  r.fabric_path = "fat2:leaves=3,down=4,up=4,nvl=6,gpus=4";
  for (int h = 1; h <= 12; ++h) {
    char line[32];
    std::snprintf(line, sizeof line, "node%03d %s\n", h, h <= 3 || h == 12 ? "alloc" : "idle");
    r.states += line;
  }
  r.nodes = 4;
  r.gpus_per_node = 4;
  r.groups = {4, 16};
  auto p = exact_hostfile(r);
  ASSERT_TRUE(p) << p.error().to_string();
  // nvl01 has 3 free hosts (node004-006): the group of 4 goes to nvl02's free node007-010.
  EXPECT_EQ(p->hostfile, "node007\nnode008\nnode009\nnode010\n");
  r.nodes = 8;
  p = exact_hostfile(r);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().message.rfind("no placement now: ", 0), 0u) << p.error().message;
}

// ---- rank files: all or none ------------------------------------------------------------------

// A scratch directory, removed (with what is left in it) at the end.
struct ScratchDir {
  std::string path;
  ScratchDir() {
    char tmpl[] = "/tmp/fp-plugin-test.XXXXXX";
    const char* p = ::mkdtemp(tmpl);
    path = p ? p : "";
  }
  ~ScratchDir() {
    if (path.empty()) return;
    ::chmod(path.c_str(), 0755);
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
};

// The names in a directory, sorted ("" when it cannot be read).
std::string entries(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : " ") + n;
  return out;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string error_text(const Result<std::vector<std::string>>& r) {
  return r ? "" : r.error().to_string();
}

// "ERROR|ENTRIES": the directory read after the write (operands of + are unsequenced).
std::string outcome(const Result<std::vector<std::string>>& r, const std::string& dir) {
  const std::string e = error_text(r);
  return e + "|" + entries(dir);
}

// Runs `fn` in a child process (for what must not touch the test process: a private mount
// namespace, a file-size limit) and returns what it returned; "CHILD FAILED" if it died.
std::string in_child(const std::function<std::string()>& fn) {
  int fds[2];
  if (::pipe(fds) != 0) return "CHILD FAILED: pipe";
  const pid_t pid = ::fork();
  if (pid < 0) return "CHILD FAILED: fork";
  if (pid == 0) {
    ::close(fds[0]);
    std::string out;
    try {
      out = fn();
    } catch (...) {
      out = "CHILD FAILED: exception";
    }
    const char* p = out.data();
    std::size_t left = out.size();
    while (left > 0) {
      const ssize_t n = ::write(fds[1], p, left);
      if (n <= 0) break;
      p += n;
      left -= static_cast<std::size_t>(n);
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;)
    out.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return "CHILD FAILED: status " + std::to_string(status);
  return out;
}

// In a child with a private mount namespace, a tmpfs of `options` mounted on `dir`; "SKIP: ..."
// when this cannot be done here (not root, no mount namespaces).
std::string on_private_tmpfs(const std::string& dir, const std::string& options,
                             const std::function<std::string()>& fn) {
  if (::geteuid() != 0) return "SKIP: not root (a tmpfs needs mount privileges)";
  return in_child([&]() -> std::string {
    if (::unshare(CLONE_NEWNS) != 0)
      return std::string("SKIP: unshare(CLONE_NEWNS): ") + std::strerror(errno);
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
      return std::string("SKIP: mount --make-rprivate /: ") + std::strerror(errno);
    unsigned long flags = 0;
    std::string data = options;
    if (data.rfind("ro,", 0) == 0) {
      flags |= MS_RDONLY;
      data = data.substr(3);
    }
    if (::mount("tmpfs", dir.c_str(), "tmpfs", flags, data.c_str()) != 0)
      return std::string("SKIP: mount -t tmpfs: ") + std::strerror(errno);
    return fn();
  });
}

#define SKIP_IF_ASKED(out)                                              \
  do {                                                                  \
    if ((out).rfind("SKIP: ", 0) == 0) GTEST_SKIP() << (out).substr(6); \
  } while (0)

// Fills the file system of `dir` to the last page, then frees `pages` pages: the next files
// written there get that much room, then ENOSPC.
bool fill_leaving(const std::string& dir, std::size_t pages) {
  const std::string filler = dir + "/filler";
  const int fd = ::open(filler.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return false;
  const std::string block(4096, 'x');
  off_t size = 0;
  for (;;) {
    const ssize_t n = ::write(fd, block.data(), block.size());
    if (n <= 0) break;
    size += n;
  }
  const bool full = errno == ENOSPC;
  const off_t keep = size - static_cast<off_t>(4096 * pages);
  const bool ok = full && keep >= 0 && ::ftruncate(fd, keep) == 0;
  ::close(fd);
  return ok;
}

struct LaunchFiles : Fabric8 {
  ScratchDir dir;
  placement::RankLayout layout;
  placement::RankFileOptions opts;
  std::string prefix;
  void SetUp() override {
    ASSERT_FALSE(dir.path.empty());
    auto l = plan_launch(m, "node[001-003,005]", {16}, 8, 2);
    ASSERT_TRUE(l) << l.error().message;
    layout = *l;
    opts.cores.cores = 4;
    prefix = dir.path + "/fabricplace.42";
  }
  std::string expected(placement::RankFormat f) const {
    return placement::write_rank_file(m, layout, f, opts);
  }
};

TEST_F(LaunchFiles, AllFourWrittenNothingElseLeft) {
  // A stale file of an earlier run (a requeued job) is replaced, keeping its mode.
  ASSERT_TRUE(write_file_atomic(prefix + ".hosts", "stale\n"));
  ASSERT_EQ(::chmod((prefix + ".hosts").c_str(), 0600), 0);
  auto w = write_launch_files(m, layout, prefix, opts);
  ASSERT_TRUE(w) << w.error().to_string();
  EXPECT_EQ(*w, (std::vector<std::string>{prefix + ".rankfile", prefix + ".hosts",
                                          prefix + ".torchrun.env", prefix + ".json"}));
  EXPECT_EQ(entries(dir.path),
            "fabricplace.42.hosts fabricplace.42.json fabricplace.42.rankfile "
            "fabricplace.42.torchrun.env");  // no temporaries left
  EXPECT_EQ(slurp(prefix + ".rankfile"), expected(placement::RankFormat::kOpenMpi));
  EXPECT_EQ(slurp(prefix + ".hosts"), expected(placement::RankFormat::kSlurm));
  EXPECT_EQ(slurp(prefix + ".torchrun.env"), expected(placement::RankFormat::kTorchrun));
  EXPECT_EQ(slurp(prefix + ".json"), expected(placement::RankFormat::kJson));
  struct stat st {};
  ASSERT_EQ(::stat((prefix + ".hosts").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ASSERT_EQ(::stat((prefix + ".json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0666u & ~mask);  // a new file: 0666 less the umask
}

TEST_F(LaunchFiles, DefaultNamesReplaceAPlantedLinkNeverItsTarget) {
  // A link planted at a default name in a shared job directory: with kReplace (the names the
  // plugin chose) the link is replaced and its target untouched, also when the set fails and
  // is taken back; with kFollow (the user's own --fabric-rankfile) the target is written.
  const std::string victim = dir.path + "/victim";
  ASSERT_TRUE(write_file_atomic(victim, "precious\n"));
  ASSERT_EQ(::symlink(victim.c_str(), (prefix + ".hosts").c_str()), 0);
  auto w = write_launch_files(m, layout, prefix, opts, LinkPolicy::kReplace);
  ASSERT_TRUE(w) << w.error().to_string();
  EXPECT_EQ(slurp(victim), "precious\n");
  struct stat st {};
  ASSERT_EQ(::lstat((prefix + ".hosts").c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(slurp(prefix + ".hosts"), expected(placement::RankFormat::kSlurm));
  // A failing set (a renderer that throws) takes back the names, never the link's target.
  ASSERT_EQ(::unlink((prefix + ".hosts").c_str()), 0);
  ASSERT_EQ(::symlink(victim.c_str(), (prefix + ".hosts").c_str()), 0);
  ASSERT_EQ(::chmod(dir.path.c_str(), 0755), 0);
  auto bad = write_file_set({{prefix + ".rankfile", "x"},
                             {dir.path + "/no/such/dir/f", "y"},
                             {prefix + ".hosts", "z"}},
                            LinkPolicy::kReplace);
  ASSERT_FALSE(bad);
  EXPECT_EQ(slurp(victim), "precious\n");
  ::unlink((prefix + ".hosts").c_str());  // taken back with the set: the link itself, once more
  ASSERT_EQ(::symlink(victim.c_str(), (prefix + ".hosts").c_str()), 0);
  auto followed = write_launch_files(m, layout, prefix, opts, LinkPolicy::kFollow);
  ASSERT_TRUE(followed);
  EXPECT_EQ(slurp(victim), expected(placement::RankFormat::kSlurm));
}

TEST_F(LaunchFiles, MissingDirectory) {
  const std::string p = dir.path + "/no/such/dir/fabricplace.42";
  auto w = write_launch_files(m, layout, p, opts);
  EXPECT_EQ(error_text(w), p + ".rankfile: cannot create a temporary file next to it: No such file "
                               "or directory; no rank files were written");
  EXPECT_EQ(entries(dir.path), "");
}

TEST_F(LaunchFiles, ReadOnlyDirectoryByMode) {
  if (::geteuid() == 0) GTEST_SKIP() << "root ignores directory modes (ReadOnlyMount covers root)";
  ASSERT_EQ(::chmod(dir.path.c_str(), 0555), 0);
  auto w = write_launch_files(m, layout, prefix, opts);
  EXPECT_EQ(error_text(w), prefix +
                               ".rankfile: cannot create a temporary file next to it: Permission "
                               "denied; no rank files were written");
  EXPECT_EQ(entries(dir.path), "");
}

TEST_F(LaunchFiles, ReadOnlyMount) {
  const auto out = on_private_tmpfs(dir.path, "ro,size=64k", [&] {
    return outcome(write_launch_files(m, layout, prefix, opts), dir.path);
  });
  SKIP_IF_ASKED(out);
  EXPECT_EQ(out, prefix +
                     ".rankfile: cannot create a temporary file next to it: Read-only file "
                     "system; no rank files were written|");
}

TEST_F(LaunchFiles, FullDiskLeavesNoneOfTheSet) {
  // A 64 KiB tmpfs holding an earlier run's complete set, then filled but for one page: the
  // new .rankfile fits in it, the .hosts after it does not. Nothing of either set is left.
  const auto out = on_private_tmpfs(dir.path, "size=64k,mode=0777", [&]() -> std::string {
    auto old =
        write_launch_files(prefix, [](placement::RankFormat) { return std::string("old\n"); });
    if (!old) return "old set: " + old.error().to_string();
    if (!fill_leaving(dir.path, 1))
      return std::string("cannot fill the tmpfs: ") + std::strerror(errno);
    return outcome(write_launch_files(m, layout, prefix, opts), dir.path);
  });
  SKIP_IF_ASKED(out);
  EXPECT_EQ(out, prefix +
                     ".hosts: write failed: No space left on device; no rank files were "
                     "written|filler");
}

TEST_F(LaunchFiles, FileSizeLimitLeavesNoneOfTheSet) {
  // Without root: RLIMIT_FSIZE (SIGXFSZ ignored) makes the write of the large .hosts fail
  // after the small .rankfile was written.
  const auto out = in_child([&] {
    std::signal(SIGXFSZ, SIG_IGN);
    const rlimit lim{600, 600};
    if (::setrlimit(RLIMIT_FSIZE, &lim) != 0) return std::string("setrlimit failed");
    auto w = write_launch_files(prefix, [](placement::RankFormat f) {
      return std::string(f == placement::RankFormat::kSlurm ? 1000 : 100, 'x');
    });
    return outcome(w, dir.path);
  });
  EXPECT_EQ(out, prefix + ".hosts: write failed: File too large; no rank files were written|");
}

TEST_F(LaunchFiles, RenderFailureWritesNothing) {
  auto w = write_launch_files(prefix, [](placement::RankFormat f) -> std::string {
    if (f == placement::RankFormat::kTorchrun)
      throw std::runtime_error("a bad byte in a host name");
    return "x\n";
  });
  EXPECT_EQ(error_text(w), prefix +
                               ".torchrun.env: cannot render: a bad byte in a host name; no rank "
                               "files were written");
  EXPECT_EQ(entries(dir.path), "");
  w = write_launch_files(prefix, [](placement::RankFormat f) -> std::string {
    if (f == placement::RankFormat::kJson) throw std::bad_alloc();
    return "x\n";
  });
  EXPECT_EQ(error_text(w),
            prefix + ".json: cannot render: out of memory; no rank files were written");
  EXPECT_EQ(entries(dir.path), "");
}

TEST_F(LaunchFiles, RenameFailureTakesBackWhatWasRenamed) {
  // .torchrun.env is a directory (rename(2) cannot replace it) and a stale .json of an
  // earlier run lies there: .rankfile and .hosts are renamed into place, the third rename
  // fails, and then neither those two, nor the stale .json, nor any temporary is left.
  ASSERT_EQ(::mkdir((prefix + ".torchrun.env").c_str(), 0755), 0);
  ASSERT_TRUE(write_file_atomic(prefix + ".torchrun.env/keep", "x"));
  ASSERT_TRUE(write_file_atomic(prefix + ".json", "{\"stale\": true}\n"));
  auto w = write_launch_files(m, layout, prefix, opts);
  EXPECT_EQ(error_text(w), prefix +
                               ".torchrun.env: rename failed: Is a directory; no rank files were "
                               "written");
  EXPECT_EQ(entries(dir.path), "fabricplace.42.torchrun.env");
}

TEST_F(LaunchFiles, ThroughSymlinks) {
  // A symlinked target is replaced where it points (as write_file_atomic does).
  ASSERT_EQ(::mkdir((dir.path + "/real").c_str(), 0755), 0);
  ASSERT_EQ(::symlink("real/r.hosts", (prefix + ".hosts").c_str()), 0);
  auto w = write_launch_files(m, layout, prefix, opts);
  ASSERT_TRUE(w) << w.error().to_string();
  EXPECT_EQ(slurp(dir.path + "/real/r.hosts"), expected(placement::RankFormat::kSlurm));
  EXPECT_EQ(entries(dir.path + "/real"), "r.hosts");
}

TEST(PluginLaunch, PlaceInSrunOrderAndMapIds) {
  // srun ran the tasks in ring order: task id = ring rank, TP groups of consecutive ranks.
  const auto p = place_in_order(7, {4});
  EXPECT_EQ(p.ring_rank, 7u);
  EXPECT_EQ(p.tp_group, 1u);
  EXPECT_EQ(p.tp_rank, 3u);
  EXPECT_EQ(place_in_order(0, {1}).tp_group, 0u);
  // Versions of a host map: same text, same id; one byte apart, another.
  EXPECT_EQ(host_map_id(""), "cbf29ce484222325");  // FNV-1a 64 offset basis
  EXPECT_EQ(host_map_id("leaf a 0 n1\n"), host_map_id("leaf a 0 n1\n"));
  EXPECT_NE(host_map_id("leaf a 0 n1 n2\n"), host_map_id("leaf a 0 n2 n1\n"));
  EXPECT_EQ(loaded_host_map_id("/no/such/host.map"), "");
}

TEST(PluginLaunch, FifosAreRefusedNotRead) {
  // A misconfigured hostmap= or fabric= naming a FIFO must not hang a launch or sbatch.
  ScratchDir dir;
  const std::string fifo = dir.path + "/fabric.hostmap";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto m = load_host_map(fifo);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().to_string(),
            fifo +
                ": not a regular file (expected a host map written by `fabricplace fabric "
                "export --format hostmap`)");
  ExactRequest r;
  r.fabric_path = fifo;
  auto h = exact_hostfile(r);
  ASSERT_FALSE(h);
  EXPECT_EQ(h.error().to_string(), fifo + ": not a regular file (expected the fabric JSON)");
}

// The plugstack log= file: appended to when it is a regular file with one name (root's, when
// this runs as root); a link, a second name of another file, a FIFO, or (as root) a file a
// user made in advance get nothing, and nothing hangs.
TEST(PluginLaunch, LogLinesGoOnlyToAPlainLogFile) {
  ScratchDir dir;
  const auto slurp = [](const std::string& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  const std::string log = dir.path + "/fabricplace.log";
  EXPECT_TRUE(append_log_line(log, "one\n", 4));
  EXPECT_TRUE(append_log_line(log, "two\n", 4));
  EXPECT_EQ(slurp(log), "one\ntwo\n");

  const std::string target = dir.path + "/precious";
  std::ofstream(target) << "keep\n";
  const std::string sym = dir.path + "/sym.log";
  ASSERT_EQ(::symlink(target.c_str(), sym.c_str()), 0);
  EXPECT_FALSE(append_log_line(sym, "x\n", 2));
  const std::string hard = dir.path + "/hard.log";
  ASSERT_EQ(::link(target.c_str(), hard.c_str()), 0);
  EXPECT_FALSE(append_log_line(hard, "x\n", 2));
  EXPECT_EQ(slurp(target), "keep\n");

  const std::string fifo = dir.path + "/fifo.log";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0666), 0);
  EXPECT_FALSE(append_log_line(fifo, "x\n", 2));  // no reader: refused at open, not blocked

  if (::geteuid() == 0) {
    // Another user's file: in a directory others may write, it collects none of root's lines;
    // in a root-owned one only root writes (logrotate's `create 0640 slurm slurm`), it does.
    const std::string shared = dir.path + "/shared";
    ASSERT_EQ(::mkdir(shared.c_str(), 01777), 0);
    ASSERT_EQ(::chmod(shared.c_str(), 01777), 0);
    const std::string theirs = shared + "/theirs.log";
    std::ofstream(theirs) << "";
    ASSERT_EQ(::chown(theirs.c_str(), 65534, 65534), 0);
    EXPECT_FALSE(append_log_line(theirs, "x\n", 2));
    EXPECT_EQ(slurp(theirs), "");
    const std::string rotated = dir.path + "/rotated.log";  // dir.path: root's, mode 0700
    std::ofstream(rotated) << "";
    ASSERT_EQ(::chown(rotated.c_str(), 65534, 65534), 0);
    EXPECT_TRUE(append_log_line(rotated, "y\n", 2));
    EXPECT_EQ(slurp(rotated), "y\n");
  }
  EXPECT_FALSE(append_log_line("", "x\n", 2));
}

// fabric= alone: a missing, unreadable or stale host map is derived from the fabric JSON,
// said once; one of the JSON's generation (or a JSON without one) is used as it is.
TEST(PluginLaunch, HostMapFallsBackOnTheFabricJson) {
  ScratchDir dir;
  auto f = fabric::generate("fat2:leaves=2,down=3,up=2");  // node[001-006], 3 per leaf
  ASSERT_TRUE(f);
  const std::string gen_a = "0123456789abcdef", gen_b = "fedcba9876543210";
  auto json = fabric::to_json(*f);
  const auto at = json.find("  \"origin\"");
  const std::string stamped =
      json.substr(0, at) + "  \"generation\": \"" + gen_a + "\",\n" + json.substr(at);
  const auto write = [&](const std::string& name, const std::string& text) {
    const auto path = dir.path + "/" + name;
    EXPECT_TRUE(write_file_atomic(path, text));
    return path;
  };
  const auto fab = write("fabric.json", stamped);
  EXPECT_EQ(fabric_json_generation(fab), gen_a);
  EXPECT_EQ(fabric_json_generation(write("plain.json", json)), "");
  EXPECT_EQ(fabric_json_generation(dir.path + "/none.json"), "");

  // Missing: derived, with the JSON's generation.
  std::string note;
  auto m = load_host_map(dir.path + "/missing.hostmap", fab, note);
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_EQ(note, dir.path + "/missing.hostmap: no host map; derived from " + fab +
                      " instead (slower: `fabricplace slurm sync` writes the host map)");
  ASSERT_EQ((*m)->names.size(), 6u);
  EXPECT_EQ((*m)->blocks.hosts[(*m)->blocks.of_host[0]].size(), 3u);
  EXPECT_EQ((*m)->generation, gen_a);
  EXPECT_EQ((*m)->origin, fab);  // as slurm sync writes it beside the JSON: the same id
  // Kept: the second call says nothing.
  EXPECT_TRUE(load_host_map(dir.path + "/missing.hostmap", fab, note));
  EXPECT_EQ(note, "");

  // Same generation: used as it is (this one lists only leaf a, so it shows).
  auto map = placement::host_map(placement::prepare(*f));
  map.generation = gen_a;
  const auto own = write(
      "own.hostmap", "fabricplace-hostmap 1\n# generation: " + gen_a + "\nleaf a 0 x1 x2\nend 2\n");
  m = load_host_map(own, fab, note);
  ASSERT_TRUE(m);
  EXPECT_EQ(note, "");
  EXPECT_EQ((*m)->names, (std::vector<std::string>{"x1", "x2"}));

  // Another generation: stale, derived.
  const auto stale = write("stale.hostmap", "fabricplace-hostmap 1\n# generation: " + gen_b +
                                                "\nleaf a 0 x1 x2\nend 2\n");
  m = load_host_map(stale, fab, note);
  ASSERT_TRUE(m);
  EXPECT_EQ(note, stale + " is generation " + gen_b + " but " + fab + " is " + gen_a +
                      " (a stale host map: run `fabricplace slurm sync`, and copy its files to "
                      "every node); derived from " +
                      fab + " instead (slower: `fabricplace slurm sync` writes the host map)");
  EXPECT_EQ((*m)->names.size(), 6u);

  // A JSON without a generation cannot tell: the host map is used.
  const auto plain = write("plain2.json", json);
  m = load_host_map(write("other.hostmap", "fabricplace-hostmap 1\n# generation: " + gen_b +
                                               "\nleaf a 0 y1\nend 1\n"),
                    plain, note);
  ASSERT_TRUE(m);
  EXPECT_EQ(note, "");
  EXPECT_EQ((*m)->names, (std::vector<std::string>{"y1"}));

  // A broken host map with a JSON: derived; neither readable: the host map's error.
  const auto broken = write("broken.hostmap", "fabricplace-hostmap 1\nleaf a\n");
  m = load_host_map(broken, fab, note);
  ASSERT_TRUE(m);
  EXPECT_EQ(note, broken + ":2: expected \"leaf NAME POD HOST...\"; derived from " + fab +
                      " instead (slower: `fabricplace slurm sync` writes the host map)");
  m = load_host_map(dir.path + "/gone.hostmap", dir.path + "/gone.json", note);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().to_string(),
            dir.path + "/gone.hostmap: cannot open: No such file or directory (and " + dir.path +
                "/gone.json could not stand in: " + dir.path +
                "/gone.json: cannot open: No such file or directory)");
}

TEST(PluginSubmit, ExactModeReadsTheRunningJobs) {
  // The running jobs as the plugin writes them from slurm_load_jobs (squeue's format): read
  // by the Slurm-free core; hosts outside the fabric are a note, not a failure.
  ExactRequest r;
  r.fabric_path = "fat2:leaves=2,down=4,up=4";  // node[001-008], 4 per leaf
  r.states =
      "node001 idle\nnode002 idle\nnode003 idle\nnode004 idle\nnode005 alloc\n"
      "node006 alloc\nnode007 idle\nnode008 idle\n";
  r.running = "4711 node[005-006]\n4712_3 cpu[01-02]\n";
  r.nodes = 2;
  r.groups.tp = 16;
  auto p = exact_hostfile(r);
  ASSERT_TRUE(p) << p.error().to_string();
  EXPECT_EQ(p->hostfile, "node007\nnode008\n");
  EXPECT_EQ(p->running_jobs, 1u);
  EXPECT_EQ(p->running_hosts, 2u);
  EXPECT_EQ(p->notes, (std::vector<std::string>{
                          "the cluster's running jobs:2: job 4712_3: none of its 2 host(s) is in "
                          "the fabric (cpu[01-02]); the job is dropped"}));
  // Running jobs that do not read: the placement is made without them, and a note says why.
  r.running = "4711 node[005-006]\n4712 node001 node002\n";
  p = exact_hostfile(r);
  ASSERT_TRUE(p) << p.error().to_string();
  EXPECT_EQ(p->hostfile, "node007\nnode008\n");
  EXPECT_EQ(p->running_jobs, 0u);
  EXPECT_EQ(p->notes, (std::vector<std::string>{
                          "the cluster's running jobs:2: expected \"JOBID HOSTLIST\" (squeue -h "
                          "-t R -o '%i %N') or one hostlist (a ring) per line, got \"4712 node001 "
                          "node002\"; placing without the running jobs"}));
  r.running.clear();  // none running
  p = exact_hostfile(r);
  ASSERT_TRUE(p) << p.error().to_string();
  EXPECT_EQ(p->running_jobs, 0u);
  EXPECT_TRUE(p->notes.empty());
}

TEST(PluginSubmit, ExactModeAvoidsTheRunningJobsLinks) {
  // One uplink per leaf; a running job's ring node001 <-> node005 loads the uplinks of leaf01
  // and leaf02. Without it the fewest leaves win (leaf01 + leaf02); with it, leaf03 + leaf04.
  ExactRequest r;
  r.fabric_path = "fat2:leaves=4,down=4,up=1";  // node[001-016], 4 per leaf
  for (int h = 1; h <= 16; ++h) {
    char line[32];
    std::snprintf(line, sizeof line, "node%03d %s\n", h,
                  h == 1 || h == 5 || h == 12 || h == 16 ? "alloc" : "idle");
    r.states += line;
  }
  r.nodes = 6;
  r.groups.tp = 8;
  auto p = exact_hostfile(r);
  ASSERT_TRUE(p) << p.error().to_string();
  EXPECT_EQ(p->hostfile, "node002\nnode003\nnode004\nnode006\nnode007\nnode008\n");
  r.running = "4711 node[001,005]\n";
  p = exact_hostfile(r);
  ASSERT_TRUE(p) << p.error().to_string();
  EXPECT_EQ(p->running_jobs, 1u);
  EXPECT_EQ(p->hostfile, "node009\nnode010\nnode011\nnode013\nnode014\nnode015\n");
}

TEST(PluginLaunch, GroupRanksAndPaths) {
  EXPECT_EQ(group_ranks({16}, 8, 8)->tp, 16u);
  EXPECT_EQ(group_ranks({16}, 8, 1)->tp, 2u);  // one rank per node driving 8 GPUs
  EXPECT_EQ(group_ranks({4}, 8, 1)->tp, 1u);   // one rank drives two whole TP groups
  EXPECT_EQ(group_ranks({4}, 8, 2)->tp, 1u);
  EXPECT_EQ(group_ranks({8}, 8, 3)->tp, 3u);  // a node's 3 ranks form its group
  EXPECT_EQ(group_ranks({4}, 8, 3).error().message,
            "--fabric-tp 4 with 8 GPUs per node and 3 tasks per node: a TP group would be 4 x 3 "
            "/ 8 tasks, not a whole number, and 3 tasks do not split a node into whole TP "
            "groups");
  EXPECT_EQ(group_ranks({3}, 8, 1).error().message,
            "--fabric-tp 3 with 8 GPUs per node: a TP group smaller than a node must divide it "
            "(8 is not a multiple of 3)");
  EXPECT_EQ(default_host_map_path("/etc/slurm/fabric.json"), "/etc/slurm/fabric.hostmap");
  EXPECT_EQ(default_host_map_path("/etc/slurm.d/fabric"), "/etc/slurm.d/fabric.hostmap");
}

}  // namespace
}  // namespace fabricplace::plugin
