#include "base/backoff.h"

#include <gtest/gtest.h>

#include <set>

namespace tessera {
namespace {

using std::chrono::milliseconds;

TEST(BackoffTest, WaitsDoubleUpToTheCeilingEachBetweenHalfAndAllOfItsStep) {
  Backoff backoff(milliseconds(100), milliseconds(800), 7);
  for (std::int64_t step : {100, 200, 400, 800, 800, 800}) {
    const milliseconds wait = backoff.Next();
    EXPECT_GE(wait.count(), step / 2);
    EXPECT_LE(wait.count(), step);
  }
  backoff.Reset();
  EXPECT_LE(backoff.Next().count(), 100);
}

TEST(BackoffTest, ClientsThatFailTogetherWaitDifferently) {
  std::set<std::int64_t> waits;
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    Backoff backoff(milliseconds(1000), milliseconds(1000), seed);
    waits.insert(backoff.Next().count());
  }
  EXPECT_GT(waits.size(), 15u);
}

}  // namespace
}  // namespace tessera
