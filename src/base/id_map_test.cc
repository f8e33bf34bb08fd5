#include "base/id_map.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "base/strong_id.h"

namespace tessera {
namespace {

using ::testing::ElementsAre;
using Id = StrongId<struct TestTag>;
using Map = IdMap<Id, std::string>;

TEST(IdMapTest, ValuesAreFoundByIdAndKeptInIdOrder) {
  Map map;
  map.Add(Id(0), "a");
  map.Add(Id(3), "d");  // ids may skip
  map.Add(Id(5000), "far");  // another page
  EXPECT_EQ(map.at(Id(3)), "d");
  EXPECT_EQ(map.at(Id(5000)), "far");
  EXPECT_FALSE(map.contains(Id(1)));
  EXPECT_FALSE(map.contains(Id(4999)));
  EXPECT_FALSE(map.contains(Id(1'000'000)));
  EXPECT_FALSE(map.contains(Id()));
  EXPECT_EQ(map.find(Id(2)), nullptr);
  EXPECT_THAT(map.values(), ElementsAre("a", "d", "far"));
  EXPECT_EQ(map.end(), Id(5001));
}

TEST(IdMapTest, ErasingCompactsAndLookupsStillFindTheRest) {
  Map map;
  for (int i = 0; i < 3000; ++i) map.Add(Id(i), std::to_string(i));
  const std::size_t erased = map.EraseIf([](Id id, const std::string&) { return id.value() % 3 != 0; });
  EXPECT_EQ(erased, 2000u);
  EXPECT_EQ(map.size(), 1000u);
  for (int i = 0; i < 3000; ++i) {
    ASSERT_EQ(map.contains(Id(i)), i % 3 == 0) << i;
    if (i % 3 == 0) {
      EXPECT_EQ(map.at(Id(i)), std::to_string(i));
    }
  }
  EXPECT_EQ(map.values().front(), "0");
  EXPECT_EQ(map.values().back(), "2997");
  // The next id is still past every id ever added, erased ones included.
  EXPECT_EQ(map.end(), Id(3000));
  map.Add(Id(3000), "next");
  EXPECT_EQ(map.at(Id(3000)), "next");
}

TEST(IdMapTest, ErasingEveryValueOfAPageFreesItAndLeavesTheOthers) {
  Map map;
  for (int i = 0; i < 2 * static_cast<int>(Map::kPageSize); ++i) map.Add(Id(i), "v");
  map.EraseIf([](Id id, const std::string&) { return id.index() < Map::kPageSize; });
  EXPECT_FALSE(map.contains(Id(0)));
  EXPECT_FALSE(map.contains(Id(static_cast<int>(Map::kPageSize) - 1)));
  EXPECT_TRUE(map.contains(Id(static_cast<int>(Map::kPageSize))));
  EXPECT_EQ(map.size(), Map::kPageSize);
}

TEST(IdMapTest, SkippedIdsAreNeverHandedOutAgain) {
  Map map;
  map.Add(Id(0), "a");
  map.SkipTo(Id(40));
  EXPECT_EQ(map.end(), Id(40));
  map.SkipTo(Id(10));  // never backwards
  EXPECT_EQ(map.end(), Id(40));
}

TEST(IdMapTest, SkippedIdsCanBeFilledInLaterAndTheLastAddedTakenBack) {
  // A job array reserves its elements' ids and fills them in as they start,
  // after jobs submitted later took ids past them.
  Map map;
  map.Add(Id(0), "array");
  map.SkipTo(Id(2000));
  map.Add(Id(2000), "later job");
  map.Add(Id(5), "element 4");
  map.Add(Id(1), "element 0");
  EXPECT_EQ(map.at(Id(5)), "element 4");
  EXPECT_EQ(map.at(Id(2000)), "later job");
  EXPECT_EQ(map.end(), Id(2001));  // filling in never moves the end back
  EXPECT_THAT(map.values(), ElementsAre("array", "later job", "element 4", "element 0"));
  map.EraseLast(Id(1));
  EXPECT_FALSE(map.contains(Id(1)));
  EXPECT_EQ(map.at(Id(5)), "element 4");
  EXPECT_EQ(map.end(), Id(2001));
  map.Add(Id(1), "element 0 again");
  EXPECT_EQ(map.at(Id(1)), "element 0 again");
  map.Erase({Id(5)});
  EXPECT_THAT(map.values(), ElementsAre("array", "later job", "element 0 again"));
  EXPECT_EQ(map.at(Id(1)), "element 0 again");
}

}  // namespace
}  // namespace tessera
