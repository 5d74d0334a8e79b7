// SPDX-License-Identifier: GPL-2.0-or-later
#include "fabricplace/ops/watch.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_map>

#include "fabricplace/common/limits.hpp"
#include "fabricplace/common/strings.hpp"
#include "fabricplace/fabric/builder.hpp"
#include "fabricplace/fabric/health.hpp"
#include "fabricplace/fabric/json_io.hpp"

namespace fabricplace::ops {

using fabric::Fabric;

namespace {

constexpr const char* kStateHint =
    " (the state `fabric watch` keeps; remove the file to start afresh)";
constexpr std::array<std::string_view, 5> kWhats = {"removed", "added", "degraded", "recovered",
                                                    "flapped"};

// {"runs": N, "events": [[run, "link", "what"], ...], "dropped": [["link", count, run], ...]}
// read as SAX events: three levels at most (the object, its arrays, their entries), so a
// deeper value ends the read at its first bracket, with its line, and no document tree is
// ever built.
class StateReader final : public nlohmann::json::json_sax_t {
 public:
  StateReader(std::string_view text, const std::string& file, WatchState& st)
      : text_(text), lines_(text), file_(file), st_(st) {}
  const char* furthest = nullptr;
  std::optional<Error> error;
  std::string parse_error_what;

  bool start_object(std::size_t) override {
    if (depth_ == 0 && !done_) {
      depth_ = 1;
      return true;
    }
    return wrong_value("an object");
  }
  bool end_object() override {
    depth_ = 0;
    done_ = true;
    return true;
  }
  bool start_array(std::size_t) override {
    if (depth_ == 1 && (key_ == Key::kEvents || key_ == Key::kDropped)) {
      depth_ = 2;
      return true;
    }
    if (depth_ == 2) {
      depth_ = 3;
      field_ = 0;
      entry_line_ = line_now();
      return true;
    }
    return wrong_value("an array");
  }
  bool end_array() override {
    if (depth_ == 3) {
      depth_ = 2;
      return end_entry();
    }
    depth_ = 1;
    key_ = Key::kNone;
    return true;
  }
  bool key(string_t& k) override {
    static constexpr std::array<std::pair<std::string_view, Key>, 3> kKeys = {
        {{"runs", Key::kRuns}, {"events", Key::kEvents}, {"dropped", Key::kDropped}}};
    for (const auto& [name, key] : kKeys)
      if (k == name) {
        if (seen_[static_cast<int>(key)])
          return bad("\"" + std::string(name) + "\" twice: expected each key once");
        seen_[static_cast<int>(key)] = true;
        key_ = key;
        return true;
      }
    return bad("unknown key " + str::quoted(k) +
               ": expected \"runs\", \"events\" and \"dropped\" only");
  }
  bool number_unsigned(number_unsigned_t v) override {
    if (v > kMaxRuns) return wrong_value("a number over 10^15");
    if (depth_ == 1 && key_ == Key::kRuns) {
      st_.runs = v;
      return true;
    }
    if (depth_ != 3) return wrong_value("a number");
    if (key_ == Key::kEvents && field_ == 0) {
      ev_.run = v;
    } else if (key_ == Key::kDropped && field_ == 1) {
      drop_.count = v;
    } else if (key_ == Key::kDropped && field_ == 2) {
      drop_.last_run = v;
    } else {
      return wrong_value("a number");
    }
    ++field_;
    return true;
  }
  bool string(string_t& v) override {
    if (depth_ != 3) return wrong_value("a string");
    if (key_ == Key::kEvents && field_ == 1) {
      if (!link_ok(v)) return false;
      ev_.link = std::move(v);
    } else if (key_ == Key::kEvents && field_ == 2) {
      if (std::ranges::find(kWhats, std::string_view(v)) == kWhats.end())
        return bad("\"events\": " + str::quoted(v) +
                   " is no event: expected removed, added, degraded, recovered or flapped");
      ev_.what = std::move(v);
    } else if (key_ == Key::kDropped && field_ == 0) {
      if (!link_ok(v)) return false;
      drop_.link = std::move(v);
    } else {
      return wrong_value("a string");
    }
    ++field_;
    return true;
  }
  bool number_integer(number_integer_t) override { return wrong_value("a negative number"); }
  bool number_float(number_float_t, const string_t&) override {
    return wrong_value("a fractional number");
  }
  bool boolean(bool) override { return wrong_value("a boolean"); }
  bool null() override { return wrong_value("null"); }
  bool binary(binary_t&) override { return wrong_value("binary data"); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    parse_error_what = e.what();
    return false;
  }
  int line_now() {
    if (!furthest || furthest <= text_.data()) return 1;
    return lines_.line_at(static_cast<std::size_t>(furthest - text_.data()) - 1);
  }

