#include "node/health/gpu_health.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tessera::node {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

GpuFault Xid(int gpu, std::int64_t code) { return {gpu, GpuFaultKind::kXid, code, ""}; }

TEST(ClassifyFault, TheDocumentedTable) {
  EXPECT_EQ(ClassifyFault(Xid(0, 13)), FaultClass::kApplication);
  EXPECT_EQ(ClassifyFault(Xid(0, 31)), FaultClass::kApplication);
  EXPECT_EQ(ClassifyFault(Xid(0, 48)), FaultClass::kReset);
  EXPECT_EQ(ClassifyFault(Xid(0, 74)), FaultClass::kReset);
  EXPECT_EQ(ClassifyFault(Xid(0, 79)), FaultClass::kHardware);
  EXPECT_EQ(ClassifyFault(Xid(0, 64)), FaultClass::kHardware);
  EXPECT_EQ(ClassifyFault(Xid(0, 62)), FaultClass::kUnknown);
  EXPECT_EQ(ClassifyFault({0, GpuFaultKind::kEccDoubleBit, 0, ""}), FaultClass::kReset);
  EXPECT_EQ(ClassifyFault({0, GpuFaultKind::kEccSingleBit, 0, ""}), FaultClass::kIgnore);
}

TEST(GpuHealth, ApplicationAndUnknownFaultsKeepTheGpuInService) {
  GpuHealth health;
  EXPECT_EQ(health.Observe(Xid(1, 13), 0), FaultClass::kApplication);
  EXPECT_EQ(health.Observe(Xid(1, 62), 0), FaultClass::kUnknown);
  EXPECT_THAT(health.outages(), IsEmpty());
}

TEST(GpuHealth, AResetClassGpuReturnsAfterAPassingCheck) {
  GpuHealth health({.recheck_after = 60, .flaps_to_hardware = 3, .flap_window = 3600});
  EXPECT_EQ(health.Observe(Xid(2, 48), 0), FaultClass::kReset);
  ASSERT_EQ(health.outages().size(), 1u);
  EXPECT_THAT(health.outages().at(2).reason, HasSubstr("Xid 48: double-bit ECC error (reset"));
  EXPECT_THAT(health.DueForCheck(59), IsEmpty());
  EXPECT_THAT(health.DueForCheck(60), ElementsAre(2));
  health.RecordCheck(2, Status(StatusCode::kFailedPrecondition, "NVML: GPU is lost"), 60);
  EXPECT_EQ(health.outages().at(2).failed_checks, 1);
  EXPECT_THAT(health.DueForCheck(119), IsEmpty());  // the next check one interval later
  health.RecordCheck(2, Status::Ok(), 120);
  EXPECT_THAT(health.outages(), IsEmpty());
}

TEST(GpuHealth, AHardwareClassGpuStaysOut) {
  GpuHealth health;
  EXPECT_EQ(health.Observe(Xid(0, 79), 0), FaultClass::kHardware);
  EXPECT_THAT(health.DueForCheck(kNever - 1), IsEmpty());
  health.RecordCheck(0, Status::Ok(), 100);
  ASSERT_EQ(health.outages().size(), 1u);
  EXPECT_THAT(health.outages().at(0).reason, HasSubstr("out until the agent restarts"));
  health.Observe(Xid(0, 48), 200);  // a later reset-class fault does not soften it
  EXPECT_EQ(health.outages().at(0).fault_class, FaultClass::kHardware);
}

TEST(GpuHealth, AGpuThatKeepsFailingBecomesHardwareClass) {
  GpuHealth health({.recheck_after = 10, .flaps_to_hardware = 3, .flap_window = 3600});
  for (Time t : {0, 1000, 2000}) {
    const FaultClass c = health.Observe(Xid(3, 48), t);
    if (t < 2000) {
      EXPECT_EQ(c, FaultClass::kReset);
      health.RecordCheck(3, Status::Ok(), t + 10);
    } else {
      EXPECT_EQ(c, FaultClass::kHardware);
    }
  }
  EXPECT_THAT(health.outages().at(3).reason, HasSubstr("3 resets within 60 min"));
  // Departures older than the window are forgotten.
  GpuHealth spaced({.recheck_after = 10, .flaps_to_hardware = 3, .flap_window = 3600});
  for (Time t : {0, 4000, 8000}) {
    EXPECT_EQ(spaced.Observe(Xid(3, 48), t), FaultClass::kReset);
    spaced.RecordCheck(3, Status::Ok(), t + 10);
  }
}

}  // namespace
}  // namespace tessera::node
