// SPDX-License-Identifier: GPL-2.0-or-later
#include "fabricplace/placement/request.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <tuple>

#include "fabricplace/common/hostlist.hpp"
#include "fabricplace/common/strings.hpp"
#include "fabricplace/fabric/json_io.hpp"
#include "json_events.hpp"

namespace fabricplace::placement {

Result<void> validate(const JobRequest& job) {
  if (auto s = JobShape::make(job.spec()); !s) return std::unexpected(s.error());
  return {};
}

std::string_view to_string(HostState s) {
  switch (s) {
    case HostState::kFree:
      return "free";
    case HostState::kBusy:
      return "busy";
    case HostState::kDrained:
      return "drained";
    case HostState::kDown:
      return "down";
    case HostState::kUnknown:
      return "unknown";
  }
  return "?";
}

std::size_t NodeStates::count(HostState s) const {
  return static_cast<std::size_t>(std::count(state.begin(), state.end(), s));
}

NodeStates all_free(const fabric::Fabric& f) {
  NodeStates s;
  s.state.assign(f.num_hosts(), HostState::kFree);
  return s;
}

Result<std::vector<fabric::HostId>> resolve_hosts(
    std::string_view expr, std::string_view what,
    const std::function<std::optional<fabric::HostId>(std::string_view)>& find) {
  auto names = hostlist::expand(expr);
  if (!names) {
    Error e = names.error();
    e.code = ErrorCode::kUsage;
    e.message = std::string(what) + ": " + e.message;
    return std::unexpected(e);
  }
  std::vector<fabric::HostId> out;
  std::vector<std::string> unknown;  // the first 1,000, for the message (it shows 200 bytes)
  std::size_t unknowns = 0;
  for (const auto& n : *names) {
    if (auto h = find(n))
      out.push_back(*h);
    else if (++unknowns <= 1000)
      unknown.push_back(n);
  }
  if (unknowns > 0)
    return fail(ErrorCode::kUsage, std::string(what) + ": " + std::to_string(unknowns) +
                                       " host(s) not in the fabric: " +
                                       str::excerpt(hostlist::compress(unknown), 200));
  return out;
}

Result<std::vector<fabric::HostId>> resolve_hosts(const fabric::Fabric& f, std::string_view expr,
                                                  std::string_view what) {
  return resolve_hosts(expr, what, [&f](std::string_view n) { return f.find_host(n); });
}

namespace {

Result<NodeStates> marked(const fabric::Fabric& f, std::string_view expr, std::string_view what,
                          HostState listed, HostState others) {
  // An empty list is a list: `--free ''` means no host is free.
  auto hosts = str::trim(expr).empty() ? Result<std::vector<fabric::HostId>>{}
                                       : resolve_hosts(f, expr, what);
  if (!hosts) return std::unexpected(hosts.error());
  NodeStates s;
  s.state.assign(f.num_hosts(), others);
  for (auto h : *hosts) s.state[fabric::idx(h)] = listed;
  return s;
}

// Hosts named by a state source that the fabric lacks: one warning, compressed.
void warn_unreported(const fabric::Fabric& f, NodeStates& s, const std::string& source) {
  std::vector<std::string> missing;
  for (std::uint32_t h = 0; h < f.num_hosts(); ++h)
    if (s.state[h] == HostState::kUnknown) missing.push_back(f.hosts()[h].name);
  if (!missing.empty())
    s.warnings.push_back(
        source + ": " + std::to_string(missing.size()) +
        " host(s) of the fabric not reported, not placed on: " + hostlist::compress(missing));
}

// Host states as they are read: each name is resolved against the fabric at once, and of
// the names not in it only the count and the first 1,000 are kept (the message shows 200
// bytes), so a state file of millions of unknown hosts costs no more memory than its text.
class StateCollector {
 public:
  StateCollector(const fabric::Fabric& f, const std::string& source) : f_(f), source_(source) {
    s_.state.assign(f.num_hosts(), HostState::kUnknown);
  }
  Result<void> add(std::string_view name, std::string_view value, int line) {
    auto st = parse_slurm_state(value);
    if (!st)
      return fail(ErrorCode::kSyntax, str::quoted(name) + ": " + st.error().message, source_, line);
    if (auto h = f_.find_host(name))
      s_.state[fabric::idx(*h)] = worse(s_.state[fabric::idx(*h)], *st);
    else if (++strangers_ <= kShown)
      shown_.emplace_back(name);
    return {};
  }
  NodeStates finish() && {
    if (strangers_ > 0) {
      std::sort(shown_.begin(), shown_.end(), hostlist::natural_less);
      s_.warnings.push_back(
          source_ + ": " + std::to_string(strangers_) +
          " host(s) not in the fabric ignored: " + str::excerpt(hostlist::compress(shown_), 200));
    }
    warn_unreported(f_, s_, source_);
    return std::move(s_);
  }

