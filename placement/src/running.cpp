// SPDX-License-Identifier: GPL-2.0-or-later
#include "fabricplace/placement/running.hpp"

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_map>

#include "fabricplace/common/hostlist.hpp"
#include "fabricplace/common/limits.hpp"
#include "fabricplace/common/strings.hpp"
#include "fabricplace/fabric/json_io.hpp"
#include "json_events.hpp"

namespace fabricplace::placement {
namespace {

using fabric::HostId;

constexpr std::size_t kShownWarnings = 20;  // then one line counting the rest
constexpr std::size_t kShownNames = 1000;   // names kept per warning (it shows 200 bytes)
constexpr std::size_t kMaxIdBytes = 128;

// What is wrong with a job id from JSON, or nothing. Ids reach messages unquoted.
std::optional<std::string> id_problem(std::string_view id) {
  if (id.empty()) return "is empty";
  if (id.size() > kMaxIdBytes) return "is longer than " + std::to_string(kMaxIdBytes) + " bytes";
  if (str::invalid_utf8_at(id) != std::string_view::npos) return "is not valid UTF-8";
  if (str::control_char_at(id) != std::string_view::npos ||
      str::invisible_char_at(id) != std::string_view::npos)
    return "holds a control or invisible character";
  if (id.find(' ') != std::string_view::npos) return "holds a blank";
  return std::nullopt;
}

// A Slurm job id as squeue's %i prints a running job: 4711, 4711_3 (array task), 4711+1
// (heterogeneous job component).
bool slurm_job_id(std::string_view id) {
  const auto digits = [](std::string_view s) {
    return !s.empty() && s.size() <= 10 && s.find_first_not_of("0123456789") == s.npos;
  };
  const auto sep = id.find_first_of("_+");
  if (sep == std::string_view::npos) return digits(id);
  return digits(id.substr(0, sep)) && digits(id.substr(sep + 1));
}

// Jobs as they are read: each host is resolved against the fabric at once; of the names
// the fabric lacks only the count and the first 1,000 per job are kept, and every host
// remembers the job that named it last (`owner_`), so a host in two jobs is found in O(1)
// and taken from the earlier job when the file is read (finish()).
class Collector {
 public:
  Collector(const fabric::Fabric& f, const std::string& file)
      : f_(f), file_(file), owner_(f.num_hosts(), 0) {}

  Result<void> begin(std::string id, int line) {
    // Jobs are bounded like the hosts they name: an empty JSON job names none.
    if (lines_.size() >= limits().hostlist_names)
      return fail(ErrorCode::kUnsupported,
                  "more than " + std::to_string(limits().hostlist_names) +
                      " running jobs (FABRICPLACE_MAX_HOSTLIST raises the limit)",
                  file_, line);
    auto [it, fresh] = lines_.try_emplace(id, line);
    if (!fresh)
      return fail(
          ErrorCode::kDuplicate,
          "job " + id + " is named twice (first on line " + std::to_string(it->second) + ")", file_,
          line);
    id_ = std::move(id);
    line_ = line;
    hosts_.clear();
    named_ = unknown_ = shared_ = 0;
    unknown_names_.clear();
    shared_names_.clear();
    shared_with_ = 0;
    return {};
  }

  // One host name or hostlist expression of the current job, read on `line`.
  Result<void> add(std::string_view expr, int line) {
    auto names = hostlist::expand(expr, hostlist::Duplicates::kKeep);
    if (!names)
      return fail(ErrorCode::kSyntax, "job " + id_ + ": " + names.error().message, file_, line);
    if (!add_within(total_, names->size(), limits().hostlist_names, total_))
      return fail(ErrorCode::kUnsupported,
                  "the running jobs name more than " + std::to_string(limits().hostlist_names) +
                      " hosts in all (FABRICPLACE_MAX_HOSTLIST raises the limit)",
                  file_, line);
    const auto self = static_cast<std::uint32_t>(jobs_.size() + 1);
    for (auto& n : *names) {
      ++named_;
      const auto h = f_.find_host(n);
      if (!h) {
        if (++unknown_ <= kShownNames) unknown_names_.push_back(std::move(n));
        continue;
      }
      auto& owner = owner_[fabric::idx(*h)];
      if (owner == self)
        return fail(ErrorCode::kDuplicate, "job " + id_ + " names host " + n + " twice", file_,
                    line);
      if (owner != 0) {
        if (shared_++ == 0) shared_with_ = owner;
        if (shared_names_.size() < kShownNames) shared_names_.push_back(std::move(n));
      }
      owner = self;
      hosts_.push_back(*h);
    }
    return {};
  }

