// SPDX-License-Identifier: GPL-2.0-or-later
// fabric watch's core (ops/watch.hpp): one line per change, flaps across runs within the
// window only, each link's events capped, the state file read back and its errors, and the
// state directory (locked, never reached through a link).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "fabricplace/common/file_io.hpp"
#include "fabricplace/fabric/builder.hpp"
#include "fabricplace/fabric/json_io.hpp"
#include "fabricplace/fabric/spec.hpp"
#include "fabricplace/ops/watch.hpp"

namespace fabricplace::ops {
namespace {

namespace fs = std::filesystem;

fabric::Fabric from_json(const std::string& text) {
  fabric::FabricBuilder b;
  EXPECT_TRUE(fabric::read_json(text, "x.json", b));
  auto f = b.build();
  EXPECT_TRUE(f);
  return std::move(*f);
}

// fat2:leaves=2,down=2,up=2 with node001's link at `rate`.
fabric::Fabric with_rate(const std::string& rate) {
  auto f = fabric::generate("fat2:leaves=2,down=2,up=2");
  EXPECT_TRUE(f);
  auto json = fabric::to_json(*f);
  const auto at = json.find("\"4xHDR\"]");
  json.replace(at, 8, "\"" + rate + "\"]");
  return from_json(json);
}

// A fresh directory of this test's own.
fs::path fresh_dir(const std::string& name) {
  const auto dir =
      fs::temp_directory_path() / ("fp-watch-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// `text` holds `part` (said with both when not).
::testing::AssertionResult has(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" lacks \"" << part << "\"";
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), {}};
}

TEST(Watch, ChangesFlapsAndTheWindow) {
  const auto good = with_rate("4xHDR"), bad = with_rate("1xHDR");
  WatchState st;
  auto s = watch_step(nullptr, good, st, 3);
  EXPECT_EQ(st.runs, 1u);
  EXPECT_EQ(s.change_count, 0u);
  s = watch_step(&good, good, st, 3);
  EXPECT_TRUE(s.changes.empty());
  s = watch_step(&good, bad, st, 3);  // run 3
  ASSERT_EQ(s.changes.size(), 2u);
  EXPECT_EQ(s.changes[0], "degraded node001 mlx5_0[1] - leaf01[1]: 4xHDR -> 1xHDR");
  EXPECT_TRUE(s.flaps.empty());
  s = watch_step(&bad, good, st, 3);  // run 4: back within the window
  EXPECT_EQ(s.changes[0], "recovered node001 mlx5_0[1] - leaf01[1]: 1xHDR -> 4xHDR");
  ASSERT_EQ(s.flaps.size(), 1u);
  EXPECT_EQ(s.flaps[0],
            "flapping node001 mlx5_0[1] - leaf01[1]: 2 changes in the last 3 runs: degraded "
            "(run 3), recovered (run 4)");
  EXPECT_EQ(s.change_count, 3u);
  EXPECT_EQ(s.flapping_links, 1u);
  // Quiet for the window: the old events are forgotten; a new change is not a flap.
  watch_step(&good, good, st, 3);
  watch_step(&good, good, st, 3);
  watch_step(&good, good, st, 3);  // run 7
  EXPECT_TRUE(st.events.empty());
  s = watch_step(&good, bad, st, 3);
  EXPECT_EQ(s.changes.size(), 2u);
  EXPECT_TRUE(s.flaps.empty());
}

// A link that changes at every run keeps its newest kEventsPerLink events; the older ones are
// dropped oldest first, counted in the state and said in the flap line; the count goes when
// the newest dropped run leaves the window.
TEST(Watch, EventsPerLinkCappedOldestDropped) {
  const auto good = with_rate("4xHDR"), bad = with_rate("1xHDR");
  const std::string link = "node001 mlx5_0[1] - leaf01[1]";
  WatchState st;
  watch_step(nullptr, good, st, 100);
  WatchStep s;
  for (int run = 2; run <= 21; ++run)  // even runs degrade the link, odd runs recover it
    s = watch_step(run % 2 ? &bad : &good, run % 2 ? good : bad, st, 100);
  ASSERT_EQ(st.events.size(), kEventsPerLink);
  EXPECT_EQ(st.events.front().run, 6u);  // runs 2..5 dropped
  EXPECT_EQ(st.events.back().run, 21u);
  ASSERT_EQ(st.dropped.size(), 1u);
  EXPECT_EQ(st.dropped[0].link, link);
  EXPECT_EQ(st.dropped[0].count, 4u);
  EXPECT_EQ(st.dropped[0].last_run, 5u);
  std::string history;
  for (int run = 6; run <= 21; ++run)
    history += std::string(run > 6 ? ", " : "") + (run % 2 ? "recovered" : "degraded") + " (run " +
               std::to_string(run) + ")";
  ASSERT_EQ(s.flaps.size(), 1u);
  EXPECT_EQ(s.flaps[0], "flapping " + link + ": 16 changes in the last 100 runs: " + history +
                            "; 4 earlier not kept (a link keeps its last 16)");
  EXPECT_EQ(s.flapping_links, 1u);
  // The cap survives the file.
  auto back = read_watch_state(to_json(st), "watch.json");
  ASSERT_TRUE(back) << back.error().to_string();
  EXPECT_EQ(back->events.size(), kEventsPerLink);
  ASSERT_EQ(back->dropped.size(), 1u);
  EXPECT_EQ(back->dropped[0].count, 4u);
  EXPECT_EQ(back->dropped[0].last_run, 5u);
  EXPECT_EQ(to_json(*back), to_json(st));
  // One more run drops run 6; the window (5 runs now) then forgets all but runs 18..22 and
  // the drop count, whose newest run (6) is out of it.
  s = watch_step(&bad, good, st, 100);  // run 22 (recovered)
  EXPECT_EQ(st.dropped[0].count, 5u);
  EXPECT_EQ(st.dropped[0].last_run, 6u);
  s = watch_step(&good, bad, st, 5);  // run 23
  EXPECT_TRUE(st.dropped.empty());
  ASSERT_EQ(st.events.size(), 5u);
  EXPECT_EQ(st.events.front().run, 19u);
  ASSERT_EQ(s.flaps.size(), 1u);
  EXPECT_TRUE(has(s.flaps[0], ": 5 changes in the last 5 runs: recovered (run 19)"));
  EXPECT_EQ(s.flaps[0].find("not kept"), std::string::npos);
}

TEST(Watch, StateFileRoundTripAndErrors) {
  WatchState st;
  st.runs = 7;
  st.events.push_back({6, "leaf01[5] - spine01[1]", "removed"});
  auto back = read_watch_state(to_json(st), "watch.json");
  ASSERT_TRUE(back);
  EXPECT_EQ(back->runs, 7u);
  ASSERT_EQ(back->events.size(), 1u);
  EXPECT_EQ(back->events[0].link, "leaf01[5] - spine01[1]");
  EXPECT_EQ(back->events[0].what, "removed");
  auto bad = read_watch_state("{\"runs\": 3, \"events\": [[1, 2]]}", "s/watch.json");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().to_string(),
            "s/watch.json:1: \"events\": expected [run, link, what] entries, got a number (the "
            "state `fabric watch` keeps; remove the file to start afresh)");
  EXPECT_FALSE(read_watch_state("not json", "watch.json"));
  // What the previous builds wrote (nlohmann's dump, keys sorted) still reads.
  auto old = read_watch_state(
      "{\n \"events\": [\n  [\n   6,\n   \"leaf01[5] - spine01[1]\",\n   \"removed\"\n  ]\n "
      "],\n \"runs\": 7\n}\n",
      "watch.json");
  ASSERT_TRUE(old) << old.error().to_string();
  EXPECT_EQ(old->runs, 7u);
  ASSERT_EQ(old->events.size(), 1u);
  EXPECT_EQ(old->events[0].run, 6u);
}

// Each error names the file, the line and what was expected.
TEST(Watch, StateReaderErrorsNameLineAndExpectation) {
  auto error = [](const std::string& text) {
    auto r = read_watch_state(text, "w.json");
    EXPECT_FALSE(r);
    return r ? std::string("(read)") : r.error().to_string();
  };
  const std::string hint = " (the state `fabric watch` keeps; remove the file to start afresh)";
  EXPECT_EQ(error("{\"runs\": \"x\"}"),
            "w.json:1: \"runs\": expected a count, got a string" + hint);
  EXPECT_EQ(error("{\"events\": []}"), "w.json:1: \"runs\": expected a count" + hint);
  EXPECT_EQ(error("{\"runs\": 2,\n \"events\": [\n  [1, \"a[1] - b[1]\", \"exploded\"]\n ]}"),
            "w.json:3: \"events\": \"exploded\" is no event: expected removed, added, degraded, "
            "recovered or flapped" +
                hint);
  EXPECT_EQ(error("{\"runs\": 2,\n \"events\": [\n  [1, \"a - b\", \"added\"],\n  [5, \"a - b\", "
                  "\"removed\"]\n ]}"),
            "w.json:4: run 5: expected a run from 1 to \"runs\" (2)" + hint);
  EXPECT_EQ(
      error("{\"runs\": 2,\n \"extra\": 1}"),
      "w.json:2: unknown key \"extra\": expected \"runs\", \"events\" and \"dropped\" only" + hint);
  EXPECT_EQ(error("{\"runs\": 2, \"runs\": 3}"),
            "w.json:1: \"runs\" twice: expected each key once" + hint);
  EXPECT_EQ(error("{\"runs\": 2, \"events\": [[1, \"a\\u0001b\", \"added\"]]}"),
            "w.json:1: \"events\": link \"a\\x01b\": expected UTF-8 text without control "
            "characters" +
                hint);
  EXPECT_EQ(
      error("{\"runs\": 2, \"events\": [[1, \"" + std::string(3000, 'x') + "\", \"added\"]]}"),
      "w.json:1: \"events\": a link of 3000 bytes: expected a link's name of 1 to 2048 "
      "bytes" +
          hint);
  EXPECT_EQ(error("{\"runs\": 2, \"dropped\": [[\"a - b\", 0, 1]]}"),
            "w.json:1: \"dropped\": expected a count and a run of 1 or more" + hint);
  EXPECT_TRUE(has(error("{\"runs\": 2,\n\n \"events\": [}"), "w.json:3: invalid JSON: "));
}

// Nesting ends the read at its first bracket too deep, with a message: no document tree, no
// gigabyte, no stack overflow, whatever the depth.
TEST(Watch, StateReaderRefusesDeepNesting) {
  const std::string hint = " (the state `fabric watch` keeps; remove the file to start afresh)";
  const std::string deep(std::size_t{16} << 20, '[');
  auto r = read_watch_state(deep, "w.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(
      r.error().to_string(),
      "w.json:1: expected a JSON object {\"runs\": N, \"events\": [...]}, got an array" + hint);
  r = read_watch_state("{\"runs\": 1,\n \"events\": " + deep, "w.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().to_string(),
            "w.json:2: \"events\": expected [run, link, what] entries, got an array" + hint);
  r = read_watch_state("{\"runs\": 1, \"events\": [[1, {\"a\": " + deep, "w.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().to_string(),
            "w.json:1: \"events\": expected [run, link, what] entries, got an object" + hint);
}

// Two runs on one state take turns: a second one waits, then says who holds the lock.
TEST(WatchDir, SecondRunWaitsThenSaysWhoHoldsTheLock) {
  const auto dir = fresh_dir("lock") / "state";
  {
    auto first = WatchDir::open(dir.string(), 1);
    ASSERT_TRUE(first) << first.error().to_string();
    auto second = WatchDir::open(dir.string(), 1);
    ASSERT_FALSE(second);
    EXPECT_EQ(second.error().file, (dir / "lock").string());
    EXPECT_TRUE(
        has(second.error().message, "another `fabric watch --state " + dir.string() + "` run"));
    EXPECT_TRUE(has(second.error().message, "more than 1 s"));
  }  // the first run ends: its lock goes
  EXPECT_TRUE(WatchDir::open(dir.string(), 1));
  fs::remove_all(dir.parent_path());
}

// A link planted at watch.json or accepted.json is not followed: read as no file, replaced by
// the run's file; what it pointed to is untouched.
TEST(WatchDir, LinkAtAStateFileIsReplacedNotFollowed) {
  const auto top = fresh_dir("links");
  const auto dir = top / "state";
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                           fs::perms::others_read | fs::perms::others_exec);
  {
    std::ofstream(top / "outside-state") << "precious state";
    std::ofstream(top / "outside-fabric") << "precious fabric";
  }
  fs::create_symlink(top / "outside-state", dir / "watch.json");
  fs::create_symlink(top / "outside-fabric", dir / "accepted.json");
  auto w = WatchDir::open(dir.string(), 1);
  ASSERT_TRUE(w) << w.error().to_string();
  ASSERT_EQ(w->notes().size(), 2u);
  EXPECT_TRUE(has(w->notes()[0], (dir / "accepted.json").string() + " is a link"));
  EXPECT_TRUE(has(w->notes()[1], (dir / "watch.json").string() + " is a link"));
  auto st = w->read_state();
  ASSERT_TRUE(st) << st.error().to_string();
  EXPECT_EQ(st->runs, 0u);
  auto accepted = w->read_accepted();
  ASSERT_TRUE(accepted) << accepted.error().to_string();
  EXPECT_EQ(*accepted, nullptr);
  const auto f = with_rate("4xHDR");
  watch_step(nullptr, f, *st, 10);
  ASSERT_TRUE(w->write_state(*st));
  ASSERT_TRUE(w->write_accepted(f));
  EXPECT_EQ(slurp(top / "outside-state"), "precious state");
  EXPECT_EQ(slurp(top / "outside-fabric"), "precious fabric");
  EXPECT_FALSE(fs::is_symlink(dir / "watch.json"));
  EXPECT_FALSE(fs::is_symlink(dir / "accepted.json"));
  auto again = w->read_state();
  ASSERT_TRUE(again);
  EXPECT_EQ(again->runs, 1u);
  auto a = w->read_accepted();
  ASSERT_TRUE(a && *a);
  EXPECT_EQ((*a)->num_hosts(), f.num_hosts());
  fs::remove_all(top);
}

