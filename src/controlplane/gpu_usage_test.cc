#include "controlplane/gpu_usage.h"

#include <gtest/gtest.h>

namespace tessera::controlplane {
namespace {

IdlePolicy Policy() {
  IdlePolicy p;
  p.threshold_percent = 5;
  p.window_ms = 60'000;
  p.max_gap_ms = 10'000;
  return p;
}

TEST(GpuUsageTest, ABusyRunAccruesGpuTimeButNoIdleTime) {
  TaskMeter m;
  double gpu = 0, idle = 0;
  for (std::int64_t t = 1000; t <= 101'000; t += 1000) {
    const UsageDelta d = Observe(m, 8, 90, t, Policy());
    gpu += d.gpu_seconds;
    idle += d.idle_gpu_seconds;
  }
  EXPECT_DOUBLE_EQ(gpu, 8 * 100.0);
  EXPECT_DOUBLE_EQ(idle, 0);
}

TEST(GpuUsageTest, IdlenessCountsOnceItLastsTheWindowAndThenAllOfIt) {
  TaskMeter m;
  double idle = 0;
  Observe(m, 2, 50, 0, Policy());
  for (std::int64_t t = 1000; t <= 59'000; t += 1000) idle += Observe(m, 2, 0, t, Policy()).idle_gpu_seconds;
  EXPECT_EQ(idle, 0) << "59 s under the threshold: not yet idle";
  idle += Observe(m, 2, 0, 60'000, Policy()).idle_gpu_seconds;
  EXPECT_DOUBLE_EQ(idle, 2 * 60.0) << "the window reached: the whole streak counts";
  idle += Observe(m, 2, 0, 61'000, Policy()).idle_gpu_seconds;
  EXPECT_DOUBLE_EQ(idle, 2 * 61.0);
  EXPECT_EQ(IdleFor(m, 61'000), 61'000);
}

TEST(GpuUsageTest, ABurstOfWorkEndsTheStreak) {
  TaskMeter m;
  Observe(m, 1, 0, 0, Policy());
  Observe(m, 1, 0, 30'000, Policy());  // a gap, counted as 10 s at most
  Observe(m, 1, 80, 31'000, Policy());
  EXPECT_EQ(IdleFor(m, 31'000), 0);
  double idle = 0;
  for (std::int64_t t = 32'000; t <= 80'000; t += 1000) idle += Observe(m, 1, 0, t, Policy()).idle_gpu_seconds;
  EXPECT_EQ(idle, 0) << "a new streak of 49 s";
}

TEST(GpuUsageTest, ALongGapIsNotGuessed) {
  TaskMeter m;
  Observe(m, 4, 90, 0, Policy());
  EXPECT_DOUBLE_EQ(Observe(m, 4, 90, 3'600'000, Policy()).gpu_seconds, 4 * 10.0) << "at most max_gap";
}

}  // namespace
}  // namespace tessera::controlplane
