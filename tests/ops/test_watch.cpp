// fabric watch's core (ops/watch.hpp): one line per change, flaps across runs within the
// window only, the state file read back and its errors.
#include <gtest/gtest.h>

#include <filesystem>

#include "fabricplace/common/file_io.hpp"
#include "fabricplace/fabric/builder.hpp"
#include "fabricplace/fabric/json_io.hpp"
#include "fabricplace/fabric/spec.hpp"
#include "fabricplace/ops/watch.hpp"

namespace fabricplace::ops {
namespace {

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

TEST(Watch, StateFileRoundTripAndErrors) {
  const auto dir = std::filesystem::temp_directory_path() / "fp-watch-state";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto path = (dir / "watch.json").string();
  auto fresh = read_watch_state(path);  // none yet: a first run
  ASSERT_TRUE(fresh);
  EXPECT_EQ(fresh->runs, 0u);
  WatchState st;
  st.runs = 7;
  st.events.push_back({6, "leaf01[5] - spine01[1]", "removed"});
  ASSERT_TRUE(write_file_atomic(path, to_json(st)));
  auto back = read_watch_state(path);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->runs, 7u);
  ASSERT_EQ(back->events.size(), 1u);
  EXPECT_EQ(back->events[0].link, "leaf01[5] - spine01[1]");
  ASSERT_TRUE(write_file_atomic(path, "{\"runs\": 3, \"events\": [[1, 2]]}"));
  auto bad = read_watch_state(path);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().to_string(),
            path +
                ":1: \"events\": expected [run, link, what] entries (the state `fabric watch` "
                "keeps; remove the file to start afresh)");
  ASSERT_TRUE(write_file_atomic(path, "not json"));
  EXPECT_FALSE(read_watch_state(path));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace fabricplace::ops
