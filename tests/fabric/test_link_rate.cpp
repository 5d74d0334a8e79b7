// SPDX-License-Identifier: GPL-2.0-or-later
#include "fabricplace/fabric/link_rate.hpp"

#include <gtest/gtest.h>

using namespace fabricplace::fabric;

TEST(LinkRate, ParsesIbnetdiscoverSpellings) {
  EXPECT_EQ(parse_rate("4xHDR"), (LinkRate{LinkWidth::k4x, LinkSpeed::kHDR}));
  EXPECT_EQ(parse_rate("1xEDR"), (LinkRate{LinkWidth::k1x, LinkSpeed::kEDR}));
  EXPECT_EQ(parse_rate("12xQDR"), (LinkRate{LinkWidth::k12x, LinkSpeed::kQDR}));
  EXPECT_EQ(parse_rate("2xNDR"), (LinkRate{LinkWidth::k2x, LinkSpeed::kNDR}));
  EXPECT_EQ(parse_rate("4xFDR10"), (LinkRate{LinkWidth::k4x, LinkSpeed::kFDR10}));
  EXPECT_EQ(parse_rate("8xXDR"), (LinkRate{LinkWidth::k8x, LinkSpeed::kXDR}));
  EXPECT_EQ(parse_rate("?????"),
            (LinkRate{}));  // "??" + "???": what ibnetdiscover prints for unknown
  EXPECT_EQ(parse_rate("4x???"), (LinkRate{LinkWidth::k4x, LinkSpeed::kUnknown}));
}

TEST(LinkRate, RejectsNonsense) {
  for (const char* bad : {"7xHDR", "4xFOO", "HDR", "4x", "", "x4HDR", "4 xHDR", "16xHDR"})
    EXPECT_FALSE(parse_rate(bad)) << bad;
}

TEST(LinkRate, DataRatesAfterEncoding) {
  EXPECT_DOUBLE_EQ((LinkRate{LinkWidth::k4x, LinkSpeed::kHDR}).gbps(), 200.0);
  EXPECT_DOUBLE_EQ((LinkRate{LinkWidth::k4x, LinkSpeed::kNDR}).gbps(), 400.0);
  EXPECT_DOUBLE_EQ((LinkRate{LinkWidth::k4x, LinkSpeed::kEDR}).gbps(), 100.0);
  EXPECT_NEAR((LinkRate{LinkWidth::k4x, LinkSpeed::kFDR}).gbps(), 54.545,
              1e-3);  // 14.0625 x 64/66 x 4
  EXPECT_DOUBLE_EQ((LinkRate{LinkWidth::k4x, LinkSpeed::kFDR10}).gbps(), 40.0);
  EXPECT_DOUBLE_EQ((LinkRate{LinkWidth::k4x, LinkSpeed::kQDR}).gbps(), 32.0);  // 8b/10b
  EXPECT_DOUBLE_EQ((LinkRate{LinkWidth::k4x, LinkSpeed::kSDR}).gbps(), 8.0);
  EXPECT_DOUBLE_EQ((LinkRate{LinkWidth::k1x, LinkSpeed::kHDR}).gbps(), 50.0);
  EXPECT_DOUBLE_EQ((LinkRate{LinkWidth::k4x, LinkSpeed::kXDR}).gbps(), 800.0);
  EXPECT_DOUBLE_EQ((LinkRate{LinkWidth::kUnknown, LinkSpeed::kHDR}).gbps(), 0.0);
}

TEST(LinkRate, PrintsAsIbnetdiscoverDoes) {
  EXPECT_EQ((LinkRate{LinkWidth::k4x, LinkSpeed::kHDR}).to_string(), "4xHDR");
  EXPECT_EQ((LinkRate{}).to_string(), "?????");
  for (auto w : {LinkWidth::k1x, LinkWidth::k2x, LinkWidth::k4x, LinkWidth::k8x, LinkWidth::k12x})
    for (auto s :
         {LinkSpeed::kSDR, LinkSpeed::kDDR, LinkSpeed::kQDR, LinkSpeed::kFDR10, LinkSpeed::kFDR,
          LinkSpeed::kEDR, LinkSpeed::kHDR, LinkSpeed::kNDR, LinkSpeed::kXDR})
      EXPECT_EQ(parse_rate(LinkRate{w, s}.to_string()), (LinkRate{w, s}));
}

TEST(LinkRate, SpeedsOrderByLaneRate) {
  EXPECT_LT(LinkSpeed::kQDR, LinkSpeed::kFDR10);
  EXPECT_LT(LinkSpeed::kFDR10, LinkSpeed::kFDR);
  EXPECT_LT(LinkSpeed::kEDR, LinkSpeed::kHDR);
  EXPECT_LT(lane_gbps(LinkSpeed::kFDR), lane_gbps(LinkSpeed::kEDR));
  EXPECT_LT(lane_gbps(LinkSpeed::kQDR), lane_gbps(LinkSpeed::kFDR10));
}

TEST(LinkRate, LowerReadingIsAWholeReading) {
  const auto r = [](const char* s) { return *parse_rate(s); };
  EXPECT_EQ(lower_rate(r("4xEDR"), r("1xHDR")), r("1xHDR"));  // 50 < 100 Gb/s
  EXPECT_EQ(lower_rate(r("2xNDR"), r("4xHDR")), r("2xNDR"));  // equal rate: fewer lanes
  EXPECT_EQ(lower_rate(r("4xHDR"), r("2xNDR")), r("2xNDR"));  // whatever the order
  EXPECT_EQ(lower_rate(r("4xFDR10"), r("4xQDR")), r("4xQDR"));
  EXPECT_EQ(lower_rate(r("4xQDR"), r("4xFDR10")), r("4xQDR"));
  EXPECT_EQ(lower_rate(r("4xHDR"), r("4xHDR")), r("4xHDR"));
  // A partial reading is completed from the other before comparing, in either order.
  EXPECT_EQ(lower_rate(r("??HDR"), r("4xEDR")), r("4xEDR"));
  EXPECT_EQ(lower_rate(r("4xEDR"), r("??HDR")), r("4xEDR"));
  EXPECT_EQ(lower_rate(r("4x???"), r("1xQDR")), r("1xQDR"));
  EXPECT_EQ(lower_rate(r("1xQDR"), r("4x???")), r("1xQDR"));
  EXPECT_EQ(lower_rate(r("??HDR"), r("4x???")), r("4xHDR"));
  EXPECT_EQ(lower_rate(r("4x???"), r("?????")), r("4x???"));
  EXPECT_EQ(lower_rate(r("?????"), r("4x???")), r("4x???"));
}
