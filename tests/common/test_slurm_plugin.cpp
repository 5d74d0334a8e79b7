// SPDX-License-Identifier: GPL-2.0-or-later
// fabricplace::slurm: a plugin file's plugin_version read without loading it, and Slurm
// version strings as srun and slurmd print them.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "fabricplace/common/slurm_plugin.hpp"

namespace sl = fabricplace::slurm;

namespace {

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST(SlurmPlugin, ReadsTheExportedVersion) {
  auto v = sl::read_elf_u32(FABRICPLACE_PLUGIN_FIXTURE, "plugin_version");
  ASSERT_TRUE(v) << v.error().to_string();
  EXPECT_EQ(*v, 0x180b05U);
  EXPECT_EQ(sl::from_number(*v).to_string(), "24.11.5");
  EXPECT_EQ(sl::from_number(*v).series(), "24.11");
}

TEST(SlurmPlugin, SaysWhatIsMissing) {
  auto undefined = sl::read_elf_u32(FABRICPLACE_PLUGIN_FIXTURE, "referenced_only");
  ASSERT_FALSE(undefined);
  EXPECT_EQ(undefined.error().to_string(), std::string(FABRICPLACE_PLUGIN_FIXTURE) +
                                               ": no exported referenced_only: not a Slurm plugin");
  auto wide = sl::read_elf_u32(FABRICPLACE_PLUGIN_FIXTURE, "not_four_bytes");
  ASSERT_FALSE(wide);
  EXPECT_EQ(wide.error().message, "not_four_bytes is not a 32-bit object defined in the file");
  auto text = sl::read_elf_u32_bytes("#!/bin/sh\n", "plugin_version", "x.so");
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error().to_string(),
            "x.so: not an ELF file (expected a shared object such as fabricplace.so)");
  auto none = sl::read_elf_u32("/nonexistent/fabricplace.so", "plugin_version");
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().to_string().find("/nonexistent/fabricplace.so"), std::string::npos);
}

// Every prefix that cuts into the section headers (at the file's end) is an error, never a
// value or a read past the end; single-byte corruptions of the first 4 KiB give a value or
// an error (ASan and the fuzz target slurm_plugin_elf go further).
TEST(SlurmPlugin, TruncatedOrCorruptFilesAreErrors) {
  const std::string b = bytes_of(FABRICPLACE_PLUGIN_FIXTURE);
  ASSERT_GT(b.size(), 1000U);
  ASSERT_EQ(b[4], 2);  // ELFCLASS64, little-endian (x86_64): e_shoff at 0x28
  std::uint64_t shoff = 0;
  for (int i = 7; i >= 0; --i) shoff = (shoff << 8) | static_cast<unsigned char>(b[0x28 + i]);
  ASSERT_GT(shoff, 0U);
  ASSERT_LT(shoff, b.size());
  std::size_t prefixes = 0;
  for (std::size_t n = 0; n < b.size(); n += 7) {
    if (n >= shoff + 64) continue;  // the first section header whole: the symbol may be found
    ++prefixes;
    EXPECT_FALSE(sl::read_elf_u32_bytes(std::string_view(b).substr(0, n), "plugin_version", "t"))
        << "a prefix of " << n << " bytes";
  }
  EXPECT_GT(prefixes, 100U);
  std::string c = b;
  for (std::size_t i = 0; i < std::min<std::size_t>(c.size(), 4096); ++i) {
    const char keep = c[i];
    c[i] = static_cast<char>(0xff);
    if (auto v = sl::read_elf_u32_bytes(c, "plugin_version", "t"); !v) {
      EXPECT_EQ(v.error().file, "t");
    }
    c[i] = keep;
  }
}

TEST(SlurmVersion, ParsesWhatSlurmPrints) {
  struct Case {
    const char* text;
    const char* want;
  } cases[] = {{"slurm-wlm 22.05.8", "22.05.8"},
               {"slurm 24.11.5\n", "24.11.5"},
               {"24.11", "24.11.0"},
               {"25.05.0-1", "25.05.0"},
               {"  23.02.7  ", "23.02.7"}};
  for (const auto& c : cases) {
    auto v = sl::parse_version(c.text, "t");
    ASSERT_TRUE(v) << c.text << ": " << v.error().to_string();
    EXPECT_EQ(v->to_string(), c.want) << c.text;
  }
  EXPECT_TRUE(sl::parse_version("22.05.8", "t")->same_series(*sl::parse_version("22.05.2", "t")));
  EXPECT_FALSE(sl::parse_version("22.05.8", "t")->same_series(*sl::parse_version("24.11.5", "t")));
  for (const char* bad : {"", "slurm", "24", "24.x", "1234.05", "24.11.5.1", ".11", "24..1"}) {
    auto v = sl::parse_version(bad, "--slurm-version");
    ASSERT_FALSE(v) << bad;
    EXPECT_EQ(v.error().message.rfind("--slurm-version: \"", 0), 0U) << bad;
    EXPECT_NE(v.error().message.find("is not a Slurm version (expected MAJOR.MINOR[.MICRO]"),
              std::string::npos)
        << bad;
  }
  EXPECT_EQ(sl::parse_version("24.11.5", "t")->number(), 0x180b05U);
}