  // Ends the current job: warnings for what it lost, and it is kept if any host is left.
  void end() {
    if (unknown_ > 0 && room()) {
      const auto list = str::excerpt(hostlist::compress(unknown_names_), 200);
      if (hosts_.empty())
        warn(line_, "job " + id_ + ": none of its " + std::to_string(unknown_) +
                        " host(s) is in the fabric (" + list + "); the job is dropped");
      else
        warn(line_, "job " + id_ + ": " + std::to_string(unknown_) +
                        " host(s) not in the fabric, dropped from the job: " + list);
    }
    if (named_ == 0 && room()) warn(line_, "job " + id_ + " names no host; the job is dropped");
    if (shared_ > 0 && room()) {
      const auto& first = jobs_[shared_with_ - 1];
      warn(line_, "job " + id_ + " shares " + std::to_string(shared_) +
                      " host(s) with earlier jobs (the first: job " + first.id + ", line " +
                      std::to_string(first.line) +
                      "): " + str::excerpt(hostlist::compress(shared_names_), 200) +
                      "; the later job keeps them");
    }
    if (!hosts_.empty()) jobs_.push_back(RunningJob{std::move(id_), std::move(hosts_), line_});
    hosts_ = {};
  }

  RunningJobs finish() && {
    // Hosts a later job took: gone from the earlier one, which may be left with none.
    RunningJobs out;
    for (std::uint32_t j = 0; j < jobs_.size(); ++j) {
      auto& job = jobs_[j];
      std::erase_if(job.hosts, [&](HostId h) { return owner_[fabric::idx(h)] != j + 1; });
      if (!job.hosts.empty()) {
        out.jobs.push_back(std::move(job));
      } else if (room()) {
        warn(job.line, "job " + job.id + ": all its hosts are in later jobs; the job is dropped");
      }
    }
    out.warnings = std::move(warnings_);
    if (hidden_ > 0)
      out.warnings.push_back(file_ + ": " + std::to_string(hidden_) +
                             " more warning(s) about the running jobs not shown");
    return out;
  }

 private:
  // Whether the next warning is shown; counts it otherwise (nothing is built for it).
  bool room() {
    if (warnings_.size() < kShownWarnings) return true;
    ++hidden_;
    return false;
  }
  void warn(int line, const std::string& msg) {
    warnings_.push_back(file_ + ":" + std::to_string(line) + ": " + msg);
  }

  const fabric::Fabric& f_;
  const std::string& file_;
  std::vector<RunningJob> jobs_;
  std::vector<std::uint32_t> owner_;            // per host: 1 + the job that has it, 0 none
  std::unordered_map<std::string, int> lines_;  // job id -> its line
  std::uint64_t total_ = 0;                     // names of all jobs so far
  std::vector<std::string> warnings_;
  std::size_t hidden_ = 0;
  // The current job.
  std::string id_;
  int line_ = 0;
  std::vector<HostId> hosts_;
  std::uint64_t named_ = 0, unknown_ = 0, shared_ = 0;
  std::vector<std::string> unknown_names_, shared_names_;
  std::uint32_t shared_with_ = 0;
};

constexpr const char* kLineFormats =
    "expected \"JOBID HOSTLIST\" (squeue -h -t R -o '%i %N') or one hostlist (a ring) per line";

// {"job": ["host or hostlist", ...], ...} read as SAX events: one flat object of arrays of
// strings, nothing else, so nesting and huge values end at the first wrong event, with its
// line, and no document tree is ever built.
class RunningReader final : public nlohmann::json::json_sax_t {
 public:
  RunningReader(std::string_view text, const std::string& file, Collector& jobs)
      : text_(text), lines_(text), file_(file), jobs_(jobs) {}
  const char* furthest = nullptr;
  std::optional<Error> error;
  std::string parse_error_what;

