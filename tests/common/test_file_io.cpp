// SPDX-License-Identifier: GPL-2.0-or-later
#include "fabricplace/common/file_io.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

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
  // Target is a non-empty directory: refused before anything is written.
  fs::create_directories(d / "target" / "keep");
  auto r = write_file_atomic((d / "target").string(), "data");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "is a directory, expected a file");
  EXPECT_TRUE(fs::is_directory(d / "target" / "keep"));
  EXPECT_EQ(entries(d), 1u);
  // A read-only directory: the temporary cannot be made, the old file stays.
  fs::create_directories(d / "ro");
  ASSERT_TRUE(write_file_atomic((d / "ro" / "f").string(), "old"));
  if (::geteuid() != 0) {  // root writes anywhere
    fs::permissions(d / "ro", fs::perms::owner_read | fs::perms::owner_exec);
    EXPECT_FALSE(write_file_atomic((d / "ro" / "f").string(), "new"));
    fs::permissions(d / "ro", fs::perms::owner_all);
    EXPECT_EQ(*read_file((d / "ro" / "f").string()), "old");
    EXPECT_EQ(entries(d / "ro"), 1u);
  }
  fs::remove_all(d);
}

TEST(FileIo, WritesIntoFifosAndDevicesAndRefusesOtherSpecialFiles) {
  const auto d = scratch();
  // A character device is written into, never replaced by a regular file.
  ASSERT_TRUE(write_file_atomic("/dev/null", "discarded"));
  struct stat st {};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  // A FIFO: a reader gets the bytes; the FIFO stays a FIFO.
  const auto fifo = (d / "pipe").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] { got = *read_file(fifo); });
  ASSERT_TRUE(write_file_atomic(fifo, "through the pipe"));
  reader.join();
  EXPECT_EQ(got, "through the pipe");
  ASSERT_EQ(::stat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  // A socket is neither: refused, left alone.
  const auto sock = (d / "sock").string();
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", sock.c_str());
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  auto r = write_file_atomic(sock, "x");
  ::close(fd);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().to_string(),
            sock + ": is neither a regular file, a FIFO nor a character device: not written");
  // An empty name is a usage error.
  r = write_file_atomic("", "x");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, fabricplace::ErrorCode::kUsage);
  EXPECT_EQ(r.error().message, "empty output file name");
  fs::remove_all(d);
}

TEST(FileIo, ReadsAreBoundedAndGzipIsCheckedToItsEnd) {
  const auto d = scratch();
  const auto big = (d / "big").string();
  ASSERT_TRUE(write_file_atomic(big, std::string(4096, 'x')));
  EXPECT_EQ(read_file(big, 4096)->size(), 4096u);
  auto r = read_file(big, 4095);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().to_string(),
            big + ": is more than 4095 bytes, the input limit (docs/sources.md, Limits; "
                  "FABRICPLACE_MAX_INPUT_MB raises it)");
  // A device without end is cut at the limit, not read forever.
  r = read_file("/dev/zero", 1 << 20);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message.rfind("is more than 1 MiB", 0), 0u) << r.error().message;
  // gzip: "hello\n" compressed (gzip -n), whole, then cut short, then with a bad CRC.
  const std::string gz("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xcb\x48\xcd\xc9\xc9\xe7"
                       "\x02\x00\x20\x30\x3a\x36\x06\x00\x00\x00",
                       26);
  const auto path = (d / "t.gz").string();
  ASSERT_TRUE(write_file_atomic(path, gz));
  EXPECT_EQ(*read_file(path), "hello\n");
  ASSERT_TRUE(write_file_atomic(path, gz + gz));  // concatenated members
  EXPECT_EQ(*read_file(path), "hello\nhello\n");
  ASSERT_TRUE(write_file_atomic(path, gz.substr(0, 20)));
  r = read_file(path);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "gzip: truncated (the compressed stream ends early)");
  std::string bad_crc = gz;
  bad_crc[18] = '\x21';
  ASSERT_TRUE(write_file_atomic(path, bad_crc));
  r = read_file(path);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "gzip: incorrect data check");
  // Decompressing past the limit stops there: 64 KiB of zeros from 96 bytes.
  const std::string zeros("\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\x03\xed\xc1\x01\x01\x00\x00\x00\x80\x90\xfe\xaf\xee\x08\x0a\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x6a\xeb\x8e\x97\xd7\x00\x00\x01\x00", 96);
  ASSERT_TRUE(write_file_atomic(path, zeros));
  EXPECT_EQ(read_file(path, 65536)->size(), 65536u);
  r = read_file(path, 65535);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message.rfind("decompresses to more than 65535 bytes", 0), 0u)
      << r.error().message;
  // A byte order mark is dropped, whatever the file is.
  ASSERT_TRUE(write_file_atomic(path, "\xEF\xBB\xBFSwitchName=s1"));
  EXPECT_EQ(*read_file(path), "SwitchName=s1");
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
