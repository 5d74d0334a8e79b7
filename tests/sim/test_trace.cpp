// SPDX-License-Identifier: GPL-2.0-or-later
// Trace readers: the three real formats (on the heads of the real traces), the GPU -> nodes
// and TP mapping, merging, scaling and limits, and errors that name file and line.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "fabricplace/sim/trace.hpp"

namespace fp = fabricplace;
using namespace fabricplace::sim;

namespace {

const std::string kDir = std::string(FABRICPLACE_TEST_DATA) + "/traces/";

TEST(TraceJobShape, NodesAndTpTileTheJob) {
  // nodes = ceil(gpus / 8); tp = min(nodes x 8, cap), lowered until it tiles.
  struct Case {
    std::uint32_t gpus, cap, nodes, tp;
  } cases[] = {
      {1, 16, 1, 8},   {4, 16, 1, 8},     {8, 16, 1, 8},   {12, 16, 2, 16},
      {16, 16, 2, 16}, {24, 16, 3, 8},  // 3 nodes: 16-GPU groups do not tile, so one node per group
      {32, 16, 4, 16}, {128, 16, 16, 16}, {64, 32, 8, 32}, {48, 32, 6, 24},
      {40, 32, 5, 8},  {8, 4, 1, 4},      {8, 3, 1, 2},  // a TP below the node: a divisor of 8
      {1, 1, 1, 1},
  };
  for (const auto& c : cases) {
    auto s = job_shape(c.gpus, 8, c.cap);
    ASSERT_TRUE(s) << s.error().message;
    EXPECT_EQ(s->nodes, c.nodes) << c.gpus << " cap " << c.cap;
    EXPECT_EQ(s->tp, c.tp) << c.gpus << " cap " << c.cap;
    EXPECT_EQ(s->gpus_per_node, 8u);
    EXPECT_EQ(s->pp, 1u);
  }
  // Caps beyond a node on other node sizes: the largest multiple of a node that tiles.
  auto four = job_shape(40, 4, 32);  // 10 nodes of 4: 32 GPUs = 8 nodes does not tile 10
  ASSERT_TRUE(four);
  EXPECT_EQ(four->nodes, 10u);
  EXPECT_EQ(four->tp, 20u);  // 5 nodes
  EXPECT_EQ(four->hosts_per_group(), 5u);
  auto one = job_shape(7, 1, 16);  // 1-GPU nodes: 7 nodes, 7 GPUs per group
  ASSERT_TRUE(one);
  EXPECT_EQ(one->tp, 7u);
  EXPECT_EQ(job_shape(0, 8, 16).error().message, "a job of no GPUs has no shape");
  EXPECT_EQ(job_shape(8, 0, 16).error().message, "GPUs per node must be at least 1");
  EXPECT_EQ(job_shape(8, 8, 0).error().message, "the TP cap must be at least 1 GPU");
}

TEST(Trace, PhillyHead) {
  auto t = read_traces({kDir + "philly-head300.csv"}, {});
  ASSERT_TRUE(t) << t.error().to_string();
  EXPECT_EQ(t->format, TraceFormat::kPhilly);
  ASSERT_EQ(t->jobs.size(), 300u);
  // "0,0.0,CLOS,1,1,3613033.0" and "112,2601211.0,CLOS,8+8,16,1453510.0"
  EXPECT_EQ(t->jobs[0].id, "0");
  EXPECT_EQ(t->jobs[0].submit, 0);
  EXPECT_EQ(t->jobs[0].duration, 3613033.0);
  EXPECT_EQ(t->jobs[0].gpus, 1u);
  EXPECT_EQ(t->jobs[0].shape.nodes, 1u);
  EXPECT_EQ(t->jobs[0].line, 2u);
  EXPECT_EQ(t->jobs[112].id, "112");
  EXPECT_EQ(t->jobs[112].submit, 2601211.0);
  EXPECT_EQ(t->jobs[112].gpus, 16u);
  EXPECT_EQ(t->jobs[112].shape.nodes, 2u);
  EXPECT_EQ(t->jobs[112].shape.tp, 16u);
}

TEST(Trace, ItpHeadRebasedOnFirstSubmission) {
  auto t = read_traces({kDir + "itp-cluster04-head300.csv"}, {});
  ASSERT_TRUE(t) << t.error().to_string();
  EXPECT_EQ(t->format, TraceFormat::kItp);
  ASSERT_EQ(t->jobs.size(), 300u);
  // c9c620ea-...,5810,288476,16: the first submission becomes time 0.
  EXPECT_EQ(t->jobs[0].id, "c9c620ea-4336-c1a9-8abe-e26bd13076b8");
  EXPECT_EQ(t->jobs[0].submit, 0);
  EXPECT_EQ(t->jobs[1].submit, 3);
  EXPECT_EQ(t->jobs[0].duration, 288476);
  EXPECT_EQ(t->jobs[0].shape.nodes, 2u);
}

TEST(Trace, SwfGzipHead) {
  auto t = read_traces({kDir + "ricc-2010-head300.swf.gz"}, {});
  ASSERT_TRUE(t) << t.error().to_string();
  EXPECT_EQ(t->format, TraceFormat::kSwf);
  ASSERT_EQ(t->jobs.size(), 300u);
  // "1 0 0 222 80 ...": 80 processors = 80 slots = 10 nodes of 8.
  EXPECT_EQ(t->jobs[0].id, "1");
  EXPECT_EQ(t->jobs[0].duration, 222);
  EXPECT_EQ(t->jobs[0].gpus, 80u);
  EXPECT_EQ(t->jobs[0].shape.nodes, 10u);
  EXPECT_EQ(t->jobs[1].submit, 1136);
  EXPECT_EQ(t->jobs[1].shape.nodes, 16u);
}

TEST(Trace, MergedFilesInSubmitOrderWithPrefixedIds) {
  const std::string dir = ::testing::TempDir();
  auto write = [&](const std::string& name, const std::string& text) {
    FILE* f = std::fopen((dir + name).c_str(), "w");
    std::fputs(text.c_str(), f);
    std::fclose(f);
    return dir + name;
  };
  const auto a =
      write("clusterA.csv", "job_id,submission_time,duration,num_gpu\nj1,100,10,8\nj2,400,10,8\n");
  const auto b = write("clusterB.csv", "job_id,submission_time,duration,num_gpu\nk1,250,5,16\n");
  TraceOptions o;
  o.arrival_scale = 0.5;
  auto t = read_traces({a, b}, o);
  ASSERT_TRUE(t) << t.error().to_string();
  ASSERT_EQ(t->jobs.size(), 3u);
  EXPECT_EQ(t->jobs[0].id, "clusterA:j1");
  EXPECT_EQ(t->jobs[1].id, "clusterB:k1");
  EXPECT_EQ(t->jobs[2].id, "clusterA:j2");
  EXPECT_EQ(t->jobs[1].submit, 75);  // (250 - 100) x 0.5
  EXPECT_EQ(t->jobs[2].submit, 150);
  EXPECT_EQ(t->jobs[1].file, 1u);
  o.skip_jobs = 1;
  o.max_jobs = 1;
  t = read_traces({a, b}, o);
  ASSERT_TRUE(t);
  ASSERT_EQ(t->jobs.size(), 1u);
  EXPECT_EQ(t->jobs[0].id, "clusterB:k1");
  EXPECT_EQ(t->jobs[0].submit, 0);  // rebased on the first kept job
}

TEST(Trace, ByteOrderMarkIsIgnored) {
  auto t =
      parse_trace("\xEF\xBB\xBFjob_id,submission_time,duration,num_gpu\na,0,10,8\n", "bom.csv", {});
  ASSERT_TRUE(t) << t.error().to_string();
  EXPECT_EQ(t->format, TraceFormat::kItp);
  EXPECT_EQ(t->jobs.size(), 1u);
}

TEST(Trace, DuplicateJobIdsAreAnError) {
  const std::string dir = ::testing::TempDir();
  std::filesystem::create_directories(dir + "d_a");
  std::filesystem::create_directories(dir + "d_b");
  auto write = [&](const std::string& name, const std::string& text) {
    FILE* f = std::fopen((dir + name).c_str(), "w");
    std::fputs(text.c_str(), f);
    std::fclose(f);
    return dir + name;
  };
  const auto one =
      write("dup.csv", "job_id,submission_time,duration,num_gpu\na,0,1,8\nb,1,1,8\na,2,1,8\n");
  auto t = read_traces({one}, {});
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().to_string(), one + ":4: job id \"a\" again (first at " + one + ":2)");
  // Two files of one name in different directories: their ids collide after prefixing.
  const auto a = write("d_a/x.csv", "job_id,submission_time,duration,num_gpu\nj,0,1,8\n");
  const auto b = write("d_b/x.csv", "job_id,submission_time,duration,num_gpu\nj,5,1,8\n");
  t = read_traces({a, b}, {});
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code, fp::ErrorCode::kDuplicate);
  EXPECT_EQ(t.error().to_string(), b + ":2: job id \"x:j\" again (first at " + a + ":2)");
}

