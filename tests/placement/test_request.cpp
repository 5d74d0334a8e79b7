// SPDX-License-Identifier: GPL-2.0-or-later
// Job requests, host states and policy weights: the inputs of every placement.
#include <gtest/gtest.h>

#include "fabricplace/placement/placement.hpp"
#include "fabricplace/placement/request.hpp"
#include "test_support.hpp"

namespace fabricplace::placement {
namespace {

using test::gen;

JobRequest job(std::uint32_t nodes, std::uint32_t tp = 0, std::uint32_t gpn = 8,
               std::uint32_t pp = 1) {
  JobRequest j;
  j.nodes = nodes;
  j.tp = tp;
  j.gpus_per_node = gpn;
  j.pp = pp;
  return j;
}

std::string error_of(const Result<void>& r) {
  return r ? "" : r.error().message;
}

TEST(JobRequest, TpGroupShape) {
  EXPECT_EQ(job(8).group_nodes(), 1u);
  EXPECT_EQ(job(8).tp_size(), 8u);
  EXPECT_EQ(job(8, 16).group_nodes(), 2u);
  EXPECT_EQ(job(8, 16).groups(), 4u);
  EXPECT_EQ(job(8, 4).group_nodes(), 1u);
  EXPECT_EQ(job(6, 32, 4).group_nodes(), 8u);
}

TEST(JobRequest, ValidateNamesWhatDoesNotTile) {
  EXPECT_EQ(error_of(validate(job(8, 16))), "");
  EXPECT_EQ(error_of(validate(job(3, 16))),
            "--tp 16 does not tile the job: 3 nodes x 8 GPUs per node = 24 GPUs, not a "
            "multiple of 16");
  EXPECT_EQ(error_of(validate(job(4, 12))),
            "--tp 12 with 8 GPUs per node: a TP group larger than a node must span whole nodes "
            "(a multiple of 8)");
  EXPECT_EQ(error_of(validate(job(4, 3))),
            "--tp 3 with 8 GPUs per node: a TP group smaller than a node must divide it (8 is "
            "not a multiple of 3)");
  EXPECT_EQ(error_of(validate(job(0))), "--nodes must be at least 1");
  EXPECT_EQ(error_of(validate(job(8, 16, 8, 2))), "");
  EXPECT_EQ(error_of(validate(job(6, 16, 8, 3))), "");
  EXPECT_EQ(error_of(validate(job(3, 4, 8, 2))),
            "--pp 2: 3 nodes do not split into equal pipeline stages");
  EXPECT_EQ(error_of(validate(job(6, 8, 8, 4))),
            "--pp 4 with --tp 8 does not tile the job: 48 GPUs are not a multiple of TP x PP = "
            "32");
}

TEST(HostStates, SlurmStatesAndFlags) {
  const std::pair<const char*, HostState> cases[] = {
      {"idle", HostState::kFree},     {"IDLE", HostState::kFree},
      {"idle~", HostState::kFree},    {"idle*", HostState::kDown},
      {"idle#", HostState::kBusy},    {"idle-", HostState::kBusy},
      {"alloc", HostState::kBusy},    {"mix", HostState::kBusy},
      {"mix-", HostState::kBusy},     {"comp", HostState::kBusy},
      {"resv", HostState::kBusy},     {"drain", HostState::kDrained},
      {"drng", HostState::kDrained},  {"drain*", HostState::kDrained},
      {"maint", HostState::kDrained}, {"down", HostState::kDown},
      {"down*", HostState::kDown},    {"fail", HostState::kDown},
      {"unk*", HostState::kDown},     {"allocated", HostState::kBusy},
  };
  for (const auto& [text, want] : cases) {
    auto s = parse_slurm_state(text);
    ASSERT_TRUE(s) << text;
    EXPECT_EQ(*s, want) << text;
  }
  auto bad = parse_slurm_state("sleepy");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ErrorCode::kUsage);
  EXPECT_NE(bad.error().message.find("unknown node state \"sleepy\""), std::string::npos);
}

TEST(HostStates, FreeAndBusyLists) {
  const auto f = gen("fat2:leaves=2,down=4,up=4");
  auto s = free_hosts(f, "node[002-003]");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->count(HostState::kFree), 2u);
  EXPECT_TRUE(s->free(fabric::HostId{1}));
  EXPECT_FALSE(s->free(fabric::HostId{0}));
  auto b = busy_hosts(f, "node001");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->count(HostState::kBusy), 1u);
  EXPECT_EQ(b->count(HostState::kFree), 7u);

  // An empty list is a list: nothing free, or nothing busy.
  EXPECT_EQ(free_hosts(f, "")->count(HostState::kFree), 0u);
  EXPECT_EQ(busy_hosts(f, " ")->count(HostState::kFree), 8u);

  auto unknown = free_hosts(f, "node[007-012]");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code, ErrorCode::kUsage);
  EXPECT_EQ(unknown.error().message, "--free: 4 host(s) not in the fabric: node[009-012]");
  auto syntax = busy_hosts(f, "node[1-");
  ASSERT_FALSE(syntax);
  EXPECT_EQ(syntax.error().code, ErrorCode::kUsage);
  EXPECT_EQ(syntax.error().message.rfind("--busy: ", 0), 0u) << syntax.error().message;
}

