#include "vgpu/launch_pacer.h"

#include <algorithm>

#include <gtest/gtest.h>

namespace tessera::vgpu {
namespace {

// A simulated GPU and a program that launches kernels as fast as it may: each
// launch of `blocks` keeps the GPU busy `ns_per_block` per block, queued
// behind earlier ones; a queue deeper than 5 ms blocks the launcher, as a
// real command buffer does. The pacer samples utilization every 100 ms.
// Returns the utilization (percent) over the last `measure_s` of `run_s`.
double SimulateGreedyTask(double share, double run_s, double measure_s, std::int64_t ns_per_block, double blocks = 100) {
  constexpr std::int64_t kSampleNs = 100'000'000;
  LaunchPacer pacer(share);
  const auto end = static_cast<std::int64_t>(run_s * 1e9);
  const std::int64_t measure_from = end - static_cast<std::int64_t>(measure_s * 1e9);
  std::int64_t now = 0, busy_until = 0, scheduled = 0, next_sample = 0, last_completed = 0, measured_from = 0;
  // GPU time done by `t`, exact while every kernel was launched before `t`.
  const auto completed = [&](std::int64_t t) { return scheduled - std::max<std::int64_t>(0, busy_until - t); };
  while (now < end) {
    const std::int64_t launch = now + pacer.Admit(blocks, now);
    for (; launch >= next_sample; next_sample += kSampleNs) {
      const std::int64_t done = completed(next_sample);
      pacer.OnSample(100.0 * static_cast<double>(done - last_completed) / kSampleNs, next_sample);
      last_completed = done;
      if (next_sample == measure_from) measured_from = done;
    }
    const auto cost = static_cast<std::int64_t>(blocks) * ns_per_block;
    busy_until = std::max(launch, busy_until) + cost;
    scheduled += cost;
    now = std::max(launch + 1000, busy_until - 5'000'000);
  }
  return 100.0 * static_cast<double>(completed(end) - measured_from) / static_cast<double>(end - measure_from);
}

TEST(LaunchPacerTest, HoldsAGreedyTaskToItsShare) {
  for (double share : {10.0, 30.0, 50.0, 75.0}) {
    const double achieved = SimulateGreedyTask(share, 6, 3, 1000);
    EXPECT_NEAR(achieved, share, share * 0.1) << "share " << share;
  }
}

TEST(LaunchPacerTest, ConvergesWhateverAKernelCosts) {
  for (std::int64_t ns_per_block : {100, 10'000}) {
    EXPECT_NEAR(SimulateGreedyTask(40, 6, 3, ns_per_block), 40, 4) << ns_per_block << " ns per block";
  }
}

TEST(LaunchPacerTest, LeavesATaskUnderItsShareAlone) {
  LaunchPacer pacer(50);
  pacer.OnSample(0, 0);
  EXPECT_EQ(pacer.Admit(100, 1'000), 0);
  pacer.OnSample(20, 100'000'000);
  EXPECT_FALSE(pacer.limited()) << "a task using 20% of a 50% share is never slowed";
  EXPECT_EQ(pacer.Admit(1e9, 100'000'001), 0);
}

TEST(LaunchPacerTest, ARateThatIsTooLowRisesAgain) {
  LaunchPacer pacer(50);
  pacer.OnSample(0, 0);
  pacer.Admit(1000, 1);
  pacer.OnSample(100, 100'000'000);  // 1000 blocks in 0.1 s made 100%: rate -> 5000/s
  ASSERT_TRUE(pacer.limited());
  const double first = pacer.rate();
  EXPECT_NEAR(first, 5000, 1);
  EXPECT_GT(pacer.Admit(1000, 100'000'001) + pacer.Admit(1000, 100'000'002), 0) << "launches now wait";
  pacer.OnSample(10, 200'000'000);
  EXPECT_GT(pacer.rate(), first);
}

}  // namespace
}  // namespace tessera::vgpu
