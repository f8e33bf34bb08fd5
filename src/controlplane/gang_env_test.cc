#include "controlplane/gang_env.h"

#include <gtest/gtest.h>

namespace tessera::controlplane {
namespace {

TEST(GangEnvTest, RanksNodesAndLocalRanksFollowPlacement) {
  model::Job job;
  job.name = "ddp";
  job.restarts = 2;
  JobRecord record;
  record.attempt = 3;
  record.master_port = 29542;
  // Ranks 0,1 on n1, rank 2 on n2, rank 3 on n1.
  for (const char* node : {"n1", "n1", "n2", "n1"}) {
    TaskRecord t;
    t.node = node;
    t.name = "worker-" + std::to_string(record.tasks.size());
    record.tasks.push_back(t);
  }
  const auto address = [](const std::string& node) { return node == "n1" ? std::string("10.0.0.1") : std::string("10.0.0.2"); };
  auto rank2 = GangEnvironment(job, 42, "research", record, 2, address, "s3cret");
  EXPECT_EQ(rank2["MASTER_ADDR"], "10.0.0.1");
  EXPECT_EQ(rank2["MASTER_PORT"], "29542");
  EXPECT_EQ(rank2["WORLD_SIZE"], "4");
  EXPECT_EQ(rank2["RANK"], "2");
  EXPECT_EQ(rank2["LOCAL_RANK"], "0");
  EXPECT_EQ(rank2["LOCAL_WORLD_SIZE"], "1");
  EXPECT_EQ(rank2["NODE_RANK"], "1");
  EXPECT_EQ(rank2["NNODES"], "2");
  EXPECT_EQ(rank2["PET_NODE_RANK"], "1");
  EXPECT_EQ(rank2["PET_MASTER_ADDR"], "10.0.0.1");
  EXPECT_EQ(rank2["TESSERA_RESTART_COUNT"], "2");
  EXPECT_EQ(rank2["TESSERA_ATTEMPT"], "3");
  EXPECT_EQ(rank2["TESSERA_NODES"], "n1,n2");
  EXPECT_EQ(rank2["TESSERA_NODE_ADDRESSES"], "10.0.0.1,10.0.0.2");
  EXPECT_EQ(rank2["TESSERA_STEP_SECRET"], "s3cret");
  auto rank3 = GangEnvironment(job, 42, "research", record, 3, address, "s3cret");
  EXPECT_EQ(rank3["LOCAL_RANK"], "2");
  EXPECT_EQ(rank3["LOCAL_WORLD_SIZE"], "3");
  EXPECT_EQ(rank3["NODE_RANK"], "0");
  EXPECT_EQ(rank3["TESSERA_TASK_NAME"], "worker-3");
}

}  // namespace
}  // namespace tessera::controlplane