  // After the whole text: what only the whole can show.
  Result<void> finish() {
    if (!seen_[static_cast<int>(Key::kRuns)]) return fail_at("\"runs\": expected a count", 1);
    if (max_run_ > st_.runs)
      return fail_at("run " + std::to_string(max_run_) + ": expected a run from 1 to \"runs\" (" +
                         std::to_string(st_.runs) + ")",
                     max_run_line_);
    // Oldest first, as written; a file put in another order is read in that order.
    if (!std::ranges::is_sorted(st_.events, {}, &WatchState::Event::run))
      std::ranges::stable_sort(st_.events, {}, &WatchState::Event::run);
    return {};
  }

 private:
  enum class Key : std::uint8_t { kRuns, kEvents, kDropped, kNone };

  bool end_entry() {
    if (field_ != 3) return bad_entry();
    const bool events = key_ == Key::kEvents;
    const std::uint64_t run = events ? ev_.run : drop_.last_run;
    if (run == 0 || (!events && drop_.count == 0))
      return bad(events ? "\"events\": run 0: expected a run from 1 to \"runs\""
                        : "\"dropped\": expected a count and a run of 1 or more");
    if (run > max_run_) {
      max_run_ = run;
      max_run_line_ = entry_line_;
    }
    if (events) {
      st_.events.push_back(std::move(ev_));
      ev_ = {};
    } else {
      st_.dropped.push_back(std::move(drop_));
      drop_ = {};
    }
    return true;
  }
  bool link_ok(const std::string& v) {
    if (v.empty() || v.size() > kMaxLinkTextBytes)
      return bad(std::string(key_ == Key::kEvents ? "\"events\"" : "\"dropped\"") + ": a link of " +
                 std::to_string(v.size()) + " bytes: expected a link's name of 1 to " +
                 std::to_string(kMaxLinkTextBytes) + " bytes");
    if (str::invalid_utf8_at(v) != std::string_view::npos ||
        str::control_char_at(v) != std::string_view::npos)
      return bad(std::string(key_ == Key::kEvents ? "\"events\"" : "\"dropped\"") + ": link " +
                 str::quoted(v) + ": expected UTF-8 text without control characters");
    return true;
  }
  bool bad_entry(const char* got = nullptr) {
    return bad(std::string(key_ == Key::kEvents
                               ? "\"events\": expected [run, link, what] entries"
                               : "\"dropped\": expected [link, count, run] entries") +
               (got ? std::string(", got ") + got : std::string()));
  }
  // A value of the wrong kind where it stands.
  bool wrong_value(const char* got) {
    if (depth_ == 0)
      return bad(std::string("expected a JSON object {\"runs\": N, \"events\": [...]}, got ") +
                 got);
    switch (key_) {
      case Key::kRuns:
        return bad(std::string("\"runs\": expected a count, got ") + got);
      case Key::kEvents:
        if (depth_ == 1) return bad(std::string("\"events\": expected an array, got ") + got);
        break;
      case Key::kDropped:
        if (depth_ == 1) return bad(std::string("\"dropped\": expected an array, got ") + got);
        break;
      case Key::kNone:
        return bad(std::string("expected a key, got ") + got);
    }
    return bad_entry(got);
  }
  bool bad(const std::string& what) {
    error = Error{ErrorCode::kSyntax, what + kStateHint, file_, line_now()};
    return false;
  }
  std::unexpected<Error> fail_at(const std::string& what, int line) {
    return fail(ErrorCode::kSyntax, what + kStateHint, file_, line);
  }

