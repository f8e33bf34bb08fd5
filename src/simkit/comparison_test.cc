#include "simkit/comparison.h"

#include <gtest/gtest.h>

namespace tessera::simkit {
namespace {

using nlohmann::json;

const json kRunning = {{"avg_wait_s", 100.0}, {"preemptions", 4}, {"gpu_alloc_ratio", 0.9},
                       {"queues", {{"research/nlp", {{"avg_wait_s", 50.0}}}}}};

std::vector<Breach> Check(const std::vector<std::string>& texts, const json& proposed) {
  std::vector<Threshold> thresholds;
  for (const std::string& text : texts) {
    Result<Threshold> t = ParseThreshold(text);
    EXPECT_TRUE(t.ok()) << text << ": " << t.status().message();
    thresholds.push_back(*t);
  }
  Result<std::vector<Breach>> breaches = CheckThresholds(thresholds, kRunning, proposed);
  EXPECT_TRUE(breaches.ok()) << breaches.status().message();
  return breaches.ok() ? *breaches : std::vector<Breach>{};
}

TEST(ComparisonTest, ARelativeBoundIsTheRunningValuePlusTheChange) {
  json proposed = kRunning;
  proposed["avg_wait_s"] = 125.0;  // exactly +25%: not above it
  EXPECT_TRUE(Check({"avg_wait_s>+25%"}, proposed).empty());
  proposed["avg_wait_s"] = 126.0;
  const std::vector<Breach> breaches = Check({"avg_wait_s>+25%"}, proposed);
  ASSERT_EQ(breaches.size(), 1u);
  EXPECT_EQ(breaches[0].threshold, "avg_wait_s>+25%");
  EXPECT_DOUBLE_EQ(breaches[0].running, 100);
  EXPECT_DOUBLE_EQ(breaches[0].proposed, 126);
  EXPECT_DOUBLE_EQ(breaches[0].bound, 125);
  proposed["avg_wait_s"] = 125.0;
  EXPECT_EQ(Check({"avg_wait_s>=+25%"}, proposed).size(), 1u);
}

TEST(ComparisonTest, DeltasAbsoluteBoundsAndFallsAreChecked) {
  json proposed = kRunning;
  proposed["preemptions"] = 7;
  proposed["gpu_alloc_ratio"] = 0.87;
  EXPECT_EQ(Check({"preemptions>+2"}, proposed).size(), 1u);
  EXPECT_TRUE(Check({"preemptions>+3"}, proposed).empty());
  EXPECT_EQ(Check({"preemptions>=7"}, proposed).size(), 1u);
  EXPECT_EQ(Check({"gpu_alloc_ratio<-2%"}, proposed).size(), 1u);  // 0.87 < 0.882
  EXPECT_TRUE(Check({"gpu_alloc_ratio<-5%"}, proposed).empty());
  EXPECT_TRUE(Check({"gpu_alloc_ratio<=0.8"}, proposed).empty());
}

TEST(ComparisonTest, AQueuesFigureIsNamedByItsPath) {
  json proposed = kRunning;
  proposed["queues"]["research/nlp"]["avg_wait_s"] = 80.0;
  EXPECT_EQ(Check({"queues.research/nlp.avg_wait_s>+50%"}, proposed).size(), 1u);
  Result<double> missing = MetricValue(kRunning, "queues.prod.avg_wait_s");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("no queue 'prod'"), std::string::npos) << missing.status().message();
}

TEST(ComparisonTest, AnUnknownMetricNamesTheKnownOnes) {
  Result<double> value = MetricValue(kRunning, "avg_wiat_s");
  ASSERT_FALSE(value.ok());
  EXPECT_NE(value.status().message().find("avg_wait_s, gpu_alloc_ratio, preemptions"), std::string::npos) << value.status().message();
}

TEST(ComparisonTest, MalformedThresholdsSayWhatIsExpected) {
  for (const char* bad : {"avg_wait_s", ">10", "avg_wait_s>", "avg_wait_s>10%", "avg_wait_s>+ten%", "avg_wait_s>+%", "avg_wait_s>1e999"}) {
    Result<Threshold> t = ParseThreshold(bad);
    EXPECT_FALSE(t.ok()) << bad;
  }
  EXPECT_NE(ParseThreshold("avg_wait_s>10%").status().message().find("write +10% or -10%"), std::string::npos);
}

}  // namespace
}  // namespace tessera::simkit
