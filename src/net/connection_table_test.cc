#include "net/connection_table.h"

#include <gtest/gtest.h>

namespace tessera::net {
namespace {

using Admission = ConnectionTable::Admission;

std::size_t Open(const ConnectionTable& table, PeerClass c) { return table.counts().open[static_cast<std::size_t>(c)]; }
std::uint64_t Refused(const ConnectionTable& table, Refusal r) { return table.counts().refused[static_cast<std::size_t>(r)]; }

TEST(ConnectionTableTest, OneAddressGetsItsShareThenAFewOnProbationThenNothing) {
  ConnectionTable table({.max_connections = 100, .reserved = 20, .max_per_address = 3, .probation_per_address = 2});
  for (int i = 0; i < 3; ++i) EXPECT_EQ(table.Open("10.0.0.1").admission, Admission::kAdmitted);
  const ConnectionTable::Decision probation = table.Open("10.0.0.1");
  EXPECT_EQ(probation.admission, Admission::kProbation);
  EXPECT_EQ(probation.refusal, Refusal::kAddressFull);
  EXPECT_EQ(table.Open("10.0.0.1").admission, Admission::kProbation);
  const ConnectionTable::Decision refused = table.Open("10.0.0.1");
  EXPECT_EQ(refused.admission, Admission::kRefused);
  EXPECT_EQ(refused.refusal, Refusal::kAddressFull);
  EXPECT_EQ(Refused(table, Refusal::kAddressFull), 1u);
  // Another address is not held back by the first.
  EXPECT_EQ(table.Open("10.0.0.2").admission, Admission::kAdmitted);
  EXPECT_EQ(Open(table, PeerClass::kUnidentified), 6u);
  EXPECT_EQ(table.counts().probation, 2u);
}

TEST(ConnectionTableTest, APrivilegedConnectionLeavesTheUnprivilegedShare) {
  ConnectionTable table({.max_connections = 100, .reserved = 20, .max_per_address = 1, .probation_per_address = 1});
  ASSERT_EQ(table.Open("10.0.0.1").admission, Admission::kAdmitted);
  table.Identify("10.0.0.1", false, PeerClass::kAgent);
  // The agent's connection no longer counts against its address.
  EXPECT_EQ(table.Open("10.0.0.1").admission, Admission::kAdmitted);
  EXPECT_EQ(Open(table, PeerClass::kAgent), 1u);
  table.Close("10.0.0.1", false, PeerClass::kAgent);
  EXPECT_EQ(table.Open("10.0.0.1").admission, Admission::kProbation);
}

TEST(ConnectionTableTest, TheReserveIsForPrivilegedConnectionsOnly) {
  ConnectionTable table({.max_connections = 10, .reserved = 4, .max_per_address = 100, .probation_per_address = 100});
  for (int i = 0; i < 6; ++i) ASSERT_EQ(table.Open("10.0.0." + std::to_string(i)).admission, Admission::kAdmitted);
  // Unprivileged connections are at 10 - 4; probation may take half the reserve.
  ASSERT_EQ(table.Open("10.0.1.1").admission, Admission::kProbation);
  ASSERT_EQ(table.Open("10.0.1.2").admission, Admission::kProbation);
  const ConnectionTable::Decision refused = table.Open("10.0.1.3");
  EXPECT_EQ(refused.admission, Admission::kRefused);
  EXPECT_EQ(refused.refusal, Refusal::kUntrustedFull);
  // An administrator on probation proves itself and keeps its place: a slot
  // of probation frees up for the next newcomer.
  table.Identify("10.0.1.1", true, PeerClass::kAdmin);
  EXPECT_EQ(table.counts().probation, 1u);
  ASSERT_EQ(table.Open("10.0.1.4").admission, Admission::kProbation);
  // A client on probation is refused, and counted so.
  table.Identify("10.0.1.2", true, PeerClass::kClient);
  EXPECT_EQ(Refused(table, Refusal::kNotPrivileged), 1u);
  table.Close("10.0.1.2", true, PeerClass::kClient);
  table.Identify("10.0.1.4", true, PeerClass::kAgent);
  // 6 unidentified + 2 privileged: room for two more before the hard cap.
  ASSERT_EQ(table.Open("10.0.1.5").admission, Admission::kProbation);
  table.Identify("10.0.1.5", true, PeerClass::kAgent);
  ASSERT_EQ(table.Open("10.0.1.6").admission, Admission::kProbation);
  table.Identify("10.0.1.6", true, PeerClass::kAgent);
  const ConnectionTable::Decision full = table.Open("10.0.1.7");
  EXPECT_EQ(full.admission, Admission::kRefused);
  EXPECT_EQ(full.refusal, Refusal::kServerFull);
}

TEST(ConnectionTableTest, ClosingEveryConnectionLeavesNothingBehind) {
  ConnectionTable table({.max_connections = 4, .reserved = 2, .max_per_address = 1, .probation_per_address = 1});
  ASSERT_EQ(table.Open("a").admission, Admission::kAdmitted);
  ASSERT_EQ(table.Open("a").admission, Admission::kProbation);
  table.Identify("a", false, PeerClass::kClient);
  table.Identify("a", true, PeerClass::kClient);
  table.Close("a", false, PeerClass::kClient);
  table.Close("a", true, PeerClass::kClient);
  for (std::size_t c = 0; c < kPeerClasses; ++c) EXPECT_EQ(table.counts().open[c], 0u);
  EXPECT_EQ(table.counts().probation, 0u);
  EXPECT_EQ(table.Open("a").admission, Admission::kAdmitted);
}

TEST(ConnectionTableTest, DefaultsFollowTheDescriptorLimit) {
  const std::uint64_t descriptors = RaiseDescriptorLimit();
  EXPECT_GT(descriptors, 0u);
  const ConnectionTable table({});
  EXPECT_EQ(table.limits().max_connections, DefaultMaxConnections());
  EXPECT_LT(table.limits().max_connections, descriptors);
  EXPECT_EQ(table.limits().reserved, table.limits().max_connections / 8);
}

}  // namespace
}  // namespace tessera::net