TEST(Trace, RowsThatCannotRunAreSkippedAndCounted) {
  auto t = parse_trace(
      "; SWF\n1 0 0 10 8 -1 -1 8 -1 -1 1 1 1 -1 1 -1 -1 -1\n"
      "2 5 0 -1 8 -1 -1 8 -1 -1 5 1 1 -1 1 -1 -1 -1\n"
      "3 6 0 10 -1 -1 -1 -1 -1 -1 5 1 1 -1 1 -1 -1 -1\n"
      "4 7 0 10 -1 -1 -1 16 -1 -1 1 1 1 -1 1 -1 -1 -1\n",
      "x.swf", {});
  ASSERT_TRUE(t) << t.error().to_string();
  ASSERT_EQ(t->jobs.size(), 2u);
  EXPECT_EQ(t->jobs[1].id, "4");
  EXPECT_EQ(t->jobs[1].gpus, 16u);  // requested processors when none were allocated
  ASSERT_EQ(t->notes.size(), 2u);
  EXPECT_EQ(t->notes[0], "x.swf: skipped 1 rows with no GPUs or processors");
  EXPECT_EQ(t->notes[1], "x.swf: skipped 1 rows with an unknown (negative) run time");
}

TEST(Trace, ErrorsNameFileLineAndWhatWasExpected) {
  auto e = [](const std::string& text, const std::string& file = "t.csv") {
    auto t = parse_trace(text, file, {});
    EXPECT_FALSE(t);
    return t ? std::string() : t.error().to_string();
  };
  EXPECT_EQ(e("#job id,arrival time (sec),topology,shape,size,duration (sec)\n1,0,CLOS,1,1\n"),
            "t.csv:2: expected 6 comma-separated fields (job id, arrival time (sec), topology, "
            "shape, size, duration (sec)), found 5");
  EXPECT_EQ(e("#job id,arrival time (sec),topology,shape,size,duration (sec)\n1,x,CLOS,1,1,5\n"),
            "t.csv:2: arrival time \"x\" is not a non-negative number");
  EXPECT_EQ(e("job_id,submission_time,duration,num_gpu\na,1,2,3\nb,1,2,three\n"),
            "t.csv:3: num_gpu \"three\" is not an integer");
  EXPECT_EQ(e("job_id,submission_time,duration,num_gpu\na,-5,2,3\n"),
            "t.csv:2: submission_time \"-5\" is not a non-negative number");
  EXPECT_EQ(e("1 2 3\n", "x.swf"),
            "x.swf:1: expected the 18 whitespace-separated fields of the Standard Workload "
            "Format, found 3");
  EXPECT_EQ(e("hello\n", "mystery.txt"),
            "mystery.txt:1: cannot tell the trace format: expected a Philly CSV ('#job "
            "id,arrival time (sec),topology,shape,size,duration (sec)'), an ITP CSV "
            "('job_id,submission_time,duration,num_gpu') or an SWF log (.swf, ';' header); "
            "name it with --trace-format");
  auto missing = read_traces({"/nonexistent/trace.csv"}, {});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().to_string(), "/nonexistent/trace.csv: cannot open: No such file or directory");
}

}  // namespace