  std::string_view text_;
  str::LineCounter lines_;
  const std::string& file_;
  WatchState& st_;
  int depth_ = 0;  // 1 in the object, 2 in "events" or "dropped", 3 in one of their entries
  bool done_ = false;
  Key key_ = Key::kNone;
  std::array<bool, 3> seen_{};
  int field_ = 0, entry_line_ = 0, max_run_line_ = 1;
  std::uint64_t max_run_ = 0;
  WatchState::Event ev_;
  WatchState::Dropped drop_;
};

}  // namespace

Result<WatchState> read_watch_state(std::string_view text, const std::string& file) {
  WatchState st;
  StateReader reader(text, file, st);
  reader.furthest = text.data();
  const str::TrackingIterator first{text.data(), &reader.furthest},
      last{text.data() + text.size(), &reader.furthest};
  if (!nlohmann::json::sax_parse(first, last, &reader, nlohmann::json::input_format_t::json,
                                 true)) {
    if (reader.error) return std::unexpected(*reader.error);
    auto e = fabric::json_syntax_error(reader.parse_error_what, reader.line_now(), file);
    e.message += kStateHint;
    return std::unexpected(std::move(e));
  }
  if (auto ok = reader.finish(); !ok) return std::unexpected(ok.error());
  return st;
}

// One event or entry per line, written by hand: linear, and no document tree.
std::string to_json(const WatchState& st) {
  std::string o = "{\"runs\": " + std::to_string(st.runs) + ",\n \"events\": [";
  for (std::size_t i = 0; i < st.events.size(); ++i) {
    const auto& e = st.events[i];
    o += i ? ",\n  [" : "\n  [";
    o += std::to_string(e.run);
    o += ", ";
    o += str::json_quote(e.link);
    o += ", ";
    o += str::json_quote(e.what);
    o += ']';
  }
  o += st.events.empty() ? "],\n \"dropped\": [" : "\n ],\n \"dropped\": [";
  for (std::size_t i = 0; i < st.dropped.size(); ++i) {
    const auto& d = st.dropped[i];
    o += i ? ",\n  [" : "\n  [";
    o += str::json_quote(d.link);
    o += ", ";
    o += std::to_string(d.count);
    o += ", ";
    o += std::to_string(d.last_run);
    o += ']';
  }
  o += st.dropped.empty() ? "]\n}\n" : "\n ]\n}\n";
  return o;
}

namespace {

// Links present in both fabrics whose LinkDownedCounter rose (either end): they went down
// and came back between the two reads.
std::vector<std::pair<std::string, std::string>> downed_between(const Fabric& before,
                                                                const Fabric& now) {
  const auto k = static_cast<std::size_t>(fabric::Counter::kLinkDownedCounter);
  std::map<std::pair<fabric::Guid, fabric::PortNum>, std::uint64_t> was;
  for (const auto& p : before.ports())
    if (p.health.has_counters && p.link != fabric::kNoLink)
      was[{before.node(p.node).guid, p.rec.number}] = p.health.counters[k];
  std::vector<std::pair<std::string, std::string>> out;
  if (was.empty()) return out;
  for (const auto& l : now.links()) {
    std::string detail;
    for (const auto pid : {l.a, l.b}) {
      const auto& p = now.port(pid);
      if (!p.health.has_counters) continue;
      const auto it = was.find({now.node(p.node).guid, p.rec.number});
      if (it == was.end() || p.health.counters[k] <= it->second) continue;
      detail = fabric::port_name(now, pid) + " LinkDownedCounter " + std::to_string(it->second) +
               " -> " + std::to_string(p.health.counters[k]);
      break;
    }
    if (!detail.empty()) out.emplace_back(fabric::link_name(now, l), detail);
  }
  return out;
}

// Counts events a state lets go in its `dropped` entries: one per link, with the run of its
// newest dropped event. Dropping is rare: the keys are copies.
class Drops {
 public:
  explicit Drops(WatchState& st) : st_(st) {
    for (std::size_t i = 0; i < st.dropped.size(); ++i) at_.emplace(st.dropped[i].link, i);
  }
  void add(const WatchState::Event& e) {
    const auto [it, fresh] = at_.try_emplace(e.link, st_.dropped.size());
    if (fresh) {
      st_.dropped.push_back({e.link, 1, e.run});
      return;
    }
    auto& d = st_.dropped[it->second];
    d.count = std::min(d.count + 1, kMaxRuns);
    d.last_run = std::max(d.last_run, e.run);
  }