// A --state that is a link is refused, and nothing is made where it points.
TEST(WatchDir, StateThatIsALinkIsRefused) {
  const auto top = fresh_dir("statelink");
  fs::create_directories(top / "elsewhere");
  fs::create_symlink(top / "elsewhere", top / "state");
  auto w = WatchDir::open((top / "state").string(), 1);
  ASSERT_FALSE(w);
  EXPECT_TRUE(has(w.error().to_string(), (top / "state").string()));
  EXPECT_TRUE(fs::is_empty(top / "elsewhere"));
  fs::remove_all(top);
}

TEST(WatchDir, StateLargerThanAnyRunWritesSaysToRemoveIt) {
  // A state past kMaxStateBytes (sparse: no disk used) is refused with what helps: removing
  // it, not the input limit's FABRICPLACE_MAX_INPUT_MB, which cannot make it readable.
  const auto dir = fresh_dir("bigstate");
  fs::permissions(dir, fs::perms(0755));
  {
    std::ofstream(dir / "watch.json") << "{}";
  }
  fs::resize_file(dir / "watch.json", (std::uint64_t{64} << 20) + 1);
  auto w = WatchDir::open(dir.string(), 1);
  ASSERT_TRUE(w) << w.error().to_string();
  auto st = w->read_state();
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().to_string(),
            (dir / "watch.json").string() +
                ": is 67108865 bytes, more than the 64 MiB a watch state holds (a run never writes one so "
                "large) (the state `fabric watch` keeps; remove the file to start afresh)");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace fabricplace::ops
