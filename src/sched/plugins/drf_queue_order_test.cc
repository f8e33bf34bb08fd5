#include "sched/plugins/drf_queue_order.h"

#include <gtest/gtest.h>

#include "base/quantity.h"

namespace tessera::sched {
namespace {

// 8 GPUs of 80 GiB, 64 cores, 512 GiB of host memory.
const model::Resources kCapacity{8000, 640 * kGiB, 64'000, 512 * kGiB};

// A queue whose decayed average equals `usage`, so blending is neutral.
model::Queue Steady(const model::Resources& usage, double weight = 1.0) {
  model::Queue queue;
  queue.weight = weight;
  queue.usage_average = usage;
  return queue;
}

TEST(DrfQueueOrderTest, DominantShareIsTheLargestResourceShare) {
  const DrfQueueOrder drf;
  // GPUs 25%, CPU 50%: the CPU share dominates.
  const model::Resources cpu_heavy{2000, 0, 32'000, 0};
  EXPECT_DOUBLE_EQ(drf.Share(Steady(cpu_heavy), cpu_heavy, kCapacity), 0.5);
  // GPUs 25%, host memory 75%.
  const model::Resources memory_heavy{2000, 0, 0, 384 * kGiB};
  EXPECT_DOUBLE_EQ(drf.Share(Steady(memory_heavy), memory_heavy, kCapacity), 0.75);
  // GPU memory 12.5%, GPUs 12.5%: a tie is just that share.
  const model::Resources gpu{1000, 80 * kGiB, 0, 0};
  EXPECT_DOUBLE_EQ(drf.Share(Steady(gpu), gpu, kCapacity), 0.125);
}

TEST(DrfQueueOrderTest, EmptyQueueHasZeroShare) {
  const DrfQueueOrder drf;
  EXPECT_DOUBLE_EQ(drf.Share(Steady({}), {}, kCapacity), 0.0);
}

TEST(DrfQueueOrderTest, WeightTwoHalvesTheShare) {
  const DrfQueueOrder drf;
  const model::Resources usage{4000, 0, 0, 0};
  const double one = drf.Share(Steady(usage, 1.0), usage, kCapacity);
  const double two = drf.Share(Steady(usage, 2.0), usage, kCapacity);
  EXPECT_DOUBLE_EQ(one, 0.5);
  EXPECT_DOUBLE_EQ(two, 0.25);
}

TEST(DrfQueueOrderTest, BlendsCurrentUsageWithItsDecayedAverage) {
  const DrfQueueOrder drf;
  const model::Resources half{4000, 0, 0, 0};
  // Holding half the GPUs now with no history counts half of it.
  EXPECT_DOUBLE_EQ(drf.Share(Steady({}), half, kCapacity), 0.25);
  // Holding nothing now but half on average also counts a quarter.
  EXPECT_DOUBLE_EQ(drf.Share(Steady(half), {}, kCapacity), 0.25);
  // Both together: the full half.
  EXPECT_DOUBLE_EQ(drf.Share(Steady(half), half, kCapacity), 0.5);
  // So a queue that ran hot yesterday yields to one that did not.
  EXPECT_GT(drf.Share(Steady(half), {2000, 0, 0, 0}, kCapacity), drf.Share(Steady({}), {2000, 0, 0, 0}, kCapacity));
}

TEST(DrfQueueOrderTest, DominantResourceIsTakenAfterBlending) {
  const DrfQueueOrder drf;
  model::Queue queue;
  // Now: GPUs 100%; average: CPU 100%. Blended: GPUs 50%, CPU 50%, not 100%.
  queue.usage_average = {0, 0, 64'000, 0};
  EXPECT_DOUBLE_EQ(drf.Share(queue, {8000, 0, 0, 0}, kCapacity), 0.5);
}

}  // namespace
}  // namespace tessera::sched
