#include "controlplane/lost_work.h"

#include <gtest/gtest.h>

namespace tessera::controlplane {
namespace {

JobRecord PlacedAt(std::int64_t scheduled_ms) {
  JobRecord record;
  record.scheduled_ms = scheduled_ms;
  TaskRecord whole;
  whole.gpus = {0, 1};
  whole.gpu_milli = 1000;
  TaskRecord half;
  half.gpus = {2};
  half.gpu_milli = 500;
  record.tasks = {whole, half};  // 2.5 GPUs
  return record;
}

TEST(LostWorkTest, GpusTimesTheTimeSinceTheLastCheckpoint) {
  JobRecord run = PlacedAt(100'000);
  EXPECT_DOUBLE_EQ(LostGpuSeconds(run, 0, 160'000), 2.5 * 60);  // none: since it was placed
  EXPECT_DOUBLE_EQ(LostGpuSeconds(run, 25, 160'000), 2.5 * 10);  // declared every 25 s: the one at 150 s
  run.checkpoint_ms = 155'000;
  EXPECT_DOUBLE_EQ(LostGpuSeconds(run, 0, 160'000), 2.5 * 5);   // reported: it wins when it is later
  EXPECT_DOUBLE_EQ(LostGpuSeconds(run, 25, 160'000), 2.5 * 5);
  run.checkpoint_ms = 120'000;
  EXPECT_DOUBLE_EQ(LostGpuSeconds(run, 25, 160'000), 2.5 * 10);  // ...and the interval when that is later
}

TEST(LostWorkTest, NothingIsLostWithoutARunOrTime) {
  EXPECT_EQ(LostGpuSeconds(JobRecord{}, 0, 160'000), 0);
  EXPECT_EQ(LostGpuSeconds(PlacedAt(100'000), 0, 100'000), 0);
  EXPECT_EQ(LostGpuSeconds(PlacedAt(100'000), 0, 90'000), 0);  // a clock that went back loses nothing
}

}  // namespace
}  // namespace tessera::controlplane
