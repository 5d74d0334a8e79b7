// SPDX-License-Identifier: GPL-2.0-or-later
#include "fabricplace/sim/trace.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <unordered_map>

#include "fabricplace/common/file_io.hpp"
#include "fabricplace/common/strings.hpp"
#include "fabricplace/sim/synthetic.hpp"

namespace fabricplace::sim {
namespace {

std::optional<double> parse_double(std::string_view s) {
  s = str::trim(s);
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<std::int64_t> parse_int(std::string_view s) {
  s = str::trim(s);
  std::int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::vector<std::string_view> split_ws(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    std::size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\t') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

/// A row as the format gives it, before the job shape is derived.
struct Row {
  std::string id;
  double submit;
  double duration;
  std::int64_t gpus;
  std::uint32_t line;
};

// Times beyond a century and counts beyond any machine are typos or hostile input; refusing
// them keeps every later sum and product of the simulation finite and printable.
constexpr double kMaxSeconds = 3.2e9;
constexpr std::int64_t kMaxCount = 1'000'000'000;

std::string short_num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

Result<void> in_range(const Row& r, const std::string& file) {
  const int line = static_cast<int>(r.line);
  // The id is written to jobs.csv: short printable text only.
  if (r.id.size() > 256 || str::invalid_utf8_at(r.id) != std::string::npos ||
      str::control_char_at(r.id) != std::string::npos)
    return fail(ErrorCode::kSyntax,
                "job id " + str::quoted(r.id, 40) +
                    ": expected at most 256 bytes of printable UTF-8 text",
                file, line);
  if (r.submit > kMaxSeconds)
    return fail(ErrorCode::kSyntax, "submit time " + short_num(r.submit) +
                                        " s is beyond a century (3.2e9 s)", file, line);
  if (std::abs(r.duration) > kMaxSeconds)
    return fail(ErrorCode::kSyntax, "duration " + short_num(r.duration) +
                                        " s is beyond a century (3.2e9 s)", file, line);
  if (r.gpus > kMaxCount || r.gpus < -kMaxCount)
    return fail(ErrorCode::kSyntax, "GPU count " + std::to_string(r.gpus) +
                                        " is beyond any machine (1e9)", file, line);
  return {};
}

struct Skips {
  std::size_t no_gpus = 0, bad_duration = 0;
};

Result<void> parse_philly(std::string_view text, const std::string& file, std::vector<Row>& rows) {
  std::uint32_t n = 0;
  for (auto line : str::lines(text)) {
    ++n;
    auto t = str::trim(line);
    if (t.empty() || t.front() == '#') continue;
    auto f = str::split(t, ',');
    if (f.size() != 6) {
      return fail(ErrorCode::kSyntax,
                  "expected 6 comma-separated fields (job id, arrival time (sec), topology, "
                  "shape, size, duration (sec)), found " +
                      std::to_string(f.size()),
                  file, static_cast<int>(n));
    }
    auto submit = parse_double(f[1]);
    auto gpus = parse_int(f[4]);
    auto dur = parse_double(f[5]);
    if (!submit || *submit < 0) {
      return fail(ErrorCode::kSyntax,
                  "arrival time " + str::quoted(f[1], 30) + " is not a non-negative number", file,
                  static_cast<int>(n));
    }
    if (!gpus) {
      return fail(ErrorCode::kSyntax, "size " + str::quoted(f[4], 30) + " is not an integer", file,
                  static_cast<int>(n));
    }
    if (!dur) {
      return fail(ErrorCode::kSyntax, "duration " + str::quoted(f[5], 30) + " is not a number", file,
                  static_cast<int>(n));
    }
    rows.push_back({std::string(str::trim(f[0])), *submit, *dur, *gpus, n});
    if (auto r = in_range(rows.back(), file); !r) return r;
  }
  return {};
}

Result<void> parse_itp(std::string_view text, const std::string& file, std::vector<Row>& rows) {
  std::uint32_t n = 0;
  for (auto line : str::lines(text)) {
    ++n;
    auto t = str::trim(line);
    if (t.empty()) continue;
    if (n == 1 && str::starts_with_icase(t, "job_id")) continue;
    auto f = str::split(t, ',');
    if (f.size() != 4) {
      return fail(ErrorCode::kSyntax,
                  "expected 4 comma-separated fields (job_id, submission_time, duration, "
                  "num_gpu), found " +
                      std::to_string(f.size()),
                  file, static_cast<int>(n));
    }
    auto submit = parse_double(f[1]);
    auto dur = parse_double(f[2]);
    auto gpus = parse_int(f[3]);
    if (!submit || *submit < 0) {
      return fail(ErrorCode::kSyntax,
                  "submission_time " + str::quoted(f[1], 30) + " is not a non-negative number", file,
                  static_cast<int>(n));
    }
    if (!dur) {
      return fail(ErrorCode::kSyntax, "duration " + str::quoted(f[2], 30) + " is not a number", file,
                  static_cast<int>(n));
    }
    if (!gpus) {
      return fail(ErrorCode::kSyntax, "num_gpu " + str::quoted(f[3], 30) + " is not an integer", file,
                  static_cast<int>(n));
    }
    rows.push_back({std::string(str::trim(f[0])), *submit, *dur, *gpus, n});
    if (auto r = in_range(rows.back(), file); !r) return r;
  }
  return {};
}

Result<void> parse_swf(std::string_view text, const std::string& file, std::uint32_t per_gpu,
                       std::vector<Row>& rows) {
  std::uint32_t n = 0;
  for (auto line : str::lines(text)) {
    ++n;
    auto t = str::trim(line);
    if (t.empty() || t.front() == ';') continue;
    auto f = split_ws(t);
    if (f.size() != 18) {
      return fail(ErrorCode::kSyntax,
                  "expected the 18 whitespace-separated fields of the Standard Workload "
                  "Format, found " +
                      std::to_string(f.size()),
                  file, static_cast<int>(n));
    }
    // 1 job, 2 submit, 4 run time, 5 allocated processors, 8 requested processors.
    auto submit = parse_double(f[1]);
    auto run = parse_double(f[3]);
    auto alloc = parse_int(f[4]);
    auto req = parse_int(f[7]);
    if (!submit || !run || !alloc || !req) {
      return fail(ErrorCode::kSyntax,
                  "fields 2 (submit time), 4 (run time), 5 and 8 (processors) must be numbers "
                  "(-1 when unknown)",
                  file, static_cast<int>(n));
    }
    if (*submit < 0) {
      return fail(ErrorCode::kSyntax, "submit time is negative", file, static_cast<int>(n));
    }
    std::int64_t procs = *alloc > 0 ? *alloc : *req;
    if (procs > kMaxCount)
      return fail(ErrorCode::kSyntax,
                  "processor count " + std::to_string(procs) + " is beyond any machine (1e9)", file,
                  static_cast<int>(n));
    std::int64_t gpus = procs > 0 ? (procs + per_gpu - 1) / per_gpu : 0;
    rows.push_back({std::string(f[0]), *submit, *run, gpus, n});
    if (auto r = in_range(rows.back(), file); !r) return r;
  }
  return {};
}

}  // namespace

Result<std::string> read_text_file(const std::string& path) { return read_file(path); }

namespace {

std::string_view first_line(std::string_view text) {
  auto nl = text.find('\n');
  return str::trim(text.substr(0, nl));
}

}  // namespace

std::string_view to_string(TraceFormat f) {
  switch (f) {
    case TraceFormat::kAuto:
      return "auto";
    case TraceFormat::kPhilly:
      return "philly";
    case TraceFormat::kItp:
      return "itp";
    case TraceFormat::kSwf:
      return "swf";
    case TraceFormat::kLlm:
      return "llm";
  }
  return "?";
}

TraceFormat detect_format(std::string_view path, std::string_view line) {
  if (path.find(".swf") != std::string_view::npos) return TraceFormat::kSwf;
  if (!line.empty() && line.front() == ';') return TraceFormat::kSwf;
  if (line.find("topology") != std::string_view::npos &&
      line.find("shape") != std::string_view::npos) {
    return TraceFormat::kPhilly;
  }
  if (str::starts_with_icase(line, "job_id,submission_time")) return TraceFormat::kItp;
  return TraceFormat::kAuto;
}

Result<placement::JobShape> job_shape(std::uint32_t gpus, std::uint32_t g, std::uint32_t cap) {
  if (gpus == 0) return fail(ErrorCode::kUsage, "a job of no GPUs has no shape");
  if (g == 0) return fail(ErrorCode::kUsage, "GPUs per node must be at least 1");
  if (cap == 0) return fail(ErrorCode::kUsage, "the TP cap must be at least 1 GPU");
  placement::ShapeSpec spec;
  spec.nodes = static_cast<std::uint32_t>((std::uint64_t{gpus} + g - 1) / g);
  spec.gpus_per_node = g;
  const auto want =
      static_cast<std::uint32_t>(std::min<std::uint64_t>(std::uint64_t{*spec.nodes} * g, cap));
  // Candidates from the largest down, each judged by the shape's own rules: sizes up to a
  // node, then multiples of a node (no other size can tile). 1 GPU always does.
  auto tiles = [&](std::uint32_t t) {
    spec.tp = t;
    return placement::first_broken_rule(spec) == placement::ShapeRule::kOk;
  };
  bool found = false;
  for (std::uint32_t k = want / g; k >= 2 && !found; --k) found = tiles(k * g);
  for (std::uint32_t t = std::min(want, g); t >= 1 && !found; --t) found = tiles(t);
  return placement::JobShape::make(spec);
}

Result<Trace> parse_trace(std::string_view text, const std::string& file, const TraceOptions& opt) {
  if (opt.gpus_per_node == 0) return fail(ErrorCode::kUsage, "GPUs per node must be at least 1");
  if (opt.tp_cap == 0) return fail(ErrorCode::kUsage, "the TP cap must be at least 1 GPU");
  if (opt.swf_procs_per_gpu == 0) {
    return fail(ErrorCode::kUsage, "SWF processors per GPU must be at least 1");
  }
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // a UTF-8 byte order mark
  Trace t;
  t.files.push_back(file);
  t.format = opt.format;
  if (t.format == TraceFormat::kAuto) {
    t.format = detect_format(file, first_line(text));
    if (t.format == TraceFormat::kAuto) {
      return fail(ErrorCode::kSyntax,
                  "cannot tell the trace format: expected a Philly CSV ('#job id,arrival "
                  "time (sec),topology,shape,size,duration (sec)'), an ITP CSV "
                  "('job_id,submission_time,duration,num_gpu') or an SWF log (.swf, ';' "
                  "header); name it with --trace-format",
                  file, 1);
    }
  }
  std::vector<Row> rows;
  Skips skips;
  Result<void> r;
  switch (t.format) {
    case TraceFormat::kPhilly:
      r = parse_philly(text, file, rows);
      break;
    case TraceFormat::kItp:
      r = parse_itp(text, file, rows);
      break;
    case TraceFormat::kSwf:
      r = parse_swf(text, file, opt.swf_procs_per_gpu, rows);
      break;
    case TraceFormat::kAuto:
      break;
    case TraceFormat::kLlm:
      return fail(ErrorCode::kUsage,
                  "llm is a generator spec (llm:key=value,...), not a file format: expected "
                  "philly, itp or swf",
                  file);
  }
  if (!r) return std::unexpected(r.error());
  t.jobs.reserve(rows.size());
  for (auto& row : rows) {
    if (row.gpus <= 0) {
      ++skips.no_gpus;
      continue;
    }
    if (row.duration < 0) {
      ++skips.bad_duration;
      continue;
    }
    if (row.gpus > 1'000'000) {
      return fail(ErrorCode::kSyntax,
                  "a job of " + std::to_string(row.gpus) + " GPUs is beyond any fabric", file,
                  static_cast<int>(row.line));
    }
    auto shape = job_shape(static_cast<std::uint32_t>(row.gpus), opt.gpus_per_node, opt.tp_cap);
    if (!shape)
      return fail(ErrorCode::kUsage, shape.error().message, file, static_cast<int>(row.line));
    TraceJob j;
    j.id = std::move(row.id);
    j.submit = row.submit;
    j.duration = row.duration;
    j.gpus = static_cast<std::uint32_t>(row.gpus);
    j.shape = *shape;
    j.line = row.line;
    j.file = 0;
    t.jobs.push_back(std::move(j));
  }
  if (skips.no_gpus) {
    t.notes.push_back(file + ": skipped " + std::to_string(skips.no_gpus) +
                      " rows with no GPUs or processors");
  }
  if (skips.bad_duration) {
    t.notes.push_back(file + ": skipped " + std::to_string(skips.bad_duration) +
                      " rows with an unknown (negative) run time");
  }
  return t;
}

Result<Trace> read_traces(const std::vector<std::string>& paths, const TraceOptions& opt) {
  if (paths.empty()) return fail(ErrorCode::kUsage, "no trace given");
  if (!(opt.arrival_scale > 0) || !std::isfinite(opt.arrival_scale)) {
    return fail(ErrorCode::kUsage, "the arrival scale must be a positive number");
  }
  Trace all;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    // A file of that name wins; otherwise "llm:..." is generated (as fabric specs are).
    std::error_code ec;
    const bool generated =
        looks_like_trace_spec(paths[i]) && !std::filesystem::exists(paths[i], ec);
    if (generated && opt.format != TraceFormat::kAuto) {
      return fail(ErrorCode::kUsage,
                  "--trace-format " + std::string(to_string(opt.format)) +
                      " names a file format; a generator spec takes none (expected auto)",
                  "trace spec");
    }
    Result<Trace> one;
    if (generated) {
      one = generate_trace(paths[i], opt);
    } else {
      auto text = read_text_file(paths[i]);
      if (!text) return std::unexpected(text.error());
      one = parse_trace(*text, paths[i], opt);
    }
    if (!one) return std::unexpected(one.error());
    if (i > 0 && one->format != all.format) {
      return fail(ErrorCode::kUsage,
                  "traces of different formats cannot be merged (" +
                      std::string(to_string(all.format)) + " and " +
                      std::string(to_string(one->format)) + ")",
                  paths[i]);
    }
    all.format = one->format;
    std::string prefix;
    if (paths.size() > 1) {
      prefix = generated ? std::string(to_string(one->format)) + ":"
                         : std::filesystem::path(paths[i]).stem().string() + ":";
    }
    for (auto& j : one->jobs) {
      j.file = static_cast<std::uint32_t>(i);
      if (!prefix.empty()) j.id = prefix + j.id;
      all.jobs.push_back(std::move(j));
    }
    all.files.push_back(paths[i]);
    for (auto& n : one->notes) all.notes.push_back(std::move(n));
  }
  // Job ids name jobs in jobs.csv: two jobs with one id are an error (the same file twice,
  // or two files with the same name in different directories).
  {
    std::unordered_map<std::string_view, std::size_t> seen;
    for (std::size_t i = 0; i < all.jobs.size(); ++i) {
      auto [it, fresh] = seen.emplace(all.jobs[i].id, i);
      if (!fresh) {
        const auto& first = all.jobs[it->second];
        return fail(ErrorCode::kDuplicate,
                    // Ids come from the files: quoted, so no byte of theirs reaches a message raw.
                    "job id " + str::quoted(all.jobs[i].id) + " again (first at " +
                        all.files[first.file] +
                        ":" + std::to_string(first.line) + ")",
                    all.files[all.jobs[i].file], static_cast<int>(all.jobs[i].line));
      }
    }
  }
  std::stable_sort(all.jobs.begin(), all.jobs.end(),
                   [](const TraceJob& a, const TraceJob& b) { return a.submit < b.submit; });
  if (opt.skip_jobs > 0) {
    auto k = std::min(opt.skip_jobs, all.jobs.size());
    all.jobs.erase(all.jobs.begin(), all.jobs.begin() + static_cast<std::ptrdiff_t>(k));
  }
  if (opt.max_jobs > 0 && all.jobs.size() > opt.max_jobs) all.jobs.resize(opt.max_jobs);
  if (!all.jobs.empty()) {
    double t0 = all.jobs.front().submit;
    for (auto& j : all.jobs) j.submit = (j.submit - t0) * opt.arrival_scale;
  }
  return all;
}

std::string to_swf(const Trace& t, const std::vector<std::string>& header) {
  std::string out;
  for (const auto& h : header) out += "; " + h + "\n";
  out.reserve(out.size() + t.jobs.size() * 64);
  auto whole = [](double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f", std::floor(s + 0.5));
    return std::string(buf);
  };
  for (std::size_t i = 0; i < t.jobs.size(); ++i) {
    const auto& j = t.jobs[i];
    const std::string procs = std::to_string(j.gpus);
    // 1 job, 2 submit, 3 wait, 4 run time, 5 allocated processors, 6 CPU time, 7 memory,
    // 8 requested processors, 9 requested time, 10 requested memory, 11 status, 12 user,
    // 13 group, 14 executable, 15 queue, 16 partition, 17 preceding job, 18 think time.
    out += std::to_string(i + 1) + " " + whole(j.submit) + " -1 " + whole(j.duration) + " " +
           procs + " -1 -1 " + procs + " -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n";
  }
  return out;
}

}  // namespace fabricplace::sim
