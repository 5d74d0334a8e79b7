// SPDX-License-Identifier: GPL-2.0-or-later
// OwnedDir: a directory fabricplace owns is reached without following links (docs/operations.md,
// "Directories fabricplace owns"). Each test plants what an attacker would and checks that
// nothing outside changes.
#include "fabricplace/common/owned_dir.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using fabricplace::OwnedDir;

namespace {

fs::path scratch() {
  auto d = fs::temp_directory_path() /
           ("fp-owned-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
  fs::remove_all(d);
  fs::create_directories(d);
  fs::permissions(d, fs::perms(0755));
  return d;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), {}};
}

void spit(const fs::path& p, const std::string& s) { std::ofstream(p) << s; }

}  // namespace

TEST(OwnedDir, CreatesWithExactModeAndWritesByName) {
  const auto d = scratch();
  const auto mask = ::umask(077);  // the mode is set, not left to the umask
  auto dir = OwnedDir::open((d / "state").string(), OwnedDir::Create::kYes, 0755);
  ::umask(mask);
  ASSERT_TRUE(dir) << dir.error().to_string();
  EXPECT_EQ(fs::status(d / "state").permissions(), fs::perms(0755));
  ASSERT_TRUE(dir->write_file("a.json", "one"));
  ASSERT_TRUE(dir->write_file("a.json", "two"));
  EXPECT_EQ(*dir->read_file("a.json", 100), "two");
  EXPECT_EQ(fs::status(d / "state" / "a.json").permissions(), fs::perms(0644));
  EXPECT_EQ(dir->list(), std::vector<std::string>{"a.json"});  // no temporary left
  EXPECT_EQ(dir->kind("a.json"), OwnedDir::Kind::kFile);
  EXPECT_EQ(dir->kind("none"), OwnedDir::Kind::kMissing);
}

TEST(OwnedDir, RefusesADirectoryThatIsALink) {
  const auto d = scratch();
  fs::create_directories(d / "elsewhere");
  spit(d / "elsewhere" / "tmp.1", "victim");
  fs::create_directory_symlink(d / "elsewhere", d / "store");
  auto dir = OwnedDir::open((d / "store").string(), OwnedDir::Create::kYes);
  ASSERT_FALSE(dir);
  EXPECT_EQ(dir.error().file, (d / "store").string());
  EXPECT_TRUE(dir.error().message.starts_with("is a symbolic link: fabricplace writes and removes "
                                              "files only in a real directory it owns"))
      << dir.error().message;
  // A trailing slash does not make the link acceptable.
  EXPECT_FALSE(OwnedDir::open((d / "store").string() + "/", OwnedDir::Create::kNo));
  auto top = OwnedDir::open(d.string(), OwnedDir::Create::kNo);
  ASSERT_TRUE(top);
  EXPECT_FALSE(top->sub("store", OwnedDir::Create::kYes));
  EXPECT_EQ(slurp(d / "elsewhere" / "tmp.1"), "victim");
}

TEST(OwnedDir, RefusesAFileOrAnotherUsersOrAWritableDirectory) {
  const auto d = scratch();
  spit(d / "file", "x");
  auto f = OwnedDir::open((d / "file").string(), OwnedDir::Create::kYes);
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error().message, "exists and is not a directory");
  fs::create_directories(d / "open");
  fs::permissions(d / "open", fs::perms(0777));
  auto w = OwnedDir::open((d / "open").string(), OwnedDir::Create::kNo);
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().message,
            "is writable by its group or by others: it is refused, since they could plant links "
            "in it (chmod go-w)");
  if (::geteuid() == 0) {  // as root: a store chowned to another user is refused
    fs::create_directories(d / "theirs");
    fs::permissions(d / "theirs", fs::perms(0755));
    ASSERT_EQ(::chown((d / "theirs").c_str(), 65534, 65534), 0);
    auto t = OwnedDir::open((d / "theirs").string(), OwnedDir::Create::kNo);
    ASSERT_FALSE(t);
    EXPECT_TRUE(t.error().message.starts_with("is owned by uid 65534, not by the user running "
                                              "fabricplace (uid 0)"))
        << t.error().message;
  }
}

TEST(OwnedDir, ALinkAtAFileNameIsReplacedNeverFollowed) {
  const auto d = scratch();
  spit(d / "victim", "precious");
  auto dir = OwnedDir::open((d / "state").string(), OwnedDir::Create::kYes);
  ASSERT_TRUE(dir);
  fs::create_symlink(d / "victim", d / "state" / "watch.json");
  // Reading through it is refused; writing replaces the link itself.
  auto r = dir->read_file("watch.json", 100);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "is a symbolic link: fabricplace reads only regular files in a directory it owns "
            "(remove the link)");
  ASSERT_TRUE(dir->write_file("watch.json", "state"));
  EXPECT_EQ(slurp(d / "victim"), "precious");
  EXPECT_FALSE(fs::is_symlink(d / "state" / "watch.json"));
  EXPECT_EQ(slurp(d / "state" / "watch.json"), "state");
  // A link to a directory at a file's name: replaced too.
  fs::create_directories(d / "victim-dir");
  fs::create_directory_symlink(d / "victim-dir", d / "state" / "accepted.json");
  ASSERT_TRUE(dir->write_file("accepted.json", "{}"));
  EXPECT_TRUE(fs::is_empty(d / "victim-dir"));
}