 private:
  static constexpr std::size_t kShown = 1000;
  static HostState worse(HostState a, HostState b) {
    // A host listed twice (sinfo prints a node once per partition) keeps its least usable
    // state.
    if (a == HostState::kUnknown) return b;
    return static_cast<int>(a) > static_cast<int>(b) ? a : b;
  }
  const fabric::Fabric& f_;
  const std::string& source_;
  NodeStates s_;
  std::uint64_t strangers_ = 0;
  std::vector<std::string> shown_;
};

}  // namespace

Result<NodeStates> free_hosts(const fabric::Fabric& f, std::string_view hostlist) {
  return marked(f, hostlist, "--free", HostState::kFree, HostState::kBusy);
}

Result<NodeStates> busy_hosts(const fabric::Fabric& f, std::string_view hostlist) {
  return marked(f, hostlist, "--busy", HostState::kBusy, HostState::kFree);
}

Result<HostState> parse_slurm_state(std::string_view raw) {
  std::string s;
  for (char c : str::trim(raw)) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // Flag suffixes (sinfo(1), NODE STATE CODES): '*' not responding; '~' powered off and '!'
  // about to be, both still allocatable (power saving boots them); '#' '%' '^' '@' '-' '$'
  // powering up or down, rebooting, planned for a pending job, maintenance reservation.
  bool not_responding = false, transient = false;
  while (!s.empty() && std::string_view("*~!#%^@-$").find(s.back()) != std::string_view::npos) {
    if (s.back() == '*') not_responding = true;
    if (std::string_view("#%^@-$").find(s.back()) != std::string_view::npos) transient = true;
    s.pop_back();
  }
  static const std::map<std::string_view, HostState, std::less<>> kStates{
      {"idle", HostState::kFree},          {"alloc", HostState::kBusy},
      {"allocated", HostState::kBusy},     {"mix", HostState::kBusy},
      {"mixed", HostState::kBusy},         {"comp", HostState::kBusy},
      {"completing", HostState::kBusy},    {"resv", HostState::kBusy},
      {"reserved", HostState::kBusy},      {"plnd", HostState::kBusy},
      {"planned", HostState::kBusy},       {"boot", HostState::kBusy},
      {"booting", HostState::kBusy},       {"npc", HostState::kBusy},
      {"perfctrs", HostState::kBusy},      {"drain", HostState::kDrained},
      {"drained", HostState::kDrained},    {"drng", HostState::kDrained},
      {"draining", HostState::kDrained},   {"maint", HostState::kDrained},
      {"reboot", HostState::kDrained},     {"down", HostState::kDown},
      {"fail", HostState::kDown},          {"failg", HostState::kDown},
      {"failing", HostState::kDown},       {"futr", HostState::kDown},
      {"future", HostState::kDown},        {"unk", HostState::kDown},
      {"unknown", HostState::kDown},       {"inval", HostState::kDown},
      {"pow_dn", HostState::kDown},        {"pow_up", HostState::kBusy},
      {"power_down", HostState::kDown},    {"power_up", HostState::kBusy},
      {"free", HostState::kFree},          {"busy", HostState::kBusy},
      {"cloud", HostState::kDown},         {"powered_down", HostState::kDown},
      {"powered_dn", HostState::kDown},    {"powering_up", HostState::kBusy},
      {"powering_down", HostState::kBusy}, {"powring_dn", HostState::kBusy},
      {"resume", HostState::kBusy},        {"resm", HostState::kBusy},
      {"blocked", HostState::kBusy},       {"canc_r", HostState::kBusy},
  };
  const auto it = kStates.find(s);
  if (it == kStates.end())
    return fail(ErrorCode::kUsage,
                "unknown node state " + str::quoted(str::trim(raw)) +
                    ", expected a Slurm state such as idle, alloc, mix, comp, resv, drain, "
                    "drng, maint, down, fail (sinfo's %t, optionally with a flag suffix * ~ # "
                    "% ! ^ @ - $), or free / busy");
  HostState st = it->second;
  if (not_responding && st != HostState::kDrained) st = HostState::kDown;
  if (transient && st == HostState::kFree) st = HostState::kBusy;
  return st;
}

namespace {

// {"host": "state", ...} read as SAX events: nothing but one flat object of strings is
// accepted, so nesting, numbers out of range and huge values end at the first wrong event,
// with its line, and no document tree is ever built.
class StatesReader final : public nlohmann::json::json_sax_t {
 public:
  StatesReader(std::string_view text, const std::string& file, StateCollector& states)
      : text_(text), lines_(text), file_(file), states_(states) {}
  const char* furthest = nullptr;
  std::optional<Error> error;
  std::string parse_error_what;
  bool done = false;

