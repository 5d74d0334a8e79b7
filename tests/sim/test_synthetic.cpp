// SPDX-License-Identifier: GPL-2.0-or-later
// The synthetic LLM-heavy trace (sim/synthetic.hpp): exact jobs for a seed and a fingerprint
// of a whole trace, the stated GPU-time share and offered load, the readers' TP rule, the
// SWF round trip, the spec through read_traces, and errors that name the key.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>

#include "fabricplace/sim/synthetic.hpp"

namespace fp = fabricplace;
using namespace fabricplace::sim;

namespace {

Trace gen(const std::string& spec, TraceOptions o = {}) {
  auto t = generate_trace(spec, o);
  EXPECT_TRUE(t) << (t ? "" : t.error().to_string());
  return t ? *t : Trace{};
}

std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

TEST(Synthetic, OwnLogAndExpAgreeWithLibm) {
  double worst_log = 0, worst_exp = 0;
  for (double x = 1e-300; x < 1e300; x *= 1.37) {
    const double want = std::log(x);
    if (want != 0)
      worst_log = std::max(worst_log, std::abs(detail::det_log(x) - want) / std::abs(want));
  }
  for (double x = -700; x < 700; x += 0.0137)
    worst_exp = std::max(worst_exp, std::abs(detail::det_exp(x) - std::exp(x)) / std::exp(x));
  EXPECT_LT(worst_log, 4e-16);
  EXPECT_LT(worst_exp, 4e-16);
  EXPECT_EQ(detail::det_log(1), 0);
  EXPECT_EQ(detail::det_exp(0), 1);
}

TEST(Synthetic, FirstJobsOfSeedOneAreFixed) {
  const std::string spec = "llm:jobs=2000,seed=1,load=0.8,hosts=800";
  const auto t = gen(spec);
  ASSERT_EQ(t.jobs.size(), 2000u);
  EXPECT_EQ(t.format, TraceFormat::kLlm);
  ASSERT_EQ(t.files.size(), 1u);
  EXPECT_EQ(t.files[0], spec);
  struct Want {
    const char* id;
    double submit, duration;
    std::uint32_t gpus, nodes, tp;
  } want[] = {
      {"1", 0, 1195, 8, 1, 8},     {"2", 239, 2807, 8, 1, 8}, {"3", 274, 9795, 8, 1, 8},
      {"4", 477, 9995, 16, 2, 16}, {"5", 719, 1923, 8, 1, 8}, {"6", 948, 1546, 8, 1, 8},
  };
  for (std::size_t i = 0; i < std::size(want); ++i) {
    const auto& j = t.jobs[i];
    EXPECT_EQ(j.id, want[i].id) << i;
    EXPECT_EQ(j.submit, want[i].submit) << i;
    EXPECT_EQ(j.duration, want[i].duration) << i;
    EXPECT_EQ(j.gpus, want[i].gpus) << i;
    EXPECT_EQ(j.shape.nodes, want[i].nodes) << i;
    EXPECT_EQ(j.shape.tp, want[i].tp) << i;
    EXPECT_EQ(j.line, i + 1) << i;
  }
  EXPECT_EQ(t.jobs.back().submit, 730085);
  // The whole trace, byte for byte (the same on every machine: sim/synthetic.hpp).
  const auto swf = to_swf(t, {});
  EXPECT_EQ(swf.size(), 119570u);
  EXPECT_EQ(fnv1a(swf), 0xd3f92529be4c0452ULL);
  ASSERT_EQ(t.notes.size(), 1u);
  EXPECT_EQ(t.notes[0], spec +
                            ": 2000 jobs of 1-128 nodes (8 GPUs each), seed 1; 90.4 % of GPU-time "
                            "in 16-128-node jobs; offered load 0.800 on 800 hosts over 202.8 h "
                            "(9.86 arrivals per hour)");
}

TEST(Synthetic, SameSpecSameTraceOtherSeedAnother) {
  const auto a = to_swf(gen("llm:jobs=500,load=0.8,hosts=320,seed=7"), {});
  EXPECT_EQ(a, to_swf(gen("llm:jobs=500,load=0.8,hosts=320,seed=7"), {}));
  EXPECT_NE(a, to_swf(gen("llm:jobs=500,load=0.8,hosts=320,seed=8"), {}));
  // Key order does not matter.
  EXPECT_EQ(a, to_swf(gen("llm:seed=7,hosts=320,load=0.8,jobs=500"), {}));
}

TEST(Synthetic, FewerJobsArePrefixesOfMore) {
  // Each job's draws come in a fixed order, so with a rate jobs=100 is the first 100 jobs of
  // jobs=2000; with a load only the time scale differs.
  const auto small = gen("llm:jobs=100,rate=12,seed=3");
  const auto big = gen("llm:jobs=2000,rate=12,seed=3");
  for (std::size_t i = 0; i < 100; ++i) {
    EXPECT_EQ(small.jobs[i].submit, big.jobs[i].submit) << i;
    EXPECT_EQ(small.jobs[i].duration, big.jobs[i].duration) << i;
    EXPECT_EQ(small.jobs[i].shape.nodes, big.jobs[i].shape.nodes) << i;
  }
  const auto loaded = gen("llm:jobs=2000,load=0.8,hosts=800,seed=3");
  for (std::size_t i = 0; i < 2000; ++i) {
    EXPECT_EQ(loaded.jobs[i].duration, big.jobs[i].duration) << i;
    EXPECT_EQ(loaded.jobs[i].shape.nodes, big.jobs[i].shape.nodes) << i;
  }
}

TEST(Synthetic, MostGpuTimeInJobsOf16To128Nodes) {
  // Expected about 86 % (docs/simulator.md); at least 80 % in each of ten seeds of 2,000
  // jobs, while half the jobs run on one node and hold under 3 % of the GPU-time.
  for (int seed = 1; seed <= 10; ++seed) {
    const auto t = gen("llm:hosts=800,seed=" + std::to_string(seed));
    EXPECT_GE(node_time_share(t, 16, 128), 0.80) << seed;
    EXPECT_LT(node_time_share(t, 1, 1), 0.03) << seed;
    std::size_t one = 0;
    for (const auto& j : t.jobs) one += j.shape.nodes == 1;
    EXPECT_NEAR(static_cast<double>(one) / 2000, 0.5, 0.04) << seed;
  }
  const auto t = gen("llm:hosts=800,seed=1");
  EXPECT_NEAR(node_time_share(t, 16, 128), 0.904, 0.0005);  // as the note says
}

TEST(Synthetic, OfferedLoadIsTheTarget) {
  for (double load : {0.5, 0.7, 0.8, 0.9, 1.2}) {
    for (std::uint32_t hosts : {154u, 320u, 800u}) {
      for (int seed : {1, 2}) {
        const auto t = gen("llm:jobs=2000,hosts=" + std::to_string(hosts) +
                           ",load=" + std::to_string(load) + ",seed=" + std::to_string(seed));
        // Exact but for submit times rounded to whole seconds.
        EXPECT_NEAR(offered_load(t, hosts), load, 1e-5 * load) << load << " " << hosts;
        EXPECT_EQ(t.jobs.front().submit, 0);
      }
    }
  }
  // A rate gives what it gives: 2,000 arrivals at 10 an hour span about 200 hours.
  const auto r = gen("llm:jobs=2000,rate=10");
  EXPECT_NEAR(r.jobs.back().submit / 3600, 200, 15);
  EXPECT_EQ(r.notes[0].find("offered load"), std::string::npos);
}

TEST(Synthetic, SizesTpAndDurationsFollowTheSpec) {
  TraceOptions o;
  o.gpus_per_node = 4;
  o.tp_cap = 16;
  const auto t = gen("llm:jobs=3000,hosts=64,w128=0,w64=0,w3=10,min=100,max=50000,sigma=2", o);
  std::map<std::uint32_t, std::size_t> sizes;
  for (const auto& j : t.jobs) {
    ++sizes[j.shape.nodes];
    EXPECT_EQ(j.gpus, j.shape.nodes * 4);
    const auto shape = job_shape(j.gpus, 4, 16);  // the readers' rule
    ASSERT_TRUE(shape) << shape.error().message;
    EXPECT_EQ(j.shape.tp, shape->tp);
    EXPECT_EQ(j.shape.gpus_per_node, 4u);
    EXPECT_EQ(j.gpus % j.shape.tp, 0u);
    EXPECT_GE(j.duration, 100);
    EXPECT_LE(j.duration, 50000);
    EXPECT_EQ(j.duration, std::floor(j.duration));
  }
  EXPECT_EQ(sizes.count(64), 0u);
  EXPECT_EQ(sizes.count(128), 0u);
  EXPECT_GT(sizes[3], 0u);
  // TP 16 GPUs = 4 nodes of 4: a 3-node job (12 GPUs) is one group, as is a 2-node one; a
  // 16-node job has groups of 4 nodes.
  for (const auto& j : t.jobs) {
    if (j.shape.nodes == 3) {
      EXPECT_EQ(j.shape.tp, 12u);
    } else if (j.shape.nodes == 2) {
      EXPECT_EQ(j.shape.tp, 8u);
    } else if (j.shape.nodes == 16) {
      EXPECT_EQ(j.shape.tp, 16u);
    }
  }
  // The TP cap bounds it as for a file: --tp-cap 8 keeps every group in a node.
  o = {};
  o.tp_cap = 8;
  for (const auto& j : gen("llm:jobs=200,hosts=800", o).jobs) EXPECT_EQ(j.shape.tp, 8u);
  // Larger jobs run longer: the median grows as nodes^0.5.
  const auto big = gen("llm:jobs=20000,rate=100,sigma=0.5");
  std::map<std::uint32_t, std::vector<double>> by;
  for (const auto& j : big.jobs) by[j.shape.nodes].push_back(j.duration);
  for (auto& [n, v] : by) {
    std::sort(v.begin(), v.end());
    EXPECT_NEAR(v[v.size() / 2] / (3600 * std::sqrt(n)), 1, n >= 64 ? 0.25 : 0.1) << n;
  }
}

TEST(Synthetic, SwfRoundTripGivesTheSameJobs) {
  const auto t = gen("llm:jobs=1000,load=0.85,hosts=320,seed=5");
  const auto text = to_swf(t, {"Version: 2.2", "Note: a test"});
  EXPECT_TRUE(text.starts_with("; Version: 2.2\n; Note: a test\n1 0 -1 "));
  auto back = parse_trace(text, "llm.swf", {});
  ASSERT_TRUE(back) << back.error().to_string();
  EXPECT_EQ(back->format, TraceFormat::kSwf);
  ASSERT_EQ(back->jobs.size(), t.jobs.size());
  for (std::size_t i = 0; i < t.jobs.size(); ++i) {
    const auto &a = t.jobs[i], &b = back->jobs[i];
    EXPECT_EQ(a.id, b.id);
    EXPECT_EQ(a.submit, b.submit);
    EXPECT_EQ(a.duration, b.duration);
    EXPECT_EQ(a.gpus, b.gpus);
    EXPECT_EQ(a.shape.nodes, b.shape.nodes);
    EXPECT_EQ(a.shape.tp, b.shape.tp);
    EXPECT_EQ(b.line, i + 3);
  }
  EXPECT_TRUE(back->notes.empty());
}

TEST(Synthetic, ReadTracesTakesASpecWhereAFileGoes) {
  TraceOptions o;
  o.arrival_scale = 0.5;
  o.skip_jobs = 2;
  o.max_jobs = 3;
  const std::string spec = "llm:jobs=2000,seed=1,load=0.8,hosts=800";
  auto t = read_traces({spec}, o);
  ASSERT_TRUE(t) << t.error().to_string();
  EXPECT_EQ(t->format, TraceFormat::kLlm);
  ASSERT_EQ(t->jobs.size(), 3u);
  EXPECT_EQ(t->jobs[0].id, "3");
  EXPECT_EQ(t->jobs[0].submit, 0);
  EXPECT_EQ(t->jobs[1].submit, (477 - 274) * 0.5);
  EXPECT_EQ(t->jobs[2].submit, (719 - 274) * 0.5);
  ASSERT_EQ(t->notes.size(), 1u);
  // Merged with another generated trace, ids are prefixed "llm:": the same spec twice is
  // a duplicate, as the same file twice is.
  auto twice = read_traces({spec, spec}, {});
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.error().to_string(),
            spec + ":1: job id \"llm:1\" again (first at " + spec + ":1)");
  // A file format named with a spec is a usage error.
  o = {};
  o.format = TraceFormat::kSwf;
  auto f = read_traces({spec}, o);
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error().code, fp::ErrorCode::kUsage);
  EXPECT_EQ(f.error().to_string(),
            "trace spec: --trace-format swf names a file format; a generator spec takes none "
            "(expected auto)");
  // A path with a directory is a path, never a spec.
  auto p = read_traces({"/nonexistent/llm:jobs=5"}, {});
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code, fp::ErrorCode::kIo);
}