TEST(OwnedDir, AFifoIsRefusedWithoutHanging) {
  const auto d = scratch();
  auto dir = OwnedDir::open(d.string(), OwnedDir::Create::kNo);
  ASSERT_TRUE(dir);
  ASSERT_EQ(::mkfifo((d / "fabric.json").c_str(), 0644), 0);
  auto r = dir->read_file("fabric.json", 100);  // no writer: a blocking open would hang here
  ASSERT_FALSE(r);
  EXPECT_TRUE(r.error().message.starts_with("is not a regular file")) << r.error().message;
}

TEST(OwnedDir, LockIsNeverALinkAndExcludesASecondHolder) {
  const auto d = scratch();
  spit(d / "victim", "precious");
  auto dir = OwnedDir::open((d / "state").string(), OwnedDir::Create::kYes);
  ASSERT_TRUE(dir);
  fs::create_symlink(d / "victim", d / "state" / "lock");
  auto l = dir->lock("lock", 0, "another fabric watch");
  ASSERT_FALSE(l);
  EXPECT_TRUE(l.error().message.starts_with("the lock is a symbolic link")) << l.error().message;
  EXPECT_EQ(slurp(d / "victim"), "precious");
  fs::remove(d / "state" / "lock");
  auto first = dir->lock("lock", 0, "another fabric watch");
  ASSERT_TRUE(first);
  auto again = OwnedDir::open((d / "state").string(), OwnedDir::Create::kNo);
  ASSERT_TRUE(again);
  auto second = again->lock("lock", 0, "another fabric watch");  // flock: per open file
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().message,
            "another fabric watch holds the lock for more than 0 s (try again when it is done)");
}

TEST(OwnedDir, RemoveNeverDescendsThroughALink) {
  const auto d = scratch();
  fs::create_directories(d / "outside");
  spit(d / "outside" / "keep", "precious");
  auto dir = OwnedDir::open((d / "store").string(), OwnedDir::Create::kYes);
  ASSERT_TRUE(dir);
  fs::create_directories(d / "store" / "tmp.1" / "sub");
  fs::create_directory_symlink(d / "outside", d / "store" / "tmp.1" / "sub" / "link");
  fs::create_directory_symlink(d / "outside", d / "store" / "tmp.2");
  dir->remove("tmp.1");
  dir->remove("tmp.2");
  EXPECT_EQ(dir->list(), std::vector<std::string>{});
  EXPECT_EQ(slurp(d / "outside" / "keep"), "precious");
}

TEST(OwnedDir, NamesAndTemporaries) {
  EXPECT_TRUE(OwnedDir::one_name("watch.json"));
  EXPECT_FALSE(OwnedDir::one_name(""));
  EXPECT_FALSE(OwnedDir::one_name(".."));
  EXPECT_FALSE(OwnedDir::one_name("../x"));
  EXPECT_TRUE(OwnedDir::is_temporary(".watch.json.tmp.123.0"));
  EXPECT_FALSE(OwnedDir::is_temporary("watch.json.tmp.123.0"));
  EXPECT_FALSE(OwnedDir::is_temporary(".watch.json.tmp.12x.0"));
  EXPECT_FALSE(OwnedDir::is_temporary(".watch.json.tmp.123"));
  const auto d = scratch();
  auto dir = OwnedDir::open(d.string(), OwnedDir::Create::kNo);
  ASSERT_TRUE(dir);
  auto bad = dir->write_file("../escape", "x");
  ASSERT_FALSE(bad);
  EXPECT_FALSE(fs::exists(d.parent_path() / "escape"));
}

TEST(OwnedDir, WriteByNameReplacesAPlantedLinkInAStickyDirectory) {
  const auto d = scratch();
  spit(d / "victim", "precious");
  fs::create_symlink(d / "victim", d / "fabricplace-srun-1-2.hosts");
  ASSERT_TRUE(fabricplace::write_file_by_name((d / "fabricplace-srun-1-2.hosts").string(),
                                              "node1\n", 0644,
                                              fabricplace::Durability::kAtomic));
  EXPECT_EQ(slurp(d / "victim"), "precious");
  EXPECT_EQ(slurp(d / "fabricplace-srun-1-2.hosts"), "node1\n");
  EXPECT_FALSE(fs::is_symlink(d / "fabricplace-srun-1-2.hosts"));
}
