#include "net/load_shedder.h"

#include <gtest/gtest.h>

namespace tessera::net {
namespace {

TEST(LoadShedderTest, ShedsPastTheRequestsInFlightAndTakesMoreOnceOneIsAnswered) {
  LoadShedder shedder({.max_in_flight = 2, .body_budget = 1000});
  LoadShedder::Slot a, b, c;
  EXPECT_FALSE(shedder.Admit(10, &a));
  EXPECT_FALSE(shedder.Admit(10, &b));
  EXPECT_EQ(shedder.Admit(10, &c), Shed::kInFlight);
  EXPECT_FALSE(c);
  a.Release();
  EXPECT_FALSE(shedder.Admit(10, &c));
  EXPECT_EQ(shedder.counts().in_flight, 2u);
  EXPECT_EQ(shedder.counts().shed[static_cast<std::size_t>(Shed::kInFlight)], 1u);
}

TEST(LoadShedderTest, ShedsABodyThatWouldPassTheMemoryBudget) {
  LoadShedder shedder({.max_in_flight = 10, .body_budget = 100});
  LoadShedder::Slot big, more;
  EXPECT_FALSE(shedder.Admit(80, &big));
  EXPECT_EQ(shedder.Admit(30, &more), Shed::kMemory);
  EXPECT_FALSE(shedder.Admit(20, &more));
  EXPECT_EQ(shedder.counts().body_bytes, 100u);
  {
    LoadShedder::Slot moved = std::move(big);  // one slot, given back once
    EXPECT_FALSE(big);
  }
  more.Release();
  more.Release();
  EXPECT_EQ(shedder.counts().in_flight, 0u);
  EXPECT_EQ(shedder.counts().body_bytes, 0u);
}

}  // namespace
}  // namespace tessera::net