TEST(Synthetic, BadSpecsNameTheKeyAndWhatWasExpected) {
  auto e = [](const std::string& spec) {
    auto t = generate_trace(spec, {});
    EXPECT_FALSE(t) << spec;
    if (t) return std::string();
    EXPECT_EQ(t.error().code, fp::ErrorCode::kUsage) << spec;
    return t.error().to_string();
  };
  EXPECT_EQ(e("gpt:jobs=5"), "trace spec: unknown trace generator \"gpt\", expected llm");
  EXPECT_EQ(e("llm:hosts=800,\tjobs=5"),
            "trace spec: byte 15 is a control character or not UTF-8: expected printable text");
  EXPECT_EQ(e("llm:hosts=800\n"),
            "trace spec: byte 14 is a control character or not UTF-8: expected printable text");
  EXPECT_EQ(e("llm:"),
            "trace spec: llm: hosts: expected hosts=N, the cluster size the load is "
            "for (or rate=R arrivals per hour instead of a load)");
  EXPECT_EQ(e("llm:hosts=8,jobs"), "trace spec: llm: \"jobs\": expected key=value");
  EXPECT_EQ(e("llm:hosts=8,nodes=4"),
            "trace spec: llm: unknown key \"nodes\" (expected one of: jobs, seed, load, hosts, "
            "rate, w<N> (w1, w16, ...), median, growth, sigma, min, max, moe, ep)");
  EXPECT_EQ(e("llm:hosts=8,hosts=9"), "trace spec: llm: key \"hosts\" given twice");
  EXPECT_EQ(e("llm:hosts=800,jobs=0"),
            "trace spec: llm: jobs=0: expected an integer from 1 to 1000000");
  EXPECT_EQ(e("llm:hosts=800,jobs=1000001"),
            "trace spec: llm: jobs=1000001: expected an integer from 1 to 1000000");
  EXPECT_EQ(e("llm:hosts=800,jobs=1"),
            "trace spec: llm: jobs=1: a load needs at least 2 jobs (the span runs from the "
            "first submission to the last)");
  EXPECT_EQ(e("llm:hosts=800,seed=-1"),
            "trace spec: llm: seed=-1: expected an integer from 0 to 18446744073709551615");
  EXPECT_EQ(e("llm:hosts=0"), "trace spec: llm: hosts=0: expected an integer from 1 to 131072");
  EXPECT_EQ(e("llm:hosts=800,load=0"),
            "trace spec: llm: load=0: expected a number above 0, at most 10 (the offered load: "
            "0.8 = the hosts 80 % busy on average)");
  EXPECT_EQ(e("llm:hosts=800,load=80%"),
            "trace spec: llm: load=80%: expected a number above 0, at most 10 (the offered "
            "load: 0.8 = the hosts 80 % busy on average)");
  EXPECT_EQ(e("llm:rate=nan"),
            "trace spec: llm: rate=nan: expected arrivals per hour, above 0, at most 1e6");
  EXPECT_EQ(e("llm:hosts=800,load=0.8,rate=3"),
            "trace spec: llm: load and rate: expected one of them (rate=R arrivals per hour, or "
            "load=L on hosts=N)");
  EXPECT_EQ(e("llm:hosts=100"),
            "trace spec: llm: w128: 128-node jobs do not fit hosts=100; expected w128=0 or more "
            "hosts");
  EXPECT_EQ(e("llm:hosts=800,w16=-1"), "trace spec: llm: w16=-1: expected a weight from 0 to 1e6");
  EXPECT_EQ(e("llm:hosts=800,w0=1"),
            "trace spec: llm: unknown key \"w0\" (expected one of: jobs, seed, load, hosts, "
            "rate, w<N> (w1, w16, ...), median, growth, sigma, min, max, moe, ep)");
  EXPECT_EQ(e("llm:hosts=800,w200000=1"),
            "trace spec: llm: unknown key \"w200000\": expected w<N>, N the nodes of a job size "
            "from 1 to 131072");
  EXPECT_EQ(e("llm:hosts=800,w1=0,w2=0,w4=0,w8=0,w16=0,w32=0,w64=0,w128=0"),
            "trace spec: llm: w<N>: every weight is 0; expected at least one job size with a "
            "weight above 0");
  EXPECT_EQ(e("llm:hosts=800,median=0.5"),
            "trace spec: llm: median=0.5: expected seconds, a number from 1 to 3.2e7");
  EXPECT_EQ(e("llm:hosts=800,growth=3"),
            "trace spec: llm: growth=3: expected a number from 0 to 2");
  EXPECT_EQ(e("llm:hosts=800,sigma=-1"),
            "trace spec: llm: sigma=-1: expected a number from 0 to 4");
  EXPECT_EQ(e("llm:hosts=800,min=1.5"),
            "trace spec: llm: min=1.5: expected whole seconds from 1 to 31536000 (a year)");
  EXPECT_EQ(e("llm:hosts=800,min=100,max=50"),
            "trace spec: llm: min=100 is above max=50: expected min <= max");
  EXPECT_EQ(e("llm:rate=0.000001,jobs=1000"),
            "trace spec: llm: rate: the trace would span 3.52e+12 s, beyond a century (3.2e9 "
            "s); expected a higher rate or fewer jobs");
  EXPECT_EQ(e("llm:hosts=1,load=0.00001,w1=1,w2=0,w4=0,w8=0,w16=0,w32=0,w64=0,w128=0"),
            "trace spec: llm: load: the trace would span 1.24e+12 s, beyond a century (3.2e9 s); "
            "expected a higher load or fewer jobs");
  TraceOptions o;
  o.gpus_per_node = 1024;
  auto big = generate_trace("llm:hosts=131072,w1024=1", o);
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().to_string(),
            "trace spec: llm: w1024: 1024 nodes x 1024 GPUs is beyond any fabric; expected at "
            "most 1000000 GPUs a job");
}

