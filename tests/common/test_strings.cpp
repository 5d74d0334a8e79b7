// SPDX-License-Identifier: GPL-2.0-or-later
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

std::vector<std::string_view> all_lines(std::string_view text) {
  std::vector<std::string_view> out;
  for (auto line : str::lines(text)) out.push_back(line);
  return out;
}

TEST(Strings, LinesSplitsOnNewlinesAndDropsCarriageReturns) {
  EXPECT_EQ(all_lines("a\r\nb\n\nc"), (std::vector<std::string_view>{"a", "b", "", "c"}));
  EXPECT_EQ(all_lines("a\n"), (std::vector<std::string_view>{"a"}));
  EXPECT_EQ(all_lines("\n\n"), (std::vector<std::string_view>{"", ""}));
  EXPECT_TRUE(all_lines("").empty());
}

TEST(Strings, Utf8ValidationFollowsRfc3629) {
  EXPECT_EQ(str::invalid_utf8_at("node01 \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"),
            std::string_view::npos);
  EXPECT_EQ(str::invalid_utf8_at("ab\xff"), 2u);
  EXPECT_EQ(str::invalid_utf8_at("\xc0\xaf"), 0u);          // overlong '/'
  EXPECT_EQ(str::invalid_utf8_at("x\xed\xa0\x80"), 1u);     // a surrogate
  EXPECT_EQ(str::invalid_utf8_at("\xf4\x90\x80\x80"), 0u);  // above U+10FFFF
  EXPECT_EQ(str::invalid_utf8_at("\xe2\x82"), 0u);          // cut short
  EXPECT_EQ(str::control_char_at("a\tb"), 1u);
  EXPECT_EQ(str::control_char_at("ab\x7f"), 2u);
  EXPECT_EQ(str::control_char_at("plain"), std::string_view::npos);
}

TEST(Strings, ExcerptIsShortPrintableAndCutAtACharacter) {
  EXPECT_EQ(str::excerpt("a\nb\tc\\d\"e\x01\xff\x1b[2J"), "a\\nb\tc\\d\"e\\x01\\xff\\x1b[2J");
  EXPECT_EQ(str::excerpt(std::string(100, 'x'), 10), "xxxxxxxxxx...");
  EXPECT_EQ(str::excerpt("abc\xc3\xa9", 4), "abc...");  // never half a character
  EXPECT_EQ(str::quoted("ok"), "\"ok\"");
}

TEST(Strings, ExcerptShowsInvisibleAndReorderingCharactersAsEscapes) {
  // U+202E (right-to-left override) would show "node1" + reversed text; U+200B shows nothing;
  // U+0085 (C1 next line) breaks lines in some terminals; U+FEFF; é and ü stay as they are.
  EXPECT_EQ(str::excerpt("node\xe2\x80\xae"
                         "1\xe2\x80\x8bx\xc2\x85y\xef\xbb\xbfz\xc3\xa9\xc3\xbc"),
            "node\\u{202e}1\\u{200b}x\\u{0085}y\\u{feff}z\xc3\xa9\xc3\xbc");
  EXPECT_EQ(str::excerpt("\xe2\x81\xa6"
                         "a\xe2\x81\xa9"),
            "\\u{2066}a\\u{2069}");
  EXPECT_EQ(str::excerpt("\xf0\x9f\x98\x80"), "\xf0\x9f\x98\x80");  // visible 4-byte emoji
}

TEST(Strings, OneRuleForHostNames) {
  for (const char* ok :
       {"node001", "dgx-a100-01", "gpu.cluster.local", "n_01", "\xc3\xb1odo01", "10.0.0.1"})
    EXPECT_FALSE(str::host_name_problem(ok)) << ok << ": " << *str::host_name_problem(ok);
  EXPECT_EQ(str::host_name_problem(""), "is empty");
  EXPECT_EQ(str::host_name_problem(std::string(256, 'n')),
            "is 256 bytes long, more than 255 (a DNS name's longest)");
  EXPECT_FALSE(str::host_name_problem(std::string(255, 'n')));
  EXPECT_EQ(str::host_name_problem("n\xff"), "is not valid UTF-8 (byte 2)");
  EXPECT_EQ(str::host_name_problem("n1\rX"), "holds a control character (byte 3)");
  EXPECT_EQ(str::host_name_problem("n1\xe2\x80\xa8"
                                   "evil"),
            "holds an invisible or line-breaking character (byte 3)");
  EXPECT_EQ(str::host_name_problem("n1\xc2\x85x"),
            "holds an invisible or line-breaking character (byte 3)");
  for (const char* bad :
       {"a,b",   "n[1]", "n=1",  "no#de", "n\"1", "n'1", "n\\1", "n1;touch", "a&b", "a|b",
        "$HOME", "a`b`", "a(1)", "{a}",   "a<b",  "a>b", "a*",   "a?",       "a!",  "~a"})
    EXPECT_TRUE(str::host_name_problem(bad)) << bad;
  EXPECT_EQ(str::invisible_char_at("ok\xe2\x80\x8bx"), 2u);
  EXPECT_EQ(str::invisible_char_at("\xc3\xa9t\xc3\xa9"), std::string_view::npos);
}

TEST(Strings, SanitizeEscapesOnlyWhatCouldBreakALineAndIsIdempotent) {
  const std::string once = str::sanitize("a\\b\nSwitchName=x\xff\xc3\xa9");
  EXPECT_EQ(once, "a\\b\\x0aSwitchName=x\\xff\xc3\xa9");
  EXPECT_EQ(str::sanitize(once), once);
}

TEST(Strings, CheckTextNamesLineAndColumnOfTheFirstBadByte) {
  EXPECT_TRUE(str::check_text("a\tb\r\nc\n", "f"));
  auto r = str::check_text("ok\nfine\nab\x1b[31m\n", "dump.txt");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().to_string(),
            "dump.txt:3: column 3: byte 0x1b is a control character; expected text (is this a "
            "binary file?)");
  r = str::check_text("\xff", "x");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().to_string(),
            "x:1: column 1: byte 0xff is not valid UTF-8; expected text (is this a binary file?)");
}

TEST(Strings, JsonQuoteEscapes) {
  EXPECT_EQ(str::json_quote("a\"b\\c\n\x01"), "\"a\\\"b\\\\c\\n\\u0001\"");
  // Always valid UTF-8: a stray byte becomes U+FFFD, a valid sequence stays.
  EXPECT_EQ(str::json_quote("n\xff\xc3\xa9"), "\"n\\ufffd\xc3\xa9\"");
  EXPECT_EQ(str::guid_hex(0x2c9), "0x00000000000002c9");
}
