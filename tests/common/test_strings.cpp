#include "fabricplace/common/strings.hpp"

#include <gtest/gtest.h>

namespace str = fabricplace::str;

TEST(Strings, ParseUintRespectsTheMaximumExactly) {
  EXPECT_EQ(str::parse_uint("0", 1), 0u);
  EXPECT_EQ(str::parse_uint("1", 1), 1u);
  EXPECT_FALSE(str::parse_uint("2", 1));  // a single digit above a small maximum
  EXPECT_FALSE(str::parse_uint("9", 5));
  EXPECT_EQ(str::parse_uint("254", 254), 254u);
  EXPECT_FALSE(str::parse_uint("255", 254));
  EXPECT_EQ(str::parse_uint("18446744073709551615", UINT64_MAX), UINT64_MAX);
  EXPECT_FALSE(str::parse_uint("18446744073709551616", UINT64_MAX));
  for (const char* bad : {"", "-1", "+1", "1 ", "0x10", "1e3"})
    EXPECT_FALSE(str::parse_uint(bad, 1000)) << bad;
}

TEST(Strings, ParseHex) {
  EXPECT_EQ(str::parse_hex("0x2c9"), 0x2c9u);
  EXPECT_EQ(str::parse_hex("FC6A1C0300100000"), 0xfc6a1c0300100000u);
  EXPECT_FALSE(str::parse_hex("0x"));
  EXPECT_FALSE(str::parse_hex("0x1g"));
  EXPECT_FALSE(str::parse_hex("0x10000000000000000"));  // 17 digits
}

TEST(Strings, LinesSplitsOnNewlinesAndDropsCarriageReturns) {
  EXPECT_EQ(str::lines("a\r\nb\n\nc"), (std::vector<std::string_view>{"a", "b", "", "c"}));
  EXPECT_EQ(str::lines("a\n"), (std::vector<std::string_view>{"a"}));
  EXPECT_TRUE(str::lines("").empty());
}

TEST(Strings, JsonQuoteEscapes) {
  EXPECT_EQ(str::json_quote("a\"b\\c\n\x01"), "\"a\\\"b\\\\c\\n\\u0001\"");
  EXPECT_EQ(str::guid_hex(0x2c9), "0x00000000000002c9");
}
