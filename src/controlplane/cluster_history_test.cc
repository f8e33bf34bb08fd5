#include "controlplane/cluster_history.h"

#include <gtest/gtest.h>

namespace tessera::controlplane {
namespace {

TEST(ClusterHistory, OneSamplePerIntervalTheNewestKept) {
  ClusterHistory history(std::chrono::milliseconds(1000), 3);
  EXPECT_TRUE(history.Due(0));
  for (std::int64_t t = 0; t < 5000; t += 1000) {
    ASSERT_TRUE(history.Due(t));
    ClusterSample sample;
    sample.time_ms = t;
    sample.allocated = static_cast<double>(t) / 1000;
    history.Add(sample);
    EXPECT_FALSE(history.Due(t + 999));
  }
  const nlohmann::json all = history.ToJson(0);
  EXPECT_EQ(all["intervalMs"], 1000);
  ASSERT_EQ(all["samples"].size(), 3u);
  EXPECT_EQ(all["samples"][0]["time"], 2000);
  EXPECT_EQ(all["samples"][2]["allocated"], 4.0);
  EXPECT_EQ(history.ToJson(3500)["samples"].size(), 1u);
}

}  // namespace
}  // namespace tessera::controlplane
