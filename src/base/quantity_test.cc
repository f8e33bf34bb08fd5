#include "base/quantity.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

TEST(QuantityTest, ParsesMemoryInBinaryAndDecimalUnits) {
  EXPECT_EQ(*ParseBytes("80Gi"), 80 * kGiB);
  EXPECT_EQ(*ParseBytes("512Mi"), 512 * kMiB);
  EXPECT_EQ(*ParseBytes("1.5Gi"), 3 * kGiB / 2);
  EXPECT_EQ(*ParseBytes("40G"), 40'000'000'000);
  EXPECT_EQ(*ParseBytes("1024"), 1024);
}

TEST(QuantityTest, RejectsMalformedMemory) {
  for (const char* bad : {"", "Gi", "-1Gi", "80 Gi", "80GB", "eighty", "1e9"}) {
    const auto result = ParseBytes(bad);
    ASSERT_FALSE(result.ok()) << bad;
    EXPECT_NE(result.status().message().find("not a memory size"), std::string::npos);
  }
}

TEST(QuantityTest, ParsesFractionsAsMilliUnits) {
  EXPECT_EQ(*ParseMilli("2"), 2000);
  EXPECT_EQ(*ParseMilli("0.25"), 250);
  EXPECT_EQ(*ParseMilli("250m"), 250);
  EXPECT_FALSE(ParseMilli("0.5m").ok());
  EXPECT_FALSE(ParseMilli("-1").ok());
  EXPECT_FALSE(ParseMilli("2 GPUs").ok());
}

TEST(QuantityTest, ParsesDurations) {
  EXPECT_EQ(*ParseDuration("6h"), 6 * 3600);
  EXPECT_EQ(*ParseDuration("1h30m"), 5400);
  EXPECT_EQ(*ParseDuration("2d"), 172800);
  EXPECT_EQ(*ParseDuration("120s"), 120);
  EXPECT_EQ(*ParseDuration("3600"), 3600);
  EXPECT_FALSE(ParseDuration("6x").ok());
  EXPECT_FALSE(ParseDuration("h").ok());
  EXPECT_FALSE(ParseDuration("1h30").ok());
}

TEST(QuantityTest, FormatsForPeople) {
  EXPECT_EQ(FormatBytes(80 * kGiB), "80Gi");
  EXPECT_EQ(FormatBytes(3 * kGiB / 2), "1.5Gi");
  EXPECT_EQ(FormatMilli(250), "0.25");
  EXPECT_EQ(FormatMilli(8000), "8");
  EXPECT_EQ(FormatDuration(5400), "1h30m");
}

}  // namespace
}  // namespace tessera
