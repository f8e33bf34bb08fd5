#include "model/job_array.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tessera::model {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

std::vector<std::int32_t> Indices(std::string_view text) {
  const Result<JobArray> array = ParseArrayRange(text);
  EXPECT_TRUE(array.ok()) << text << ": " << array.status().message();
  return array.ok() ? array->indices : std::vector<std::int32_t>{};
}

std::string ErrorOf(std::string_view text, bool limit_only = false) {
  const Result<JobArray> array = ParseArrayRange(text, limit_only);
  return array.ok() ? "ok" : array.status().message();
}

TEST(ArrayRangeTest, ReadsSlurmSyntax) {
  EXPECT_THAT(Indices("0-4"), ElementsAre(0, 1, 2, 3, 4));
  EXPECT_THAT(Indices("1,3,5-9"), ElementsAre(1, 3, 5, 6, 7, 8, 9));
  EXPECT_THAT(Indices("0-15:4"), ElementsAre(0, 4, 8, 12));
  EXPECT_THAT(Indices("7"), ElementsAre(7));
  EXPECT_THAT(Indices("5,1-3,2"), ElementsAre(1, 2, 3, 5));  // one sorted set, overlaps once
  EXPECT_EQ(ParseArrayRange("0-99%10")->max_running, 10);
  EXPECT_EQ(ParseArrayRange("0-99%10")->size(), 100);
  EXPECT_EQ(ParseArrayRange("0-99")->max_running, 0);
  EXPECT_EQ(ParseArrayRange("0-99999")->size(), kMaxArrayElements);
}

TEST(ArrayRangeTest, RefusesBadRangesSayingWhy) {
  EXPECT_EQ(ErrorOf(""), "no indices: write e.g. 0-99, 1,3,5-9 or 0-15:4, and %N to run at most N at a time");
  EXPECT_EQ(ErrorOf("%4"), "'%4' names no indices: write e.g. 0-99, 1,3,5-9 or 0-15:4, and %N to run at most N at a time");
  EXPECT_EQ(ErrorOf("1-x"), "'1-x' is not an index or a range (write e.g. 0-99, 1,3,5-9 or 0-15:4)");
  EXPECT_EQ(ErrorOf("-3"), "'-3' is not an index or a range (write e.g. 0-99, 1,3,5-9 or 0-15:4)");
  EXPECT_EQ(ErrorOf("1, 3"), "' 3' is not an index or a range (write e.g. 0-99, 1,3,5-9 or 0-15:4)");
  EXPECT_EQ(ErrorOf("1,,3"), "an empty item between commas");
  EXPECT_EQ(ErrorOf("9-3"), "range 9-3 runs backwards: write 3-9");
  EXPECT_EQ(ErrorOf("0-15:0"), "'0-15:0': the step after ':' must be a whole number of at least 1");
  EXPECT_EQ(ErrorOf("5:2"), "'5:2': a step needs a range, as in 0-15:4");
  EXPECT_EQ(ErrorOf("10000000"), "index 10000000 is above the largest, 9999999");
  EXPECT_EQ(ErrorOf("0-100000"), "'0-100000' holds 100001 indices; an array holds at most 100000");
  EXPECT_EQ(ErrorOf("0-9999999,0-9999999"), "'0-9999999,0-9999999' holds more than 1000000 indices; an array holds at most 100000");
  EXPECT_EQ(ErrorOf("0-9%0"), "'%0': the limit must be at least 1");
  EXPECT_EQ(ErrorOf("0-9%x"), "'%x': the limit after % must be a whole number");
}

TEST(ArrayRangeTest, ASweepTakesOnlyALimit) {
  EXPECT_EQ(ParseArrayRange("%4", /*limit_only=*/true)->max_running, 4);
  EXPECT_TRUE(ParseArrayRange("%4", true)->indices.empty());
  EXPECT_EQ(ErrorOf("0-9%4", true), "the indices come from the sweep: write only a limit, such as %4; got '0-9%4'");
  EXPECT_EQ(ErrorOf("0-9", true), "the indices come from the sweep: write only a limit, such as %4; got '0-9'");
}

TEST(ArrayRangeTest, DescribesIndicesAsSlurmWritesThem) {
  EXPECT_EQ(ParseArrayRange("0-99%10")->Describe(), "0-99");
  EXPECT_EQ(ParseArrayRange("1,3,5-9")->Describe(), "1,3,5-9");
  EXPECT_EQ(ParseArrayRange("0-15:4")->Describe(), "0,4,8,12");
  EXPECT_EQ(ParseArrayRange("3,2,1")->Describe(), "1-3");
}

TEST(ArrayRangeTest, FindsAnIndexPosition) {
  const JobArray array = *ParseArrayRange("1,3,5-9");
  EXPECT_EQ(array.PositionOf(1), 0);
  EXPECT_EQ(array.PositionOf(5), 2);
  EXPECT_EQ(array.PositionOf(9), 6);
  EXPECT_EQ(array.PositionOf(4), std::nullopt);
  EXPECT_EQ(array.PositionOf(10), std::nullopt);
}

TEST(SweepTest, CombinationsVaryTheLastParameterFastest) {
  JobArray array;
  array.sweep = {{"lr", {"0.1", "0.01"}}, {"batch", {"32", "64", "128"}}};
  EXPECT_EQ(*SweepCombinations(array.sweep), 6);
  EXPECT_THAT(array.SweepValues(0), ElementsAre(Pair("lr", "0.1"), Pair("batch", "32")));
  EXPECT_THAT(array.SweepValues(2), ElementsAre(Pair("lr", "0.1"), Pair("batch", "128")));
  EXPECT_THAT(array.SweepValues(3), ElementsAre(Pair("lr", "0.01"), Pair("batch", "32")));
  EXPECT_THAT(array.SweepValues(5), ElementsAre(Pair("lr", "0.01"), Pair("batch", "128")));
}

TEST(SweepTest, TooManyCombinationsAreRefused) {
  const std::vector<SweepParameter> sweep = {{"a", std::vector<std::string>(3, "x")},
                                             {"b", std::vector<std::string>(1000, "x")},
                                             {"c", std::vector<std::string>(100, "x")}};
  EXPECT_EQ(SweepCombinations(sweep).status().message(), "3 x 1000 x 100 = 300000 combinations; a sweep holds at most 100000");
  const std::vector<SweepParameter> huge = {{"a", std::vector<std::string>(100000, "x")},
                                            {"b", std::vector<std::string>(100000, "x")},
                                            {"c", std::vector<std::string>(100000, "x")}};
  EXPECT_EQ(SweepCombinations(huge).status().message(),
            "100000 x 100000 x 100000 = more than 100000 combinations; a sweep holds at most 100000");
}

TEST(SweepTest, ParametersBecomeUpperCaseVariables) {
  EXPECT_EQ(SweepVariable("lr"), "TESSERA_SWEEP_LR");
  EXPECT_EQ(SweepVariable("batch_size"), "TESSERA_SWEEP_BATCH_SIZE");
}

}  // namespace
}  // namespace tessera::model
