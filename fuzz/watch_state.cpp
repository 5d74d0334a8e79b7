// SPDX-License-Identifier: GPL-2.0-or-later
// fuzz_watch_state: ops::read_watch_state over `fabric watch`'s STATE/watch.json, then one
// run's step on it (a link of fat2:leaves=2,down=2,up=2 degraded, its LinkDownedCounter
// risen: two events), as a run does. Every state read: events oldest first, each run from 1
// to "runs", each event one of the five words, each link printable UTF-8 of at most
// kMaxLinkTextBytes; to_json reads back to the same text. After the step: at most
// kEventsPerLink events per link, and the state still reads back.
#include <string>
#include <unordered_map>

#include "fabricplace/common/strings.hpp"
#include "fabricplace/fabric/json_io.hpp"
#include "fabricplace/ops/watch.hpp"
#include "fixed_fabric.hpp"

namespace {

using namespace fabricplace;

void check_state(const ops::WatchState& st, const char* when) {
  std::uint64_t last = 0;
  for (const auto& e : st.events) {
    fuzz::require(e.run >= last, "watch state: events out of run order", when);
    last = e.run;
    fuzz::require(e.run >= 1 && e.run <= st.runs, "watch state: an event's run out of range", when);
    fuzz::require(e.what == "removed" || e.what == "added" || e.what == "degraded" ||
                      e.what == "recovered" || e.what == "flapped",
                  "watch state: an unknown event", e.what);
    fuzz::require(!e.link.empty() && e.link.size() <= ops::kMaxLinkTextBytes &&
                      str::invalid_utf8_at(e.link) == std::string_view::npos &&
                      str::control_char_at(e.link) == std::string_view::npos,
                  "watch state: a link that is no printable name", str::excerpt(e.link));
  }
  const auto text = ops::to_json(st);
  auto back = ops::read_watch_state(text, "again.json");
  if (!back) fuzz::violated("watch state: to_json does not read back", back.error().to_string());
  const auto again = ops::to_json(*back);
  fuzz::require(again == text, "watch state: the round trip changed the text",
                fuzz::first_difference(text, again));
}

// fat2:leaves=2,down=2,up=2 with node001's link at `rate` and its LinkDownedCounter at
// `downed`.
fabric::Fabric variant(const char* rate, int downed) {
  auto f = fuzz::load_fixed("fat2:leaves=2,down=2,up=2");
  auto json = fabric::to_json(f);
  json.replace(json.find("\"4xHDR\"]"), 8, std::string("\"") + rate + "\"]");
  fabric::FabricBuilder b;
  if (!fabric::read_json(json, "fixed.json", b)) fuzz::violated("watch state: fixed fabric");
  auto s = b.build();
  if (!s) fuzz::violated("watch state: fixed fabric", s.error().to_string());
  fabric::PortHealth h;
  h.has_counters = true;
  h.counters[static_cast<std::size_t>(fabric::Counter::kLinkDownedCounter)] =
      static_cast<std::uint64_t>(downed);
  fabric::FabricBuilder c;
  (void)c.merge(*s);
  (void)c.set_port_health(s->node(s->port(s->link(fabric::LinkId{0}).a).node).guid,
                          s->port(s->link(fabric::LinkId{0}).a).rec.number, h);
  auto out = c.build();
  if (!out) fuzz::violated("watch state: fixed fabric", out.error().to_string());
  return std::move(*out);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto good = variant("4xHDR", 0), bad = variant("1xHDR", 3);
  auto st = ops::read_watch_state(fuzz::text_of(data, size), "watch.json");
  if (!st) {
    fuzz::check_error(st.error());
    return 0;
  }
  check_state(*st, "as read");
  const unsigned window = 2 + static_cast<unsigned>(st->runs % 50);
  (void)ops::watch_step(&good, bad, *st, window);
  std::unordered_map<std::string, std::size_t> per_link;
  for (const auto& e : st->events)
    fuzz::require(++per_link[e.link] <= ops::kEventsPerLink,
                  "watch state: more than kEventsPerLink events of a link", e.link);
  check_state(*st, "after a step");
  return 0;
}
