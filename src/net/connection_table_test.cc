#include "net/connection_table.h"

#include <gtest/gtest.h>

#include <vector>

namespace tessera::net {
namespace {

using Admission = ConnectionTable::Admission;

std::size_t Open(const ConnectionTable& table, PeerClass c) { return table.counts().open[static_cast<std::size_t>(c)]; }
std::uint64_t Refused(const ConnectionTable& table, Refusal r) { return table.counts().refused[static_cast<std::size_t>(r)]; }

// Connections that record whether the table evicted them.
class Connections {
 public:
  explicit Connections(ConnectionTable& table) : table_(table) {}
  ConnectionTable::Decision Open(const std::string& address) {
    const std::size_t index = evicted_.size();
    evicted_.push_back(false);
    const ConnectionTable::Decision d = table_.Open(address, [this, index] { evicted_[index] = true; });
    ids_.push_back(d.id);
    return d;
  }
  std::uint64_t id(std::size_t i) const { return ids_[i]; }
  bool evicted(std::size_t i) const { return evicted_[i]; }

 private:
  ConnectionTable& table_;
  std::vector<bool> evicted_;
  std::vector<std::uint64_t> ids_;
};

TEST(ConnectionTableTest, ANewcomerPastItsAddressCapEvictsTheOldestThatNeverFinishedARequest) {
  ConnectionTable table({.max_connections = 100, .reserved = 20, .max_per_address = 3, .probation_per_address = 2});
  Connections c(table);
  for (int i = 0; i < 3; ++i) ASSERT_EQ(c.Open("10.0.0.1").admission, Admission::kAdmitted);
  table.Identify(c.id(0), PeerClass::kClient);  // it finished a request: no longer evictable
  EXPECT_EQ(c.Open("10.0.0.1").admission, Admission::kAdmitted);
  EXPECT_FALSE(c.evicted(0));
  EXPECT_TRUE(c.evicted(1)) << "the oldest unidentified one";
  EXPECT_FALSE(c.evicted(2));
  EXPECT_EQ(Refused(table, Refusal::kEvicted), 1u);
  // Another address's connections are not touched.
  EXPECT_EQ(c.Open("10.0.0.2").admission, Admission::kAdmitted);
  EXPECT_FALSE(c.evicted(4));
}

TEST(ConnectionTableTest, WithNothingToEvictOneAddressGetsAFewOnProbationThenNothing) {
  ConnectionTable table({.max_connections = 100, .reserved = 20, .max_per_address = 2, .probation_per_address = 2});
  Connections c(table);
  for (std::size_t i = 0; i < 2; ++i) {
    ASSERT_EQ(c.Open("10.0.0.1").admission, Admission::kAdmitted);
    table.Identify(c.id(i), PeerClass::kClient);
  }
  const ConnectionTable::Decision probation = c.Open("10.0.0.1");
  EXPECT_EQ(probation.admission, Admission::kProbation);
  EXPECT_EQ(probation.refusal, Refusal::kAddressFull);
  // A probation connection is unidentified: the next newcomer evicts it, and takes its place on probation.
  EXPECT_EQ(c.Open("10.0.0.1").admission, Admission::kAdmitted);
  EXPECT_TRUE(c.evicted(2));
  table.Close(c.id(2));
  table.Identify(c.id(3), PeerClass::kClient);
  ASSERT_EQ(c.Open("10.0.0.1").admission, Admission::kProbation);
  table.Identify(c.id(4), PeerClass::kClient);  // refused: not privileged, closing
  EXPECT_EQ(Refused(table, Refusal::kNotPrivileged), 1u);
  ASSERT_EQ(c.Open("10.0.0.1").admission, Admission::kProbation);
  table.Identify(c.id(5), PeerClass::kClient);
  const ConnectionTable::Decision refused = c.Open("10.0.0.1");
  EXPECT_EQ(refused.admission, Admission::kRefused);
  EXPECT_EQ(refused.refusal, Refusal::kAddressFull);
  EXPECT_EQ(Refused(table, Refusal::kAddressFull), 1u);
}

TEST(ConnectionTableTest, APrivilegedConnectionLeavesTheUnprivilegedShare) {
  ConnectionTable table({.max_connections = 100, .reserved = 20, .max_per_address = 1, .probation_per_address = 1});
  Connections c(table);
  ASSERT_EQ(c.Open("10.0.0.1").admission, Admission::kAdmitted);
  table.Identify(c.id(0), PeerClass::kAgent);
  // The agent's connection no longer counts against its address.
  EXPECT_EQ(c.Open("10.0.0.1").admission, Admission::kAdmitted);
  EXPECT_EQ(Open(table, PeerClass::kAgent), 1u);
  table.Identify(c.id(1), PeerClass::kClient);
  table.Close(c.id(0));
  EXPECT_EQ(c.Open("10.0.0.1").admission, Admission::kProbation);
}

TEST(ConnectionTableTest, TheReserveIsForPrivilegedConnectionsOnly) {
  ConnectionTable table({.max_connections = 10, .reserved = 4, .max_per_address = 100, .probation_per_address = 100});
  Connections c(table);
  for (std::size_t i = 0; i < 6; ++i) {
    ASSERT_EQ(c.Open("10.0.0." + std::to_string(i)).admission, Admission::kAdmitted);
    table.Identify(c.id(i), PeerClass::kClient);
  }
  // Unprivileged connections are at 10 - 4; probation may take half the reserve.
  ASSERT_EQ(c.Open("10.0.1.1").admission, Admission::kProbation);
  table.Identify(c.id(6), PeerClass::kAdmin);  // proves itself and keeps its place
  ASSERT_EQ(c.Open("10.0.1.2").admission, Admission::kProbation);
  ASSERT_EQ(c.Open("10.0.1.3").admission, Admission::kAdmitted) << "evicts the newcomer on probation before it";
  EXPECT_TRUE(c.evicted(7));
  table.Close(c.id(7));
  table.Identify(c.id(8), PeerClass::kAgent);
  ASSERT_EQ(c.Open("10.0.1.4").admission, Admission::kProbation);
  table.Identify(c.id(9), PeerClass::kAgent);
  // 6 clients + 3 privileged: one more before the hard cap, then nothing to evict.
  ASSERT_EQ(c.Open("10.0.1.5").admission, Admission::kProbation);
  table.Identify(c.id(10), PeerClass::kAgent);
  const ConnectionTable::Decision full = c.Open("10.0.1.6");
  EXPECT_EQ(full.admission, Admission::kRefused);
  EXPECT_EQ(full.refusal, Refusal::kServerFull);
}

TEST(ConnectionTableTest, ClosingEveryConnectionLeavesNothingBehind) {
  ConnectionTable table({.max_connections = 4, .reserved = 2, .max_per_address = 1, .probation_per_address = 1});
  Connections c(table);
  ASSERT_EQ(c.Open("a").admission, Admission::kAdmitted);
  table.Identify(c.id(0), PeerClass::kClient);
  ASSERT_EQ(c.Open("a").admission, Admission::kProbation);
  table.Identify(c.id(1), PeerClass::kClient);
  table.Close(c.id(0));
  table.Close(c.id(1));
  for (std::size_t k = 0; k < kPeerClasses; ++k) EXPECT_EQ(table.counts().open[k], 0u);
  EXPECT_EQ(table.counts().probation, 0u);
  EXPECT_EQ(c.Open("a").admission, Admission::kAdmitted);
}

TEST(ConnectionTableTest, DefaultsFollowTheDescriptorLimit) {
  const std::uint64_t descriptors = RaiseDescriptorLimit();
  EXPECT_GT(descriptors, 0u);
  const ConnectionTable table({});
  EXPECT_EQ(table.limits().max_connections, DefaultMaxConnections());
  EXPECT_LT(table.limits().max_connections, descriptors);
  EXPECT_EQ(table.limits().reserved, table.limits().max_connections / 8);
  EXPECT_EQ(table.limits().max_per_address, table.limits().max_connections / 8);
}

}  // namespace
}  // namespace tessera::net
