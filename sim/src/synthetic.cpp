// SPDX-License-Identifier: GPL-2.0-or-later
#include "fabricplace/sim/synthetic.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>

#include "fabricplace/common/limits.hpp"
#include "fabricplace/common/strings.hpp"

namespace fabricplace::sim {

// This file is compiled with -ffp-contract=off (sim/CMakeLists.txt): a compiler that fused
// a * b + c into one FMA instruction on one machine and not on another would change the
// last bits of a draw, and with them, rarely, a rounded second.

namespace detail {

namespace {
// ln 2 split so that k * kLn2Hi is exact for |k| < 2^11 (the low 11 bits of kLn2Hi are 0).
constexpr double kLn2Hi = 6.93147180369123816490e-01;
constexpr double kLn2Lo = 1.90821492927058770002e-10;
constexpr double kLn2 = 0.69314718055994530942;
}  // namespace

double det_log(double x) {
  // x = m 2^e with m in [sqrt(1/2), sqrt(2)); ln m = 2 atanh(t), t = (m - 1) / (m + 1),
  // |t| < 0.172, summed to t^29 (the next term is below 1e-23 of the result).
  int e = 0;
  double m = std::frexp(x, &e);  // exact; m in [0.5, 1)
  if (m < 0.70710678118654752440) {
    m *= 2;  // exact
    --e;
  }
  const double t = (m - 1) / (m + 1);
  const double t2 = t * t;
  double sum = 0;
  for (int k = 29; k >= 1; k -= 2) sum = sum * t2 + 1.0 / k;  // Horner in t^2
  const double ln_m = 2 * t * sum;
  const double de = e;
  return de * kLn2Hi + (de * kLn2Lo + ln_m);
}

double det_exp(double x) {
  // x = k ln 2 + r with |r| <= ln 2 / 2; exp(r) by its Taylor series to r^20 (the next term
  // is below 1e-23), then scaled by 2^k exactly.
  const double k = std::floor(x / kLn2 + 0.5);
  const double r = (x - k * kLn2Hi) - k * kLn2Lo;
  double p = 1;
  for (int n = 20; n >= 1; --n) p = 1 + p * r / n;
  return std::ldexp(p, static_cast<int>(k));
}

}  // namespace detail

namespace {

using detail::det_exp;
using detail::det_log;

constexpr const char* kWhere = "trace spec";
constexpr double kMaxSeconds = 3.2e9;             // the readers' bound on times (trace.cpp)
constexpr std::uint32_t kMaxJobGpus = 1'000'000;  // the readers' largest job

std::unexpected<Error> spec_error(const std::string& what) {
  return fail(ErrorCode::kUsage, str::excerpt("llm: " + what, 300), kWhere);
}

std::optional<double> parse_number(std::string_view s) {
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::string num(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string sci(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

/// The generator's random draws. The order of draws per job is part of the contract (the
/// same spec gives the same jobs): the size, one normal (two or more uniforms), then, for
/// every job after the first, the gap before it.
class Draws {
 public:
  explicit Draws(std::uint64_t seed) : gen_(seed) {}
  /// [0, 1), 53 random bits.
  double uniform() { return static_cast<double>(gen_() >> 11) * 0x1.0p-53; }
  /// Exponential with mean 1 (inverse transform; 1 - u is in (0, 1]).
  double exponential() { return -det_log(1.0 - uniform()); }
  /// Standard normal (Marsaglia's polar method; the second variate is not used).
  double normal() {
    for (;;) {
      const double u = 2 * uniform() - 1;
      const double v = 2 * uniform() - 1;
      const double s = u * u + v * v;
      if (s > 0 && s < 1) return u * std::sqrt(-2 * det_log(s) / s);  // sqrt: IEEE exact
    }
  }

 private:
  std::mt19937_64 gen_;
};

struct KeyHelp {
  const char* key;
  const char* fallback;
  const char* help;
};

constexpr KeyHelp kKeys[] = {
    {"jobs", "2000", "jobs to generate (1 to 1,000,000)"},
    {"seed", "1", "seed of the generator (0 to 2^64-1)"},
    {"load", "0.8",
     "offered load on `hosts`: sum(nodes x duration) / (hosts x span); above 0, at most 10"},
    {"hosts", "", "the cluster size the load is for (needed with load)"},
    {"rate", "", "arrivals per hour, instead of a load"},
    {"wN", "w1=50 w2=20 w4=12 w8=8 w16=5 w32=3 w64=1.5 w128=0.5",
     "weight of N-node jobs (N from 1 to 131,072; 0 drops a size)"},
    {"median", "3600", "median run time of a 1-node job, seconds"},
    {"growth", "0.5", "median of an N-node job = median x N^growth (0 to 2)"},
    {"sigma", "1", "log-normal shape: standard deviation of ln(run time) (0 to 4)"},
    {"min", "60", "shortest run time, whole seconds"},
    {"max", "604800", "longest run time, whole seconds (7 days)"},
    {"moe", "0", "share of mixture-of-experts jobs (0 to 1): TP inside a node, EP groups"},
    {"ep", "", "largest EP group of a MoE job, GPUs (needed with moe)"},
};

}  // namespace

bool looks_like_trace_spec(std::string_view s) {
  const auto colon = s.find(':');
  if (colon == std::string_view::npos || colon == 0 || s.find('/') != std::string_view::npos)
    return false;
  return std::all_of(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(colon),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); });
}

std::string llm_spec_help() {
  std::string out = "llm:key=value,... (docs/simulator.md, \"A synthetic LLM-heavy trace\")\n";
  for (const auto& k : kKeys) {
    std::string line = "  " + std::string(k.key);
    line.resize(10, ' ');
    line += k.help;
    if (*k.fallback) line += std::string(" [") + k.fallback + "]";
    out += line + "\n";
  }
  return out;
}

Result<LlmSpec> parse_llm_spec(std::string_view spec) {
  // The spec names the trace in the report and in an SWF header: printable text only.
  if (const auto at = std::min(str::control_char_at(spec), str::invalid_utf8_at(spec));
      at != std::string_view::npos) {
    return fail(ErrorCode::kUsage,
                "byte " + std::to_string(at + 1) +
                    " is a control character or not UTF-8: expected printable text",
                kWhere);
  }
  const auto colon = spec.find(':');
  const std::string kind(spec.substr(0, colon));
  if (kind != "llm")
    return fail(ErrorCode::kUsage,
                str::excerpt("unknown trace generator \"" + kind + "\", expected llm", 300),
                kWhere);
  LlmSpec s;
  std::map<std::uint32_t, double> mix(s.mix.begin(), s.mix.end());
  std::map<std::string, std::string, std::less<>> seen;
  const std::string_view body =
      colon == std::string_view::npos ? std::string_view{} : spec.substr(colon + 1);
  for (auto item : body.empty() ? std::vector<std::string_view>{} : str::split(body, ',')) {
    item = str::trim(item);
    const auto eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == item.size())
      return spec_error(str::quoted(item) + ": expected key=value");
    const std::string key(item.substr(0, eq));
    const std::string value(item.substr(eq + 1));
    if (!seen.emplace(key, value).second) return spec_error("key \"" + key + "\" given twice");
    const std::string given = key + "=" + value;
    // Counts and numbers, each within its stated range.
    auto count = [&](std::uint64_t lo, std::uint64_t hi) -> std::optional<std::uint64_t> {
      const auto v = str::parse_uint(value, hi);
      if (!v || *v < lo) return std::nullopt;
      return v;
    };
    auto real = [&](double lo, bool lo_open, double hi) -> std::optional<double> {
      const auto v = parse_number(value);
      if (!v || *v < lo || (lo_open && *v == lo) || *v > hi) return std::nullopt;
      return v;
    };
    if (key == "jobs") {
      const auto v = count(1, kMaxSyntheticJobs);
      if (!v) return spec_error(given + ": expected an integer from 1 to 1000000");
      s.jobs = static_cast<std::uint32_t>(*v);
    } else if (key == "seed") {
      const auto v = count(0, UINT64_MAX);
      if (!v) return spec_error(given + ": expected an integer from 0 to 18446744073709551615");
      s.seed = *v;
    } else if (key == "hosts") {
      const auto v = count(1, 131'072);
      if (!v) return spec_error(given + ": expected an integer from 1 to 131072");
      s.hosts = static_cast<std::uint32_t>(*v);
    } else if (key == "load") {
      const auto v = real(0, true, 10);
      if (!v)
        return spec_error(given +
                          ": expected a number above 0, at most 10 (the offered load: 0.8 = "
                          "the hosts 80 % busy on average)");
      s.load = *v;
    } else if (key == "rate") {
      const auto v = real(0, true, 1e6);
      if (!v) return spec_error(given + ": expected arrivals per hour, above 0, at most 1e6");
      s.rate_per_hour = *v;
    } else if (key == "median") {
      const auto v = real(1, false, 3.2e7);
      if (!v) return spec_error(given + ": expected seconds, a number from 1 to 3.2e7");
      s.median_s = *v;
    } else if (key == "growth") {
      const auto v = real(0, false, 2);
      if (!v) return spec_error(given + ": expected a number from 0 to 2");
      s.growth = *v;
    } else if (key == "sigma") {
      const auto v = real(0, false, 4);
      if (!v) return spec_error(given + ": expected a number from 0 to 4");
      s.sigma = *v;
    } else if (key == "min" || key == "max") {
      const auto v = count(1, 31'536'000);
      if (!v) return spec_error(given + ": expected whole seconds from 1 to 31536000 (a year)");
      (key == "min" ? s.min_s : s.max_s) = static_cast<double>(*v);
    } else if (key == "moe") {
      const auto v = real(0, false, 1);
      if (!v) return spec_error(given + ": expected a share from 0 to 1");
      s.moe = *v;
    } else if (key == "ep") {
      const auto v = count(1, 1u << 20);
      if (!v) return spec_error(given + ": expected GPUs, an integer from 1 to 1048576");
      s.ep_cap = static_cast<std::uint32_t>(*v);
    } else if (key.size() >= 2 && key[0] == 'w' && key[1] >= '1' && key[1] <= '9') {
      const auto n = str::parse_uint(std::string_view(key).substr(1), 131'072);
      if (!n)
        return spec_error("unknown key \"" + key +
                          "\": expected w<N>, N the nodes of a job size from 1 to 131072");
      const auto w = real(0, false, 1e6);
      if (!w) return spec_error(given + ": expected a weight from 0 to 1e6");
      mix[static_cast<std::uint32_t>(*n)] = *w;
    } else {
      return spec_error("unknown key \"" + key +
                        "\" (expected one of: jobs, seed, load, hosts, rate, w<N> (w1, w16, "
                        "...), median, growth, sigma, min, max, moe, ep)");
    }
  }
  if (s.moe > 0 && s.ep_cap == 0)
    return spec_error("moe=" + num(s.moe, 2) + ": expected ep=E too, the largest EP group in GPUs");
  if (s.min_s > s.max_s)
    return spec_error("min=" + num(s.min_s, 0) + " is above max=" + num(s.max_s, 0) +
                      ": expected min <= max");
  if (seen.contains("load") && seen.contains("rate"))
    return spec_error(
        "load and rate: expected one of them (rate=R arrivals per hour, or "
        "load=L on hosts=N)");
  if (s.rate_per_hour == 0 && s.hosts == 0)
    return spec_error(
        "hosts: expected hosts=N, the cluster size the load is for (or rate=R "
        "arrivals per hour instead of a load)");
  if (s.rate_per_hour == 0 && s.jobs < 2)
    return spec_error(
        "jobs=1: a load needs at least 2 jobs (the span runs from the first "
        "submission to the last)");
  s.mix.clear();
  double total = 0;
  for (const auto& [n, w] : mix) {
    if (w <= 0) continue;
    if (s.hosts > 0 && n > s.hosts)
      return spec_error("w" + std::to_string(n) + ": " + std::to_string(n) +
                        "-node jobs do not fit hosts=" + std::to_string(s.hosts) + "; expected w" +
                        std::to_string(n) + "=0 or more hosts");
    s.mix.emplace_back(n, w);
    total += w;
  }
  if (!(total > 0))
    return spec_error(
        "w<N>: every weight is 0; expected at least one job size with a weight "
        "above 0");
  return s;
}

Result<Trace> generate_llm_trace(const LlmSpec& spec, std::uint32_t g, std::uint32_t tp_cap,
                                 const std::string& name) {
  if (g == 0) return fail(ErrorCode::kUsage, "GPUs per node must be at least 1");
  if (tp_cap == 0) return fail(ErrorCode::kUsage, "the TP cap must be at least 1 GPU");
  if (spec.jobs == 0 || spec.jobs > kMaxSyntheticJobs)
    return spec_error("jobs=" + std::to_string(spec.jobs) + ": expected 1 to 1000000");
  double total = 0;
  for (const auto& [n, w] : spec.mix) {
    if (std::uint64_t{n} * g > kMaxJobGpus)
      return spec_error("w" + std::to_string(n) + ": " + std::to_string(n) + " nodes x " +
                        std::to_string(g) + " GPUs is beyond any fabric; expected at most " +
                        std::to_string(kMaxJobGpus) + " GPUs a job");
    total += w;
  }
  if (spec.mix.empty() || !(total > 0)) return spec_error("w<N>: expected a job size");

  Trace t;
  t.format = TraceFormat::kLlm;
  t.files.push_back(name);
  t.jobs.resize(spec.jobs);
  Draws d(spec.seed);
  const double ln_median = det_log(spec.median_s);
  const double ln_min = det_log(spec.min_s), ln_max = det_log(spec.max_s);
  std::vector<double> arrival(spec.jobs, 0);  // cumulative gaps, in draws (mean 1 each)
  std::uint64_t work = 0;                     // node-seconds (exact: below 2^64)
  for (std::uint32_t i = 0; i < spec.jobs; ++i) {
    // Size: the first entry whose cumulative weight passes u x total.
    const double u = d.uniform() * total;
    double cum = 0;
    std::uint32_t nodes = spec.mix.back().first;
    for (const auto& [n, w] : spec.mix) {
      cum += w;
      if (u < cum) {
        nodes = n;
        break;
      }
    }
    // Run time: log-normal, median median x nodes^growth, clamped, whole seconds.
    const double z = d.normal();
    double ln_d = ln_median + spec.growth * det_log(nodes) + spec.sigma * z;
    ln_d = std::clamp(ln_d, ln_min, ln_max);
    const double dur = std::clamp(std::floor(det_exp(ln_d) + 0.5), spec.min_s, spec.max_s);
    if (i > 0) arrival[i] = arrival[i - 1] + d.exponential();
    auto& j = t.jobs[i];
    j.id = std::to_string(i + 1);
    j.duration = dur;
    j.gpus = nodes * g;
    // A MoE job: one more draw, only when the spec asks for them (traces without are unchanged).
    const bool moe = spec.moe > 0 && d.uniform() < spec.moe;
    auto shape = moe ? moe_shape(j.gpus, g, tp_cap, spec.ep_cap)
                     : job_shape(j.gpus, g, tp_cap);  // g, tp_cap, gpus checked: never fails
    if (!shape) return std::unexpected(shape.error());
    j.shape = *shape;
    j.line = i + 1;
    j.file = 0;
    work += std::uint64_t{nodes} * static_cast<std::uint64_t>(dur);
  }
  // Arrivals: gaps of mean 3600 / rate seconds, or scaled so that the span gives the load.
  const double last = arrival.back();
  double scale = 0;  // seconds per unit of arrival
  if (spec.rate_per_hour > 0) {
    scale = 3600.0 / spec.rate_per_hour;
  } else {
    const double span = static_cast<double>(work) / (spec.load * spec.hosts);
    scale = last > 0 ? span / last : 0;
  }
  if (last * scale > kMaxSeconds) {
    return spec_error(std::string(spec.rate_per_hour > 0 ? "rate" : "load") +
                      ": the trace would span " + sci(last * scale) +
                      " s, beyond a century (3.2e9 s); expected a higher " +
                      (spec.rate_per_hour > 0 ? "rate" : "load") + " or fewer jobs");
  }
  for (std::uint32_t i = 0; i < spec.jobs; ++i)
    t.jobs[i].submit = std::floor(arrival[i] * scale + 0.5);

  // What was generated, in the report's notes.
  std::uint32_t lo = spec.mix.front().first, hi = spec.mix.back().first;
  std::string what = name + ": " + std::to_string(spec.jobs) + " jobs of " + std::to_string(lo) +
                     (lo == hi ? "" : "-" + std::to_string(hi)) + " nodes (" + std::to_string(g) +
                     " GPUs each), seed " + std::to_string(spec.seed) + "; " +
                     num(100 * node_time_share(t, 16, 128), 1) +
                     " % of GPU-time in 16-128-node jobs";
  const double span_h = t.jobs.back().submit / 3600;
  if (spec.hosts > 0 && t.jobs.back().submit > 0) {
    what += "; offered load " + num(offered_load(t, spec.hosts), 3) + " on " +
            std::to_string(spec.hosts) + " hosts";
  }
  what += " over " + (span_h < 1 ? num(t.jobs.back().submit, 0) + " s" : num(span_h, 1) + " h") +
          " (" + num(span_h > 0 ? static_cast<double>(spec.jobs - 1) / span_h : 0, 2) +
          " arrivals per hour)";
  t.notes.push_back(std::move(what));
  return t;
}

Result<placement::JobShape> moe_shape(std::uint32_t gpus, std::uint32_t g, std::uint32_t tp_cap,
                                      std::uint32_t ep_cap) {
  auto base = job_shape(gpus, g, std::min(tp_cap, g));
  if (!base || ep_cap == 0) return base;
  placement::ShapeSpec spec = base->spec();
  const std::uint32_t T = base->tp_size();
  const auto want = static_cast<std::uint32_t>(std::min<std::uint64_t>(gpus, ep_cap));
  for (std::uint32_t e = want - want % T; e > T; e -= T) {
    spec.ep = e;
    if (placement::first_broken_rule(spec) == placement::ShapeRule::kOk)
      return placement::JobShape::make(spec);
  }
  return base;
}

Result<Trace> generate_trace(std::string_view spec, const TraceOptions& opt) {
  auto s = parse_llm_spec(spec);
  if (!s) return std::unexpected(s.error());
  return generate_llm_trace(*s, opt.gpus_per_node, opt.tp_cap, std::string(spec));
}

double offered_load(const Trace& t, std::uint32_t hosts) {
  if (t.jobs.empty() || hosts == 0) return 0;
  double first = t.jobs.front().submit, last = first, work = 0;
  for (const auto& j : t.jobs) {
    first = std::min(first, j.submit);
    last = std::max(last, j.submit);
    work += static_cast<double>(j.shape.nodes) * j.duration;
  }
  return last > first ? work / (static_cast<double>(hosts) * (last - first)) : 0;
}

double node_time_share(const Trace& t, std::uint32_t lo, std::uint32_t hi) {
  double in = 0, all = 0;
  for (const auto& j : t.jobs) {
    const double w = static_cast<double>(j.shape.nodes) * j.duration;
    all += w;
    if (j.shape.nodes >= lo && j.shape.nodes <= hi) in += w;
  }
  return all > 0 ? in / all : 0;
}

}  // namespace fabricplace::sim
