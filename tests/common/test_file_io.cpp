#include "fabricplace/common/file_io.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using fabricplace::read_file;
using fabricplace::write_file_atomic;

namespace {
fs::path scratch() {
  auto d =
      fs::temp_directory_path() / ("fp-io-" + std::to_string(::getpid()) + "-" +
                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}
std::size_t entries(const fs::path& d) {
  return static_cast<std::size_t>(
      std::distance(fs::directory_iterator(d), fs::directory_iterator()));
}
}  // namespace

TEST(FileIo, WritesAtomicallyAndReadsBack) {
  const auto d = scratch();
  const auto p = (d / "out.json").string();
  ASSERT_TRUE(write_file_atomic(p, "first"));
  ASSERT_TRUE(write_file_atomic(p, "second"));
  EXPECT_EQ(*read_file(p), "second");
  EXPECT_EQ(entries(d), 1u);  // no temporary left behind
  struct stat st {};
  ASSERT_EQ(::stat(p.c_str(), &st), 0);
  const mode_t mask = ::umask(0);
  ::umask(mask);
  EXPECT_EQ(st.st_mode & 0777, 0666u & ~mask);  // not mkstemp's 0600
  fs::remove_all(d);
}

TEST(FileIo, FailedWriteLeavesTheOldFileAndNoTemporary) {
  const auto d = scratch();
  // Target is a non-empty directory: rename() must fail after the data was written.
  fs::create_directories(d / "target" / "keep");
  auto r = write_file_atomic((d / "target").string(), "data");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("rename failed"), std::string::npos) << r.error().message;
  EXPECT_TRUE(fs::is_directory(d / "target" / "keep"));
  EXPECT_EQ(entries(d), 1u);
  fs::remove_all(d);
}

TEST(FileIo, MissingDirectoryIsAClearError) {
  auto r = write_file_atomic("/nonexistent-dir-fp/x.json", "x");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().file, "/nonexistent-dir-fp/x.json");
  EXPECT_NE(r.error().message.find("cannot create a temporary file"), std::string::npos);
}

TEST(FileIo, ReadErrorsNameTheFile) {
  auto r = read_file("/nonexistent-fp-file");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().to_string(), "/nonexistent-fp-file: cannot open: No such file or directory");
  auto d = read_file("/tmp");
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().to_string(), "/tmp: is a directory, expected a file");
}

TEST(FileIo, KeepsTheModeAndWritesThroughSymlinks) {
  const auto d = scratch();
  const auto real = (d / "real.conf").string();
  ASSERT_TRUE(write_file_atomic(real, "v1"));
  ASSERT_EQ(::chmod(real.c_str(), 0640), 0);
  fs::create_symlink("real.conf", d / "link.conf");
  ASSERT_TRUE(write_file_atomic((d / "link.conf").string(), "v2"));
  EXPECT_TRUE(fs::is_symlink(d / "link.conf"));  // the link survives
  EXPECT_EQ(*read_file(real), "v2");
  struct stat st {};
  ASSERT_EQ(::stat(real.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  EXPECT_EQ(entries(d), 2u);
  fs::remove_all(d);
}