  bool start_object(std::size_t) override {
    if (depth_ == 0) {
      depth_ = 1;
      return true;
    }
    return wrong("an object");
  }
  bool end_object() override {
    depth_ = 0;
    return true;
  }
  bool start_array(std::size_t) override {
    if (depth_ == 0) return top_wrong();
    if (depth_ == 2) return wrong("an array");
    depth_ = 2;
    return true;
  }
  bool end_array() override {
    depth_ = 1;
    jobs_.end();
    return true;
  }
  bool key(string_t& k) override {
    key_line_ = line_now();
    if (auto p = id_problem(k)) {
      error = Error{ErrorCode::kSyntax,
                    "job id " + str::quoted(k) + " " + *p +
                        "; expected an id such as \"4711\" (at most 128 bytes, no blanks)",
                    file_, key_line_};
      return false;
    }
    key_ = k;
    if (auto r = jobs_.begin(std::move(k), key_line_); !r) {
      error = r.error();
      return false;
    }
    return true;
  }
  bool string(string_t& v) override {
    if (depth_ == 0) return top_wrong();
    if (depth_ == 1) return wrong("a string");
    if (auto r = jobs_.add(v, line_now()); !r) {
      error = r.error();
      return false;
    }
    return true;
  }
  bool number_integer(number_integer_t) override { return scalar("a number"); }
  bool number_unsigned(number_unsigned_t) override { return scalar("a number"); }
  bool number_float(number_float_t, const string_t&) override { return scalar("a number"); }
  bool boolean(bool) override { return scalar("a boolean"); }
  bool null() override { return scalar("null"); }
  bool binary(binary_t&) override { return scalar("binary data"); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    parse_error_what = e.what();
    return false;
  }
  int line_now() {
    if (!furthest || furthest <= text_.data()) return 1;
    return lines_.line_at(static_cast<std::size_t>(furthest - text_.data()) - 1);
  }

 private:
  bool scalar(const char* what) { return depth_ == 0 ? top_wrong() : wrong(what); }
  bool top_wrong() {
    error = Error{ErrorCode::kSyntax,
                  "expected a JSON object of job id -> [host or hostlist, ...] in rank order",
                  file_, line_now()};
    return false;
  }
  bool wrong(const char* what) {
    error = Error{ErrorCode::kSyntax,
                  "job " + key_ +
                      (depth_ == 1 ? ": expected an array of host names or hostlists, got "
                                   : ": expected a host name or hostlist (a string), got ") +
                      what,
                  file_, line_now()};
    return false;
  }
  std::string_view text_;
  str::LineCounter lines_;
  const std::string& file_;
  Collector& jobs_;
  int depth_ = 0;  // 1 in the object, 2 in a job's array
  std::string key_;
  int key_line_ = 0;
};

}  // namespace

Result<RunningJobs> running_from_json(const fabric::Fabric& f, std::string_view text,
                                      const std::string& file) {
  Collector jobs(f, file);
  RunningReader reader(text, file, jobs);
  if (auto r = read_json_events(text, file, reader); !r) return std::unexpected(r.error());
  return std::move(jobs).finish();
}

Result<RunningJobs> running_from_lines(const fabric::Fabric& f, std::string_view text,
                                       const std::string& file) {
  Collector jobs(f, file);
  int lineno = 0;
  for (std::string_view raw : str::lines(text)) {
    ++lineno;
    const auto line = str::trim(raw);
    if (line.empty() || line.front() == '#') continue;
    const auto sp = line.find_first_of(" \t");
    std::string id;
    std::string_view hosts = line;
    if (sp == std::string_view::npos) {
      // A ring, numbered by its line; but a lone job id (squeue's %N left out, or a job
      // without hosts) names no host: said, not read as a ring of a host called so.
      if (slurm_job_id(line) && !f.find_host(line))
        return fail(ErrorCode::kSyntax,
                    std::string(kLineFormats) + ", got " + str::quoted(line) +
                        ": a job id without its hosts",
                    file, lineno);
      id = std::to_string(lineno);
    } else {
      hosts = str::trim(line.substr(sp));
      id = line.substr(0, sp);
      if (hosts.find_first_of(" \t") != std::string_view::npos || !slurm_job_id(id))
        return fail(ErrorCode::kSyntax, std::string(kLineFormats) + ", got " + str::quoted(line),
                    file, lineno);
    }
    if (auto r = jobs.begin(std::move(id), lineno); !r) return std::unexpected(r.error());
    if (auto r = jobs.add(hosts, lineno); !r) return std::unexpected(r.error());
    jobs.end();
  }
  return std::move(jobs).finish();
}

Result<RunningJobs> parse_running(const fabric::Fabric& f, std::string_view text,
                                  const std::string& file) {
  const auto first = text.find_first_not_of(" \t\r\n");
  // JSON starts with '{'; a '[' (no host name starts so) is JSON too, and the wrong kind:
  // the JSON reader says what was expected.
  if (first != std::string_view::npos && (text[first] == '{' || text[first] == '['))
    return running_from_json(f, text, file);
  return running_from_lines(f, text, file);
}

std::uint64_t running_salt(const RunningJob& job) {
  if (auto n = str::parse_uint(job.id, UINT64_MAX); n && *n != 0) return *n;
  std::uint64_t h = 0xcbf29ce484222325u;
  for (unsigned char c : job.id) h = (h ^ c) * 0x100000001b3u;
  return h ? h : 1;
}

}  // namespace fabricplace::placement
