#include "fabricplace/ops/watch.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <nlohmann/json.hpp>

#include "fabricplace/common/file_io.hpp"
#include "fabricplace/common/strings.hpp"
#include "fabricplace/fabric/builder.hpp"
#include "fabricplace/fabric/health.hpp"

namespace fabricplace::ops {

using fabric::Fabric;

Result<WatchState> read_watch_state(const std::string& path) {
  WatchState st;
  struct stat sb {};
  if (::stat(path.c_str(), &sb) != 0 && errno == ENOENT) return st;  // a first run
  auto text = read_file(path, 16u << 20);
  if (!text) return std::unexpected(text.error());
  const auto j = nlohmann::json::parse(*text, nullptr, false);
  auto bad = [&](const std::string& what) {
    return fail(ErrorCode::kSyntax,
                what + " (the state `fabric watch` keeps; remove the file to start afresh)", path,
                1);
  };
  if (j.is_discarded() || !j.is_object()) return bad("expected a JSON object");
  if (!j.contains("runs") || !j["runs"].is_number_unsigned())
    return bad("\"runs\": expected a count");
  st.runs = j["runs"].get<std::uint64_t>();
  if (j.contains("events")) {
    if (!j["events"].is_array()) return bad("\"events\": expected an array");
    for (const auto& e : j["events"]) {
      if (!e.is_array() || e.size() != 3 || !e[0].is_number_unsigned() || !e[1].is_string() ||
          !e[2].is_string())
        return bad("\"events\": expected [run, link, what] entries");
      st.events.push_back(
          {e[0].get<std::uint64_t>(), e[1].get<std::string>(), e[2].get<std::string>()});
    }
  }
  return st;
}

std::string to_json(const WatchState& st) {
  nlohmann::json j;
  j["runs"] = st.runs;
  j["events"] = nlohmann::json::array();
  for (const auto& e : st.events) j["events"].push_back({e.run, e.link, e.what});
  return j.dump(1) + "\n";
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

}  // namespace

WatchStep watch_step(const Fabric* accepted, const Fabric& now, WatchState& st,
                     unsigned flap_runs) {
  WatchStep step;
  st.runs += 1;
  if (accepted) {
    step.diff = fabric::diff(*accepted, now);
    if (!step.diff.empty()) {
      const auto text = fabric::diff_text(step.diff);
      for (auto line : str::lines(text))
        if (!line.empty() && !line.starts_with("note: ")) step.changes.emplace_back(line);
    }
    std::vector<std::string> touched;
    auto add = [&](const std::vector<fabric::FabricDiff::LinkChange>& v, const char* what) {
      for (const auto& c : v) {
        st.events.push_back({st.runs, c.link, what});
        touched.push_back(c.link);
      }
    };
    add(step.diff.removed, "removed");
    add(step.diff.added, "added");
    add(step.diff.degraded, "degraded");
    add(step.diff.recovered, "recovered");
    for (const auto& [link, detail] : downed_between(*accepted, now)) {
      step.flaps.push_back("flapped " + link + ": went down and came back up since the last run (" +
                           detail + ")");
      st.events.push_back({st.runs, link, "flapped"});
      touched.push_back(link);
    }
    // Forget what is older than the window, then: links with two or more events in it.
    std::erase_if(st.events,
                  [&](const WatchState::Event& e) { return e.run + flap_runs <= st.runs; });
    std::ranges::sort(touched);
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    for (const auto& link : touched) {
      std::string seen;
      int n = 0;
      for (const auto& e : st.events)
        if (e.link == link) {
          seen += (n++ ? ", " : "") + e.what + " (run " + std::to_string(e.run) + ")";
        }
      if (n >= 2)
        step.flaps.push_back("flapping " + link + ": " + std::to_string(n) +
                             " changes in the last " + std::to_string(flap_runs) +
                             " runs: " + seen);
    }
  }
  step.change_count = step.changes.size() + step.flaps.size();
  if (accepted) {  // the links of `flaps`: said flapped, or with two events or more in the window
    std::vector<std::string> links;
    for (const auto& e : st.events)
      if (e.run == st.runs &&
          (e.what == "flapped" || std::ranges::count_if(st.events, [&](const WatchState::Event& x) {
                                    return x.link == e.link;
                                  }) >= 2))
        links.push_back(e.link);
    std::ranges::sort(links);
    step.flapping_links =
        static_cast<std::uint64_t>(std::unique(links.begin(), links.end()) - links.begin());
  }
  return step;
}

Result<Fabric> with_lost_links(const Fabric& now, const Fabric& accepted) {
  fabric::FabricBuilder b(now.origin());
  if (auto ok = b.merge(now); !ok) return std::unexpected(ok.error());
  fabric::note_lost_links(b, accepted);
  return b.build();
}

}  // namespace fabricplace::ops
