// SPDX-License-Identifier: GPL-2.0-or-later
// Running jobs as placement reads them (placement/running.hpp): squeue output, the rings
// format of `rankfile --running`, and JSON; exact hosts in rank order, exact messages.
#include "fabricplace/placement/running.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace fabricplace::placement {
namespace {

using test::gen;

// "id@line: host host ..." per job, for exact comparisons.
std::string jobs_of(const fabric::Fabric& f, const RunningJobs& r) {
  std::string out;
  for (const auto& j : r.jobs) {
    out += j.id + "@" + std::to_string(j.line) + ":";
    for (auto h : j.hosts) out += " " + f.host(h).name;
    out += "\n";
  }
  return out;
}
std::string error_of(const Result<RunningJobs>& r) {
  return r ? "(no error)" : r.error().to_string();
}

const fabric::Fabric& fat2() {
  static const auto f = gen("fat2:leaves=2,down=4,up=4");  // node[001-008], 4 per leaf
  return f;
}

TEST(RunningJobs, SqueueOutputInHostlistOrder) {
  const auto& f = fat2();
  auto r = running_from_lines(f,
                              "4711 node[003,001]\n"
                              "4712\tnode[005-006]\r\n"
                              "\n"
                              "# a comment\n"
                              "  4713_2   node007  \n"
                              "4714+1 node008\n",
                              "squeue");
  ASSERT_TRUE(r) << error_of(r);
  EXPECT_EQ(jobs_of(f, *r),
            "4711@1: node003 node001\n"
            "4712@2: node005 node006\n"
            "4713_2@5: node007\n"
            "4714+1@6: node008\n");
  EXPECT_TRUE(r->warnings.empty());
  // No running job is no error: squeue prints nothing.
  auto none = running_from_lines(f, "", "squeue");
  ASSERT_TRUE(none) << error_of(none);
  EXPECT_TRUE(none->jobs.empty());
  EXPECT_TRUE(none->warnings.empty());
}

TEST(RunningJobs, RingsNumberedByLine) {
  const auto& f = fat2();
  // tests/data/running-rings.txt and -reverse.txt, the older `rankfile --running` format.
  auto r = running_from_lines(f,
                              "# rings of running jobs, one per line, hosts in rank order\n"
                              "node[001-002,005-006]\n"
                              "node008,node006x\n"
                              "node007,node004\n",
                              "rings.txt");
  ASSERT_TRUE(r) << error_of(r);
  EXPECT_EQ(jobs_of(f, *r),
            "2@2: node001 node002 node005 node006\n"
            "3@3: node008\n"
            "4@4: node007 node004\n");
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_EQ(r->warnings[0],
            "rings.txt:3: job 3: 1 host(s) not in the fabric, dropped from the job: node006x");
  // Both kinds in one file, told apart line by line.
  auto mixed = running_from_lines(f, "node[001-002]\n99 node[003-004]\n", "mixed.txt");
  ASSERT_TRUE(mixed) << error_of(mixed);
  EXPECT_EQ(jobs_of(f, *mixed), "1@1: node001 node002\n99@2: node003 node004\n");
  // A job id alone (squeue's %N left out) is not a ring of a host called so.
  EXPECT_EQ(error_of(running_from_lines(f, "4711 node001\n4712_3\n", "squeue.txt")),
            "squeue.txt:2: expected \"JOBID HOSTLIST\" (squeue -h -t R -o '%i %N') or one "
            "hostlist (a ring) per line, got \"4712_3\": a job id without its hosts");
}

TEST(RunningJobs, JsonHostsAndHostlistsInRankOrder) {
  const auto& f = fat2();
  auto r = running_from_json(f,
                             "{\n"
                             "  \"4711\": [\"node004\", \"node[001-002]\"],\n"
                             "  \"train-a\": [\n"
                             "    \"node008\",\n"
                             "    \"node005\"\n"
                             "  ],\n"
                             "  \"4713\": []\n"
                             "}\n",
                             "running.json");
  ASSERT_TRUE(r) << error_of(r);
  EXPECT_EQ(jobs_of(f, *r), "4711@2: node004 node001 node002\ntrain-a@3: node008 node005\n");
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_EQ(r->warnings[0], "running.json:7: job 4713 names no host; the job is dropped");
  auto empty = running_from_json(f, "{}", "running.json");
  ASSERT_TRUE(empty) << error_of(empty);
  EXPECT_TRUE(empty->jobs.empty());
}

TEST(RunningJobs, ParseRunningTellsTheFormatsApart) {
  const auto& f = fat2();
  auto json = parse_running(f, "\n \t{\"7\": [\"node002\"]}", "r");
  ASSERT_TRUE(json) << error_of(json);
  EXPECT_EQ(jobs_of(f, *json), "7@2: node002\n");
  auto squeue = parse_running(f, "7 node002\n", "r");
  ASSERT_TRUE(squeue) << error_of(squeue);
  EXPECT_EQ(jobs_of(f, *squeue), "7@1: node002\n");
  auto rings = parse_running(f, "\n\nnode002,node001\n", "r");
  ASSERT_TRUE(rings) << error_of(rings);
  EXPECT_EQ(jobs_of(f, *rings), "3@3: node002 node001\n");
  auto blank = parse_running(f, " \n\n", "r");
  ASSERT_TRUE(blank) << error_of(blank);
  EXPECT_TRUE(blank->jobs.empty());
  // A JSON array is JSON of the wrong shape, not a hostlist.
  EXPECT_EQ(error_of(parse_running(f, "\n[\"node001\", \"node002\"]\n", "r")),
            "r:2: expected a JSON object of job id -> [host or hostlist, ...] in rank order");
  // '#' comments are for the line formats: a JSON file does not start with one.
  EXPECT_EQ(error_of(parse_running(f, "# jobs\n{\"7\": [\"node002\"]}\n", "r")),
            "r:2: expected \"JOBID HOSTLIST\" (squeue -h -t R -o '%i %N') or one hostlist (a "
            "ring) per line, got \"{\"7\": [\"node002\"]}\"");
}

TEST(RunningJobs, HostsOutsideTheFabricAreDroppedWithAWarning) {
  const auto& f = fat2();
  auto r = running_from_lines(f,
                              "10 node[001-002],cpu[01-03]\n"
                              "11 cpu[04-05]\n"
                              "12 node003\n",
                              "squeue");
  ASSERT_TRUE(r) << error_of(r);
  EXPECT_EQ(jobs_of(f, *r), "10@1: node001 node002\n12@3: node003\n");
  ASSERT_EQ(r->warnings.size(), 2u);
  EXPECT_EQ(r->warnings[0],
            "squeue:1: job 10: 3 host(s) not in the fabric, dropped from the job: cpu[01-03]");
  EXPECT_EQ(r->warnings[1],
            "squeue:2: job 11: none of its 2 host(s) is in the fabric (cpu[04-05]); the job is "
            "dropped");
}

TEST(RunningJobs, AHostInTwoJobsStaysWithTheLaterJob) {
  const auto& f = fat2();
  auto r = running_from_lines(f,
                              "20 node[001-004]\n"
                              "21 node002\n"
                              "22 node[005-006]\n"
                              "23 node[006,003,005]\n",
                              "squeue");
  ASSERT_TRUE(r) << error_of(r);
  // 20 keeps node001 and node004 in its order; 22 loses both hosts and is dropped.
  EXPECT_EQ(jobs_of(f, *r),
            "20@1: node001 node004\n21@2: node002\n23@4: node006 node003 node005\n");
  ASSERT_EQ(r->warnings.size(), 3u);
  EXPECT_EQ(r->warnings[0],
            "squeue:2: job 21 shares 1 host(s) with earlier jobs (the first: job 20, line 1): "
            "node002; the later job keeps them");
  EXPECT_EQ(r->warnings[1],
            "squeue:4: job 23 shares 3 host(s) with earlier jobs (the first: job 22, line 3): "
            "node[003,005-006]; the later job keeps them");
  EXPECT_EQ(r->warnings[2],
            "squeue:3: job 22: all its hosts are in later jobs; the job is dropped");
}

TEST(RunningJobs, WarningsAreCountedAfterTheFirstTwenty) {
  const auto& f = fat2();
  std::string text;
  for (int i = 1; i <= 25; ++i) text += std::to_string(i) + " gpu" + std::to_string(i) + "\n";
  text += "26 node001\n";
  auto r = running_from_lines(f, text, "squeue");
  ASSERT_TRUE(r) << error_of(r);
  EXPECT_EQ(jobs_of(f, *r), "26@26: node001\n");
  ASSERT_EQ(r->warnings.size(), 21u);
  EXPECT_EQ(r->warnings[19],
            "squeue:20: job 20: none of its 1 host(s) is in the fabric (gpu20); the job is "
            "dropped");
  EXPECT_EQ(r->warnings[20], "squeue: 5 more warning(s) about the running jobs not shown");
}

TEST(RunningJobs, ErrorsNameTheFileTheLineAndWhatWasExpected) {
  const auto& f = fat2();
  const std::pair<const char*, const char*> lines[] = {
      {"1 node001\n2 node[002-003],node002\n", "squeue:2: job 2 names host node002 twice"},
      {"node[001-002,001]\n", "rings.txt:1: job 1 names host node001 twice"},
      {"5 node001\n\n5 node002\n", "squeue:3: job 5 is named twice (first on line 1)"},
      {"5 node001 node002\n",
       "squeue:1: expected \"JOBID HOSTLIST\" (squeue -h -t R -o '%i %N') or one hostlist (a "
       "ring) per line, got \"5 node001 node002\""},
      {"node001 node002\n",
       "squeue:1: expected \"JOBID HOSTLIST\" (squeue -h -t R -o '%i %N') or one hostlist (a "
       "ring) per line, got \"node001 node002\""},
      {"4711_[1-3] node001\n",
       "squeue:1: expected \"JOBID HOSTLIST\" (squeue -h -t R -o '%i %N') or one hostlist (a "
       "ring) per line, got \"4711_[1-3] node001\""},
      {"7 node[001-\n", "squeue:1: job 7: hostlist \"node[001-\", column 5: '[' without ']'"},
  };
  for (const auto& [text, message] : lines) {
    const std::string file =
        std::string(text).find(' ') == std::string::npos ? "rings.txt" : "squeue";
    EXPECT_EQ(error_of(running_from_lines(f, text, file)), message) << text;
  }
  const std::pair<const char*, const char*> json[] = {
      {"{\n\"1\": [\"node001\",\n \"node[001-002]\"]}", "r.json:3: job 1 names host node001 twice"},
      {"{\"1\": [\"node001\"],\n\"1\": [\"node002\"]}",
       "r.json:2: job 1 is named twice (first on line 1)"},
      {"[[\"node001\"]]",
       "r.json:1: expected a JSON object of job id -> [host or hostlist, ...] in rank order"},
      {"{\"1\":\n \"node001\"}",
       "r.json:2: job 1: expected an array of host names or hostlists, got a string"},
      {"{\"1\": [\"node001\", 7]}",
       "r.json:1: job 1: expected a host name or hostlist (a string), got a number"},
      {"{\"1\": [[\"node001\"]]}",
       "r.json:1: job 1: expected a host name or hostlist (a string), got an array"},
      {"{\"1\": {\"hosts\": []}}",
       "r.json:1: job 1: expected an array of host names or hostlists, got an object"},
      {"{\"1\": [\"\"]}", "r.json:1: job 1: hostlist \"\", column 1: empty host name"},
      {"{\"job 1\": [\"node001\"]}",
       "r.json:1: job id \"job 1\" holds a blank; expected an id such as \"4711\" (at most 128 "
       "bytes, no blanks)"},
      {"{\"a\\u0007\": [\"node001\"]}",
       "r.json:1: job id \"a\\x07\" holds a control or invisible character; expected an id such "
       "as \"4711\" (at most 128 bytes, no blanks)"},
      {"{\n\"1\": [\"node001\"],\n",
       "r.json:3: invalid JSON: parse error at line 3, column 1: syntax error while parsing "
       "object key - unexpected end of input; expected string literal"},
  };
  for (const auto& [text, message] : json)
    EXPECT_EQ(error_of(running_from_json(f, text, "r.json")), message) << text;
  // Nesting ends at the first container where a host belongs: no depth, no recursion.
  const std::string deep = "{\"1\": [" + std::string(100'000, '[') + "}";
  EXPECT_EQ(error_of(running_from_json(f, deep, "r.json")),
            "r.json:1: job 1: expected a host name or hostlist (a string), got an array");
  // Lines are found in one pass, whatever the number of jobs.
  std::string many = "{\n";
  for (int i = 0; i < 40'000; ++i) {
    // Appended piece by piece: "\"" + std::to_string(i) trips GCC 12's -Wrestrict at -O3.
    many += '"';
    many += std::to_string(i);
    many += "\": [\"node001\"],\n";
  }
  many += "\"x\": [\"node00[1\"]\n}\n";
  EXPECT_EQ(error_of(running_from_json(f, many, "r.json")),
            "r.json:40002: job x: hostlist \"node00[1\", column 7: '[' without ']'");
}

TEST(RunningJobs, ErrorCodes) {
  const auto& f = fat2();
  EXPECT_EQ(running_from_lines(f, "1 node[001,001]\n", "s").error().code, ErrorCode::kDuplicate);
  EXPECT_EQ(running_from_lines(f, "1 a b\n", "s").error().code, ErrorCode::kSyntax);
  EXPECT_EQ(running_from_json(f, "[", "s").error().code, ErrorCode::kSyntax);
}

}  // namespace
}  // namespace fabricplace::placement
