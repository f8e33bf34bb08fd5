#include "node/sharing/burst_policy.h"

#include <gtest/gtest.h>

namespace tessera::node {
namespace {

constexpr std::int64_t kGiB = std::int64_t{1} << 30;
constexpr std::int64_t kSecond = 1'000'000'000;

vgpu::TaskUsage Task(const std::string& id, std::int64_t cap, std::int64_t used, std::int64_t burst_since = 0) {
  return {id, cap, 8 * kGiB, used, burst_since, {}};
}

CheckpointContract WithSignal(const std::string&) { return {true, 30 * kSecond}; }
CheckpointContract WithoutSignal(const std::string&) { return {false, 30 * kSecond}; }

TEST(BurstPolicyTest, AShortBurstNobodyNeedsIsLeftAlone) {
  BurstPolicy policy(300 * kSecond);
  vgpu::LedgerSnapshot ledger{80 * kGiB, 0, 0, {Task("a", 20 * kGiB, 30 * kGiB, 1), Task("b", 20 * kGiB, 10 * kGiB)}};
  bool clear = true;
  EXPECT_TRUE(policy.Decide(ledger, 100 * kSecond, WithSignal, &clear).empty());
  EXPECT_FALSE(clear);
}

TEST(BurstPolicyTest, AReclaimAsksTheBursterThenEvictsItAfterItsGrace) {
  BurstPolicy policy(300 * kSecond);
  vgpu::LedgerSnapshot ledger{80 * kGiB, 4 * kGiB, 10, {Task("a", 20 * kGiB, 30 * kGiB, 1), Task("b", 60 * kGiB, 50 * kGiB)}};
  bool clear = false;
  auto first = policy.Decide(ledger, 10 * kSecond, WithSignal, &clear);
  ASSERT_EQ(first.size(), 1U);
  EXPECT_EQ(first[0].task, "a");
  EXPECT_EQ(first[0].action, BurstDecision::Action::kAsk);
  EXPECT_NE(first[0].reason.find("guaranteed task needs 4Gi"), std::string::npos) << first[0].reason;
  EXPECT_TRUE(policy.Decide(ledger, 20 * kSecond, WithSignal, &clear).empty()) << "asked once, within its grace";
  auto later = policy.Decide(ledger, 40 * kSecond, WithSignal, &clear);
  ASSERT_EQ(later.size(), 1U);
  EXPECT_EQ(later[0].action, BurstDecision::Action::kEvict);
  EXPECT_NE(later[0].reason.find("held 10Gi of GPU memory past its cap of 20Gi"), std::string::npos) << later[0].reason;
}

TEST(BurstPolicyTest, ATaskThatGivesTheMemoryBackIsForgiven) {
  BurstPolicy policy(300 * kSecond);
  vgpu::LedgerSnapshot ledger{80 * kGiB, 4 * kGiB, 10, {Task("a", 20 * kGiB, 30 * kGiB, 1)}};
  bool clear = false;
  ASSERT_EQ(policy.Decide(ledger, 10 * kSecond, WithSignal, &clear).size(), 1U);
  ledger.tasks[0].used = 20 * kGiB;  // it freed its burst
  EXPECT_TRUE(policy.Decide(ledger, 50 * kSecond, WithSignal, &clear).empty());
  EXPECT_TRUE(clear) << "nobody bursts any more: the pending reclaim is over";
}

TEST(BurstPolicyTest, ABurstPastTheNodesLimitIsEndedToo) {
  BurstPolicy policy(60 * kSecond);
  vgpu::LedgerSnapshot ledger{80 * kGiB, 0, 0, {Task("a", 20 * kGiB, 30 * kGiB, 5 * kSecond)}};
  bool clear = false;
  EXPECT_TRUE(policy.Decide(ledger, 60 * kSecond, WithSignal, &clear).empty());
  auto decisions = policy.Decide(ledger, 70 * kSecond, WithSignal, &clear);
  ASSERT_EQ(decisions.size(), 1U);
  EXPECT_EQ(decisions[0].action, BurstDecision::Action::kAsk);
  EXPECT_NE(decisions[0].reason.find("longer than the node's limit of 60s"), std::string::npos) << decisions[0].reason;
}

TEST(BurstPolicyTest, ATaskWithoutACheckpointSignalIsEvictedAtOnce) {
  BurstPolicy policy(300 * kSecond);
  vgpu::LedgerSnapshot ledger{80 * kGiB, kGiB, 10, {Task("a", 20 * kGiB, 30 * kGiB, 1)}};
  bool clear = false;
  auto decisions = policy.Decide(ledger, 10 * kSecond, WithoutSignal, &clear);
  ASSERT_EQ(decisions.size(), 1U);
  EXPECT_EQ(decisions[0].action, BurstDecision::Action::kEvict);
}

}  // namespace
}  // namespace tessera::node
