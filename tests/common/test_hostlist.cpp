// SPDX-License-Identifier: GPL-2.0-or-later
#include "fabricplace/common/hostlist.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace hl = fabricplace::hostlist;

TEST(Hostlist, ExpandsRangesKeepingZeroPadding) {
  auto r = hl::expand("node[001-003,010],gpu7");
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(*r, (std::vector<std::string>{"node001", "node002", "node003", "node010", "gpu7"}));
  EXPECT_EQ(*hl::expand("n[8-11]"), (std::vector<std::string>{"n8", "n9", "n10", "n11"}));
  EXPECT_EQ(*hl::expand("n[08-11]"), (std::vector<std::string>{"n08", "n09", "n10", "n11"}));
}

TEST(Hostlist, ExpandsSeveralBracketsAsCartesianProduct) {
  EXPECT_EQ(*hl::expand("r[1-2]n[1-2]"),
            (std::vector<std::string>{"r1n1", "r1n2", "r2n1", "r2n2"}));
  EXPECT_EQ(*hl::expand("su[1-2]-leaf"), (std::vector<std::string>{"su1-leaf", "su2-leaf"}));
}

TEST(Hostlist, DropsDuplicates) {
  EXPECT_EQ(*hl::expand("a[1-2],a1,a2,b"), (std::vector<std::string>{"a1", "a2", "b"}));
  // Or keeps them, in order, for a caller that judges repeats (running jobs' hosts).
  EXPECT_EQ(*hl::expand("a[1-2],a1,b,a[2,2]", hl::Duplicates::kKeep),
            (std::vector<std::string>{"a1", "a2", "a1", "b", "a2", "a2"}));
}

struct BadHostlist {
  const char* expr;
  const char* message;
  friend void PrintTo(const BadHostlist& b, std::ostream* os) { *os << b.expr; }
};
class HostlistErrors : public ::testing::TestWithParam<BadHostlist> {};
TEST_P(HostlistErrors, NameTheColumnAndTheProblem) {
  auto r = hl::expand(GetParam().expr);
  ASSERT_FALSE(r) << GetParam().expr;
  EXPECT_EQ(r.error().message, GetParam().message);
}
INSTANTIATE_TEST_SUITE_P(
    Table, HostlistErrors,
    ::testing::Values(
        BadHostlist{"node[1-3", "hostlist \"node[1-3\", column 5: '[' without ']'"},
        BadHostlist{"node1-3]", "hostlist \"node1-3]\", column 8: ']' without '['"},
        BadHostlist{"node[3-1]", "hostlist \"node[3-1]\", column 6: range \"3-1\" runs backwards"},
        BadHostlist{"node[a-b]",
                    "hostlist \"node[a-b]\", column 6: bad range \"a-b\", expected N or N-M"},
        BadHostlist{"node[1,,2]",
                    "hostlist \"node[1,,2]\", column 8: empty range, expected N or N-M"},
        BadHostlist{"a,,b", "hostlist \"a,,b\", column 3: empty host name"},
        BadHostlist{"a b", "hostlist \"a b\", column 2: unexpected blank"},
        BadHostlist{"n[[1]]", "hostlist \"n[[1]]\", column 3: nested '['"},
        BadHostlist{"n[0-9999999]",
                    "hostlist \"n[0-9999999]\", column 2: expands to more than 1000000 names "
                    "(FABRICPLACE_MAX_HOSTLIST raises the limit)"},
        // 524288 x 4294967296 wraps to 0 in 64 bits: refused before anything is made.
        BadHostlist{"n[0-524287][0-4294967295]",
                    "hostlist \"n[0-524287][0-4294967295]\", column 12: expands to more than "
                    "1000000 names (FABRICPLACE_MAX_HOSTLIST raises the limit)"},
        BadHostlist{"n[0-524287][0-4294967295,0-4294967295,0-4294967295,0-4294967295]",
                    "hostlist \"n[0-524287][0-4294967295,0-4294967295,0-4294967295,0-4294967...\", "
                    "column 12: expands to more than 1000000 names (FABRICPLACE_MAX_HOSTLIST "
                    "raises the limit)"},
        BadHostlist{"a\nb", "hostlist \"a\\nb\", column 2: control character in a host name"},
        BadHostlist{"n\xff", "hostlist \"n\\xff\", column 2: not valid UTF-8"}));