TEST(Synthetic, LooksLikeASpec) {
  EXPECT_TRUE(looks_like_trace_spec("llm:jobs=5"));
  EXPECT_TRUE(looks_like_trace_spec("gpt:x"));  // then named as an unknown generator
  EXPECT_FALSE(looks_like_trace_spec("trace.csv"));
  EXPECT_FALSE(looks_like_trace_spec("dir/llm:jobs=5"));
  EXPECT_FALSE(looks_like_trace_spec("LLM:jobs=5"));
  EXPECT_FALSE(looks_like_trace_spec(":x"));
}

}  // namespace

// MoE jobs: TP inside a node, the largest EP group up to the cap that nests and tiles.
TEST(Synthetic, MoeShapesAndShare) {
  auto shape = [](std::uint32_t gpus) {
    auto s = fp::sim::moe_shape(gpus, 4, 72, 72);
    EXPECT_TRUE(s) << gpus;
    return std::pair(s->tp_size(), s->ep);
  };
  EXPECT_EQ(shape(64), std::pair(4u, 64u));   // 16 nodes: EP of all 64 GPUs
  EXPECT_EQ(shape(72), std::pair(4u, 72u));   // 18 nodes: a whole NVL72 domain
  EXPECT_EQ(shape(128), std::pair(4u, 64u));  // 32 nodes: 72 does not tile, 64 does
  EXPECT_EQ(shape(8), std::pair(4u, 8u));
  EXPECT_EQ(shape(4), std::pair(4u, 0u));  // one node: no EP group above its TP group
  fp::sim::TraceOptions o;
  o.gpus_per_node = 4;
  o.tp_cap = 72;
  auto t = fp::sim::generate_trace(
      "llm:jobs=400,seed=3,load=0.8,hosts=288,w1=40,w4=20,w16=20,w18=10,w32=10,moe=0.5,ep=72", o);
  ASSERT_TRUE(t) << t.error().to_string();
  std::size_t moe = 0;
  for (const auto& j : t->jobs) {
    if (j.shape.ep == 0) continue;
    ++moe;
    EXPECT_LE(j.shape.tp_size(), 4u);
    EXPECT_EQ(j.shape.ep % j.shape.tp_size(), 0u);
    EXPECT_LE(j.shape.ep, 72u);
    EXPECT_EQ(fp::placement::first_broken_rule(j.shape.spec()), fp::placement::ShapeRule::kOk);
  }
  EXPECT_GT(moe, 120u);  // about half the multi-node jobs (1-node ones have no EP group)
  EXPECT_LT(moe, 240u);
  auto bad = fp::sim::generate_trace("llm:jobs=10,hosts=8,moe=0.5", o);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().to_string(),
            "trace spec: llm: moe=0.50: expected ep=E too, the largest EP group in GPUs");
}