 private:
  WatchState& st_;
  std::unordered_map<std::string, std::size_t> at_;
};

// Keeps the events `keep` says, in order.
void compact(WatchState& st, const std::vector<bool>& keep) {
  std::size_t w = 0;
  for (std::size_t i = 0; i < st.events.size(); ++i)
    if (keep[i]) {
      if (w != i) st.events[w] = std::move(st.events[i]);
      ++w;
    }
  st.events.resize(w);
}

// Each link's newest kEventsPerLink events stay; the older ones are counted in `st.dropped`.
// One pass from the newest event back, one hash map lookup per event.
void cap_events(WatchState& st) {
  std::unordered_map<std::string_view, std::size_t> kept;
  std::vector<bool> keep(st.events.size(), true);
  std::optional<Drops> drops;
  for (std::size_t i = st.events.size(); i-- > 0;) {
    if (++kept[st.events[i].link] <= kEventsPerLink) continue;
    keep[i] = false;
    if (!drops) drops.emplace(st);
    drops->add(st.events[i]);
  }
  if (drops) compact(st, keep);
}

}  // namespace

WatchStep watch_step(const Fabric* accepted, const Fabric& now, WatchState& st,
                     unsigned flap_runs) {
  WatchStep step;
  st.runs = std::min(st.runs + 1, kMaxRuns);  // saturates: a state always reads back
  if (!accepted) return step;
  step.diff = fabric::diff(*accepted, now);
  if (!step.diff.empty()) {
    const auto text = fabric::diff_text(step.diff);
    for (auto line : str::lines(text))
      if (!line.empty() && !line.starts_with("note: ")) step.changes.emplace_back(line);
  }
  // Forget what is older than the window; then this run's events, each link's newest kept.
  std::erase_if(st.events,
                [&](const WatchState::Event& e) { return e.run + flap_runs <= st.runs; });
  std::erase_if(st.dropped,
                [&](const WatchState::Dropped& d) { return d.last_run + flap_runs <= st.runs; });
  const std::size_t before = st.events.size();
  auto add = [&](const std::vector<fabric::FabricDiff::LinkChange>& v, const char* what) {
    for (const auto& c : v) st.events.push_back({st.runs, c.link, what});
  };
  add(step.diff.removed, "removed");
  add(step.diff.added, "added");
  add(step.diff.degraded, "degraded");
  add(step.diff.recovered, "recovered");
  for (auto& [link, detail] : downed_between(*accepted, now)) {
    step.flaps.push_back("flapped " + link + ": went down and came back up since the last run (" +
                         detail + ")");
    st.events.push_back({st.runs, std::move(link), "flapped"});
  }
  if (st.events.size() == before) {
    step.change_count = step.changes.size() + step.flaps.size();
    return step;
  }
  cap_events(st);
  // Each link's events in the window, counted once; the links this run touched, by name.
  std::unordered_map<std::string_view, std::vector<std::uint32_t>> history;
  std::vector<std::string_view> touched;
  for (std::uint32_t i = 0; i < st.events.size(); ++i) {
    auto& h = history[st.events[i].link];
    if (st.events[i].run == st.runs && (h.empty() || st.events[h.back()].run != st.runs))
      touched.push_back(st.events[i].link);
    h.push_back(i);
  }
  std::unordered_map<std::string_view, std::uint64_t> dropped;
  for (const auto& d : st.dropped) dropped[d.link] = d.count;
  std::ranges::sort(touched);
  std::uint64_t flapping = 0;
  for (const auto link : touched) {
    const auto& h = history.at(link);
    bool flapped = false;
    for (const auto i : h)
      flapped = flapped || (st.events[i].run == st.runs && st.events[i].what == "flapped");
    if (flapped || h.size() >= 2) ++flapping;
    if (h.size() < 2) continue;
    std::string line = "flapping " + std::string(link) + ": " + std::to_string(h.size()) +
                       " changes in the last " + std::to_string(flap_runs) + " runs: ";
    for (std::size_t n = 0; n < h.size(); ++n) {
      const auto& e = st.events[h[n]];
      if (n) line += ", ";
      line += e.what;
      line += " (run ";
      line += std::to_string(e.run);
      line += ')';
    }
    if (const auto it = dropped.find(link); it != dropped.end())
      line += "; " + std::to_string(it->second) + " earlier not kept (a link keeps its last " +
              std::to_string(kEventsPerLink) + ")";
    step.flaps.push_back(std::move(line));
  }
  step.change_count = step.changes.size() + step.flaps.size();
  step.flapping_links = flapping;
  return step;
}

Result<Fabric> with_lost_links(const Fabric& now, const Fabric& accepted) {
  fabric::FabricBuilder b(now.origin());
  if (auto ok = b.merge(now); !ok) return std::unexpected(ok.error());
  fabric::note_lost_links(b, accepted);
  return b.build();
}

// The watch's directory.

namespace {

constexpr const char* kAccepted = "accepted.json";
constexpr const char* kState = "watch.json";
constexpr const char* kLock = "lock";

std::uint64_t max_state_bytes() {
  return std::min(limits().input_bytes, kMaxStateBytes);
}

}  // namespace

Result<WatchDir> WatchDir::open(const std::string& path, int wait_s) {
  auto dir = OwnedDir::open(path, OwnedDir::Create::kYes);
  if (!dir) return std::unexpected(dir.error());
  auto lock = dir->lock(kLock, wait_s,
                        "another `fabric watch --state " + path +
                            "` run (the fabricplace-watch service, or a watch with --interval)");
  if (!lock) return std::unexpected(lock.error());
  WatchDir w(std::move(*dir), std::move(*lock));
  for (const char* name : {kAccepted, kState})
    if (w.dir_.kind(name) == OwnedDir::Kind::kLink)
      w.notes_.push_back(w.dir_.path_of(name) + " is a link (to " +
                         str::quoted(w.dir_.read_link(name)) +
                         "): not followed, read as no file, and replaced by this run's");
  return w;
}

Result<WatchState> WatchDir::read_state() const {
  if (const auto k = dir_.kind(kState); k == OwnedDir::Kind::kMissing || k == OwnedDir::Kind::kLink)
    return WatchState{};
  // Larger than any state a run writes: no setting makes it readable, so say what helps.
  if (struct stat st {}; ::fstatat(dir_.fd(), kState, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                         static_cast<std::uint64_t>(st.st_size) > max_state_bytes())
    return fail(ErrorCode::kIo,
                "is " + std::to_string(static_cast<std::uint64_t>(st.st_size)) +
                    " bytes, more than the " + std::to_string(max_state_bytes() >> 20) +
                    " MiB a watch state holds (a run never writes one so large)" + kStateHint,
                dir_.path_of(kState));
  auto text = dir_.read_file(kState, max_state_bytes());
  if (!text) return std::unexpected(text.error());
  return read_watch_state(*text, dir_.path_of(kState));
}

Result<std::unique_ptr<Fabric>> WatchDir::read_accepted() const {
  if (const auto k = dir_.kind(kAccepted);
      k == OwnedDir::Kind::kMissing || k == OwnedDir::Kind::kLink)
    return nullptr;
  auto text = dir_.read_file(kAccepted, limits().input_bytes);
  if (!text) return std::unexpected(text.error());
  fabric::FabricBuilder b;
  if (auto ok = fabric::read_json(*text, dir_.path_of(kAccepted), b); !ok)
    return std::unexpected(ok.error());
  auto f = b.build();
  if (!f) {
    auto e = f.error();
    if (e.file.empty()) e.file = dir_.path_of(kAccepted);
    return std::unexpected(std::move(e));
  }
  return std::make_unique<Fabric>(std::move(*f));
}

// The state never outgrows what read_state() accepts (max_state_bytes()): past it, the
// oldest events go, as many as the excess holds at the file's mean bytes per event (and one),
// counted as dropped like those past kEventsPerLink.
Result<void> WatchDir::write_state(WatchState& st) const {
  auto text = to_json(st);
  while (text.size() > max_state_bytes() && !st.events.empty()) {
    const std::size_t mean = text.size() / st.events.size() + 1;
    const std::size_t n = std::min(st.events.size(), (text.size() - max_state_bytes()) / mean + 1);
    std::vector<bool> keep(st.events.size(), true);
    Drops drops(st);
    for (std::size_t i = 0; i < n; ++i) {
      keep[i] = false;
      drops.add(st.events[i]);
    }
    compact(st, keep);
    text = to_json(st);
  }
  return dir_.write_file(kState, text);
}

Result<void> WatchDir::write_accepted(const Fabric& f) const {
  return dir_.write_file(kAccepted, fabric::to_json(f));
}

}  // namespace fabricplace::ops