TEST(Hostlist, ExpansionIsBoundedInBytesToo) {
  // 1,000 names of 300 KB each would be 300 MB: more than the input limit of 256 MiB.
  const std::string expr = std::string(300'000, 'n') + "[1-1000]";
  auto r = hl::expand(expr);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("expands to more than 256 MiB of names"), std::string::npos)
      << r.error().message;
  EXPECT_LT(r.error().message.size(), 200u);  // the expression is quoted short
}

TEST(Hostlist, AllDigitNamesCompressAndReadBack) {  // fuzz: tests/data/fuzz/hostlist
  EXPECT_EQ(hl::compress({"000"}), "000");
  EXPECT_EQ(hl::compress({"1", "2", "3"}), "[1-3]");
  EXPECT_EQ(*hl::expand(hl::compress({"1", "2", "3"})), (std::vector<std::string>{"1", "2", "3"}));
  // Numbers above a range's 32 bits stay literal, so the result reads back.
  EXPECT_EQ(hl::compress({"n4294967295", "n4294967296", "n4294967297"}),
            "n4294967295,n4294967296,n4294967297");
  EXPECT_EQ(hl::compress({"n4294967294", "n4294967295"}), "n[4294967294-4294967295]");
}

TEST(Hostlist, CompressesTrailingNumbersInSlurmForm) {
  EXPECT_EQ(hl::compress({"node001", "node002", "node003", "node010"}), "node[001-003,010]");
  EXPECT_EQ(hl::compress({"n9", "n10", "n11"}), "n[9-11]");
  EXPECT_EQ(hl::compress({"n08", "n9"}), "n[08,9]");
  EXPECT_EQ(hl::compress({"leaf01"}), "leaf01");
  EXPECT_EQ(hl::compress({"b2", "a1", "b1", "login"}), "b[1-2],a1,login");
  EXPECT_EQ(hl::compress({}), "");
}

TEST(Hostlist, CompressThenExpandGivesTheSameSetForRandomSets) {
  std::mt19937 rng(20261130);  // seeded: failures reproduce
  for (int round = 0; round < 200; ++round) {
    std::vector<std::string> names;
    const int n = 1 + static_cast<int>(rng() % 60);
    for (int i = 0; i < n; ++i) {
      const int v = static_cast<int>(rng() % 120);
      const int w = static_cast<int>(rng() % 3) + 1;
      std::string d = std::to_string(v);
      if (static_cast<int>(d.size()) < w) d.insert(0, static_cast<std::size_t>(w) - d.size(), '0');
      names.push_back((rng() % 2 ? "gpu" : "cpu") + d);
    }
    auto back = hl::expand(hl::compress(names));
    ASSERT_TRUE(back) << hl::compress(names);
    auto a = names, b = *back;
    std::sort(a.begin(), a.end());
    a.erase(std::unique(a.begin(), a.end()), a.end());
    std::sort(b.begin(), b.end());
    EXPECT_EQ(a, b) << "seed round " << round << ": " << hl::compress(names);
  }
}

TEST(Hostlist, NaturalOrder) {
  EXPECT_TRUE(hl::natural_less("node2", "node10"));
  EXPECT_FALSE(hl::natural_less("node10", "node2"));
  EXPECT_TRUE(hl::natural_less("mlx5_2", "mlx5_10"));
  EXPECT_TRUE(hl::natural_less("a", "b"));
  EXPECT_TRUE(hl::natural_less("n1", "n01"));  // equal value: shorter spelling first
  EXPECT_FALSE(hl::natural_less("n01", "n01"));
  EXPECT_TRUE(hl::natural_less("n", "n1"));
}