TEST(HostStates, JsonStateFile) {
  const auto f = gen("fat2:leaves=2,down=4,up=4");
  auto s = states_from_json(f,
                            "{\n  \"node001\": \"idle\",\n  \"node002\": \"alloc\",\n"
                            "  \"node003\": \"drain*\",\n  \"node004\": \"down\",\n"
                            "  \"node005\": \"mix\",\n  \"node006\": \"idle\",\n"
                            "  \"node007\": \"idle\",\n  \"gpu999\": \"idle\"\n}\n",
                            "states.json");
  ASSERT_TRUE(s) << s.error().to_string();
  EXPECT_EQ(s->state[0], HostState::kFree);
  EXPECT_EQ(s->state[1], HostState::kBusy);
  EXPECT_EQ(s->state[2], HostState::kDrained);
  EXPECT_EQ(s->state[3], HostState::kDown);
  EXPECT_EQ(s->state[7], HostState::kUnknown);
  ASSERT_EQ(s->warnings.size(), 2u);
  EXPECT_EQ(s->warnings[0], "states.json: 1 host(s) not in the fabric ignored: gpu999");
  EXPECT_EQ(s->warnings[1],
            "states.json: 1 host(s) of the fabric not reported, not placed on: node008");

  auto bad = states_from_json(f, "{\n  \"node001\": \"idle\",\n  \"node002\": \"napping\"\n}",
                              "states.json");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().file, "states.json");
  EXPECT_EQ(bad.error().line, 3);
  EXPECT_EQ(bad.error().code, ErrorCode::kSyntax);
  EXPECT_EQ(bad.error().message.rfind("\"node002\": unknown node state \"napping\"", 0), 0u)
      << bad.error().message;
  auto not_string = states_from_json(f, "{\"node001\": 3}", "s.json");
  ASSERT_FALSE(not_string);
  EXPECT_EQ(not_string.error().message,
            "\"node001\": expected a state string such as \"idle\", got a number");
  auto broken = states_from_json(f, "{\n\"node001\": \"idle\",\n", "s.json");
  ASSERT_FALSE(broken);
  EXPECT_EQ(broken.error().code, ErrorCode::kSyntax);
  EXPECT_EQ(broken.error().line, 3);
  // A number beyond double's range: an error with its line, not an escaped exception.
  auto huge = states_from_json(f, "{\n\"node001\": 1e400}", "s.json");
  ASSERT_FALSE(huge);
  EXPECT_EQ(huge.error().to_string(),
            "s.json:2: invalid JSON: number overflow parsing '1e400'");
  // Nesting ends at the first container where a state belongs: no depth, no recursion.
  const std::string deep = "{\"node001\": " + std::string(100'000, '[') + "}";
  auto nested = states_from_json(f, deep, "s.json");
  ASSERT_FALSE(nested);
  EXPECT_EQ(nested.error().to_string(),
            "s.json:1: \"node001\": expected a state string such as \"idle\", got an array");
  auto top = states_from_json(f, "[1, 2]", "s.json");
  ASSERT_FALSE(top);
  EXPECT_EQ(top.error().to_string(), "s.json:1: expected a JSON object of host -> Slurm state");
  // Lines are found in one pass, whatever the number of hosts.
  std::string many = "{\n";
  for (int i = 0; i < 40'000; ++i) many += "\"h" + std::to_string(i) + "\": \"idle\",\n";
  many += "\"node001\": \"sleepy\"\n}\n";
  auto late = states_from_json(f, many, "s.json");
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error().line, 40'002);
}

TEST(HostStates, SinfoOutput) {
  const auto f = gen("fat2:leaves=2,down=4,up=4");
  // sinfo -N prints a node once per partition: the least usable state wins.
  auto s = states_from_sinfo(f,
                             "node001 idle\nnode002 alloc\nnode002 idle\nnode003 drain\n"
                             "node004 down*\nnode005 idle\nnode006 idle\nnode007 mix\n"
                             "node008 idle\n",
                             "sinfo");
  ASSERT_TRUE(s) << s.error().to_string();
  EXPECT_EQ(s->state[1], HostState::kBusy);
  EXPECT_EQ(s->count(HostState::kFree), 4u);
  EXPECT_TRUE(s->warnings.empty());
  auto bad = states_from_sinfo(f, "node001 idle\nnode002\n", "saved.txt");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().to_string(),
            "saved.txt:2: expected \"HOST STATE\" (sinfo -h -N -o '%N %t'), got \"node002\"");
}

TEST(Weights, BundledPolicyConfigIsTheDefault) {
  const std::string path = std::string(FABRICPLACE_SOURCE_DIR) + "/etc/fabricplace/policy.conf";
  auto w = parse_weights(test::slurp(path), path);
  ASSERT_TRUE(w) << w.error().to_string();
  const Weights d;
  EXPECT_EQ(w->slowdown, d.slowdown);
  EXPECT_EQ(w->contention, d.contention);
  EXPECT_EQ(w->leaves, d.leaves);
  EXPECT_EQ(w->pods, d.pods);
  EXPECT_EQ(w->ring_crossings, d.ring_crossings);
  EXPECT_EQ(w->leftover, d.leftover);
  EXPECT_EQ(w->fresh_block, d.fresh_block);
  EXPECT_EQ(w->tp_split, d.tp_split);
  EXPECT_EQ(w->unhealthy_capacity, d.unhealthy_capacity);
  // Every line of the bundled file is one of these (a stale one would fail to parse).
}

TEST(Weights, Errors) {
  auto w = parse_weights("slowdown = 0\nleftover=2.5 # best fit\n", "p.conf");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->slowdown, 0);
  EXPECT_EQ(w->leftover, 2.5);
  EXPECT_EQ(parse_weights("leaves = 1\noversubscription = 20\n", "p.conf").error().to_string(),
            "p.conf:2: oversubscription is no longer a weight: links enter the objective "
            "through their capacity (rate as read, unhealthy_capacity for links past their "
            "error thresholds; docs/placement.md); remove the line");
  EXPECT_EQ(parse_weights("unhealthy_host = 10000\n", "p.conf").error().to_string(),
            "p.conf:1: unhealthy_host is no longer a weight: links enter the objective "
            "through their capacity (rate as read, unhealthy_capacity for links past their "
            "error thresholds; docs/placement.md); remove the line");
  EXPECT_EQ(parse_weights("unhealthy_capacity = 0\n", "p.conf").error().to_string(),
            "p.conf:1: unhealthy_capacity: expected a fraction of the link's rate, more than 0 "
            "and at most 1, got \"0\"");
  EXPECT_EQ(parse_weights("unhealthy_capacity = 1.5\n", "p.conf").error().to_string(),
            "p.conf:1: unhealthy_capacity: expected a fraction of the link's rate, more than 0 "
            "and at most 1, got \"1.5\"");
  EXPECT_EQ(parse_weights("\n\nspeed = 3\n", "p.conf").error().to_string().substr(0, 34),
            "p.conf:3: unknown weight \"speed\", ");
  EXPECT_EQ(parse_weights("pods = -1\n", "p.conf").error().to_string(),
            "p.conf:1: pods: expected a non-negative number, got \"-1\"");
  EXPECT_EQ(parse_weights("pods = 1\npods = 2\n", "p.conf").error().to_string(),
            "p.conf:2: pods already set at line 1");
  EXPECT_EQ(parse_weights("pods\n", "p.conf").error().to_string(),
            "p.conf:1: expected \"name = weight\", got \"pods\"");
}

}  // namespace
}  // namespace fabricplace::placement