  bool start_object(std::size_t) override {
    if (depth_++ == 0) return true;
    return wrong("an object");
  }
  bool end_object() override {
    if (--depth_ == 0) done = true;
    return true;
  }
  bool start_array(std::size_t) override { return depth_ == 0 ? top_wrong() : wrong("an array"); }
  bool end_array() override { return true; }
  bool key(string_t& k) override {
    key_ = std::move(k);
    key_line_ = line_now();
    return true;
  }
  bool string(string_t& v) override {
    if (depth_ == 0) return top_wrong();
    if (auto r = states_.add(key_, v, key_line_); !r) {
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
    error = Error{ErrorCode::kSyntax, "expected a JSON object of host -> Slurm state", file_,
                  line_now()};
    return false;
  }
  bool wrong(const char* what) {
    error = Error{ErrorCode::kSyntax,
                  str::quoted(key_) + ": expected a state string such as \"idle\", got " + what,
                  file_, key_line_ > 0 ? key_line_ : line_now()};
    return false;
  }
  std::string_view text_;
  str::LineCounter lines_;
  const std::string& file_;
  StateCollector& states_;
  int depth_ = 0;
  std::string key_;
  int key_line_ = 0;
};

}  // namespace

Result<NodeStates> states_from_json(const fabric::Fabric& f, std::string_view text,
                                    const std::string& file) {
  StateCollector states(f, file);
  StatesReader reader(text, file, states);
  if (auto r = read_json_events(text, file, reader); !r) return std::unexpected(r.error());
  return std::move(states).finish();
}

Result<NodeStates> states_from_sinfo(const fabric::Fabric& f, std::string_view text,
                                     const std::string& source) {
  StateCollector states(f, source);
  int lineno = 0;
  for (std::string_view raw : str::lines(text)) {
    ++lineno;
    const auto line = str::trim(raw);
    if (line.empty()) continue;
    const auto sp = line.find_first_of(" \t");
    if (sp == std::string_view::npos)
      return fail(ErrorCode::kSyntax,
                  "expected \"HOST STATE\" (sinfo -h -N -o '%N %t'), got " + str::quoted(line),
                  source, lineno);
    if (auto r = states.add(line.substr(0, sp), str::trim(line.substr(sp)), lineno); !r)
      return std::unexpected(r.error());
  }
  return std::move(states).finish();
}

}  // namespace fabricplace::placement
