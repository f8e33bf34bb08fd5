#include "node/node_metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tessera::node {
namespace {

using ::testing::HasSubstr;

TEST(NodeMetricsTest, GpuTelemetryUsesDcgmNamesAndUnitsAndAttributesSharedGpusPerJob) {
  NodeTelemetry t;
  t.hostname = "gpu-017";
  t.gpus = {{0, "GPU-aaaa", "H100", "NVIDIA H100 80GB HBM3", std::int64_t{80} << 30, "", 0, 0, {}, true}};
  t.samples = {{0, 42.5, std::int64_t{20} << 30, 61, 350}};
  t.last_xid = {{0, 79}};
  t.xid_count = {{0, 2}};
  t.tenants = {{0, "7", "notebook", "research/nlp", "alice", "main-0", 0.25, std::int64_t{20} << 30, std::int64_t{12} << 30},
               {0, "9", "serve", "prod", "bob", "main-0", 0.5, std::int64_t{40} << 30, std::int64_t{8} << 30}};
  const std::string text = RenderNodeMetrics(t);
  const std::string labels = R"(Hostname="gpu-017",UUID="GPU-aaaa",device="nvidia0",gpu="0",modelName="NVIDIA H100 80GB HBM3")";
  EXPECT_THAT(text, HasSubstr("DCGM_FI_DEV_GPU_UTIL{" + labels + "} 42.5"));
  EXPECT_THAT(text, HasSubstr("DCGM_FI_DEV_FB_USED{" + labels + "} 20480"));
  EXPECT_THAT(text, HasSubstr("DCGM_FI_DEV_FB_FREE{" + labels + "} 61440"));
  EXPECT_THAT(text, HasSubstr("DCGM_FI_DEV_GPU_TEMP{" + labels + "} 61"));
  EXPECT_THAT(text, HasSubstr("DCGM_FI_DEV_POWER_USAGE{" + labels + "} 350"));
  EXPECT_THAT(text, HasSubstr("DCGM_FI_DEV_XID_ERRORS{" + labels + "} 79"));
  EXPECT_THAT(text, HasSubstr(R"(tessera_gpu_xid_errors_total{gpu="0",uuid="GPU-aaaa"} 2)"));
  EXPECT_THAT(text, HasSubstr(R"(tessera_gpu_allocation_ratio{gpu="0",job="7",job_name="notebook",queue="research/nlp",task="main-0",user="alice",uuid="GPU-aaaa"} 0.25)"));
  EXPECT_THAT(text, HasSubstr(R"(tessera_gpu_job_memory_used_bytes{gpu="0",job="9",job_name="serve",queue="prod",task="main-0",user="bob",uuid="GPU-aaaa"} 8589934592)"));
}

}  // namespace
}  // namespace tessera::node
