#include "controlplane/rendezvous_ports.h"

#include <gtest/gtest.h>

namespace tessera::controlplane {
namespace {

TEST(RendezvousPortsTest, EachNodeHandsOutItsLowestFreePort) {
  RendezvousPorts ports;
  EXPECT_EQ(ports.Take("n1"), 29500);
  EXPECT_EQ(ports.Take("n1"), 29501);
  EXPECT_EQ(ports.Take("n2"), 29500);  // another node: another listener address
  EXPECT_EQ(ports.Take("n1"), 29502);
  ports.Release("n1", 29501);
  EXPECT_EQ(ports.Take("n1"), 29501);  // a released port is taken again, lowest first
  EXPECT_EQ(ports.Take("n1"), 29503);
  EXPECT_EQ(ports.held("n1"), 4u);
}

TEST(RendezvousPortsTest, RecoveredPortsAreHeldAndSkipped) {
  RendezvousPorts ports;
  ports.Hold("n1", 29500);
  ports.Hold("n1", 29502);
  ports.Hold("n1", 29502);
  EXPECT_EQ(ports.Take("n1"), 29501);
  EXPECT_EQ(ports.Take("n1"), 29503);
  ports.Release("n1", 29500);
  ports.Release("n1", 29501);
  ports.Release("n1", 29502);
  ports.Release("n1", 29503);
  ports.Release("n9", 29500);  // never held: nothing happens
  EXPECT_EQ(ports.held("n1"), 0u);
}

TEST(RendezvousPortsTest, AFullRangeSharesItsFirstPort) {
  RendezvousPorts ports;
  for (std::int32_t i = 0; i < RendezvousPorts::kCount; ++i) ASSERT_EQ(ports.Take("n1"), RendezvousPorts::kFirst + i);
  EXPECT_EQ(ports.Take("n1"), RendezvousPorts::kFirst);
  EXPECT_EQ(ports.held("n1"), static_cast<std::size_t>(RendezvousPorts::kCount));
}

}  // namespace
}  // namespace tessera::controlplane
