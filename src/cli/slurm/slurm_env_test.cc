#include "cli/slurm/slurm_env.h"

#include <gtest/gtest.h>

#include "cli/slurm/step_protocol.h"

namespace tessera::cli::slurm {
namespace {

Environment AgentEnvironment() {
  return {{"TESSERA_JOB_ID", "42"},        {"TESSERA_NODES", "gpu-001,gpu-002,gpu-004"},
          {"TESSERA_NODE_ADDRESSES", "10.0.0.1,10.0.0.2,10.0.0.4"}, {"TESSERA_STEP_SECRET", "s3cret"},
          {"NODE_RANK", "0"},              {"TESSERA_ATTEMPT", "2"},
          {"CUDA_VISIBLE_DEVICES", "0,1,2,3"}, {"SLURM_JOB_NAME", "train"},
          {"SLURM_JOB_USER", "alice"}};
}

TEST(SlurmEnvTest, ReadsTheAllocationAndNamesWhatIsMissing) {
  const Result<AllocationView> a = ReadAllocation(AgentEnvironment());
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->nodes.size(), 3u);
  EXPECT_EQ(a->addresses[2], "10.0.0.4");
  EXPECT_EQ(a->attempt, 2);
  Environment old = AgentEnvironment();
  old.erase("TESSERA_STEP_SECRET");
  EXPECT_NE(ReadAllocation(old).status().message().find("TESSERA_STEP_SECRET is not set"), std::string::npos);
  Environment bad = AgentEnvironment();
  bad["NODE_RANK"] = "3";
  EXPECT_EQ(ReadAllocation(bad).status().message(), "NODE_RANK '3' is not a node of TESSERA_NODES");
}

TEST(SlurmEnvTest, BatchEnvironment) {
  const Environment env = AgentEnvironment();
  const Environment batch = BatchEnvironment(env, *ReadAllocation(env));
  EXPECT_EQ(batch.at("SLURM_JOB_ID"), "42");
  EXPECT_EQ(batch.at("SLURM_JOB_NODELIST"), "gpu-[001-002,004]");
  EXPECT_EQ(batch.at("SLURM_NODEID"), "0");
  EXPECT_EQ(batch.at("SLURMD_NODENAME"), "gpu-001");
  EXPECT_EQ(batch.at("SLURM_GPUS_ON_NODE"), "4");
  EXPECT_EQ(batch.at("SLURM_JOB_GPUS"), "0,1,2,3");
  EXPECT_EQ(batch.at("ENVIRONMENT"), "BATCH");
}

TEST(SlurmEnvTest, OutputPatterns) {
  Environment env = AgentEnvironment();
  for (auto& [k, v] : BatchEnvironment(env, *ReadAllocation(env))) env[k] = v;
  EXPECT_EQ(ExpandOutputPattern("logs/%x-%j.out", env), "logs/train-42.out");
  EXPECT_EQ(ExpandOutputPattern("%A_%a.%N.%u.log", env), "42_4294967294.gpu-001.alice.log");
  EXPECT_EQ(ExpandOutputPattern("%5j-%%-%n-%t-%s-%q", env), "00042-%-0-0-batch-%q");
  EXPECT_EQ(ExpandOutputPattern("trailing%", env), "trailing%");
}

TEST(SlurmEnvTest, AnArrayElementGetsSlurmsArrayVariablesAndPatterns) {
  Environment env = AgentEnvironment();
  env["TESSERA_ARRAY_JOB_ID"] = "40";
  env["TESSERA_ARRAY_INDEX"] = "3";
  env["TESSERA_ARRAY_COUNT"] = "10";
  env["TESSERA_ARRAY_MIN"] = "0";
  env["TESSERA_ARRAY_MAX"] = "9";
  env["TESSERA_ARRAY_STEP"] = "1";
  for (auto& [k, v] : BatchEnvironment(env, *ReadAllocation(env))) env[k] = v;
  EXPECT_EQ(env.at("SLURM_JOB_ID"), "42");  // the element's own id, as Slurm gives each array task
  EXPECT_EQ(env.at("SLURM_ARRAY_JOB_ID"), "40");
  EXPECT_EQ(env.at("SLURM_ARRAY_TASK_ID"), "3");
  EXPECT_EQ(env.at("SLURM_ARRAY_TASK_COUNT"), "10");
  EXPECT_EQ(env.at("SLURM_ARRAY_TASK_MIN"), "0");
  EXPECT_EQ(env.at("SLURM_ARRAY_TASK_MAX"), "9");
  EXPECT_EQ(env.at("SLURM_ARRAY_TASK_STEP"), "1");
  EXPECT_EQ(ExpandOutputPattern("out-%A_%a.txt", env), "out-40_3.txt");
  EXPECT_EQ(ExpandOutputPattern("%j-%3a", env), "42-003");
}

TEST(SlurmEnvTest, StepLayouts) {
  // The job's tasks over its nodes by default.
  StepLayout l = *LayoutStep({}, {}, {}, 3, 6);
  EXPECT_EQ(l.node_of_task, (std::vector<std::int32_t>{0, 0, 1, 1, 2, 2}));
  // Block: the first nodes take one more.
  l = *LayoutStep(5, 2, {}, 3, 6);
  EXPECT_EQ(l.node_of_task, (std::vector<std::int32_t>{0, 0, 0, 1, 1}));
  l = *LayoutStep({}, 2, {}, 3, 6);  // -N 2 alone: a task per node
  EXPECT_EQ(l.node_of_task, (std::vector<std::int32_t>{0, 1}));
  l = *LayoutStep({}, {}, 2, 3, 6);  // --ntasks-per-node=2 on every node
  EXPECT_EQ(l.node_of_task.size(), 6u);
  l = *LayoutStep(1, {}, {}, 3, 6);  // srun -n 1: one node
  EXPECT_EQ(l.nodes, 1);
  EXPECT_EQ(LayoutStep({}, 4, {}, 3, 6).status().message(), "-N 4: the allocation has only 3 nodes");
  EXPECT_EQ(LayoutStep(1, 2, {}, 3, 6).status().message(), "1 tasks cannot cover 2 nodes");
  EXPECT_EQ(LayoutStep(7, 3, 2, 3, 6).status().message(), "--ntasks-per-node=2 on 3 nodes cannot hold 7 tasks");
}

TEST(SlurmEnvTest, SrunTaskVariables) {
  const AllocationView a = *ReadAllocation(AgentEnvironment());
  const StepLayout l = *LayoutStep(4, 2, {}, 3, 6);
  const Environment t3 = SrunTaskEnvironment(l, 3, 2, a, "29542");
  EXPECT_EQ(t3.at("SLURM_PROCID"), "3");
  EXPECT_EQ(t3.at("RANK"), "3");
  EXPECT_EQ(t3.at("SLURM_LOCALID"), "1");
  EXPECT_EQ(t3.at("LOCAL_RANK"), "1");
  EXPECT_EQ(t3.at("SLURM_NODEID"), "1");
  EXPECT_EQ(t3.at("SLURM_STEP_ID"), "2");
  EXPECT_EQ(t3.at("WORLD_SIZE"), "4");
  EXPECT_EQ(t3.at("SLURM_STEP_NUM_NODES"), "2");
  EXPECT_EQ(t3.at("SLURM_STEP_NODELIST"), "gpu-[001-002]");
  EXPECT_EQ(t3.at("SLURM_STEP_TASKS_PER_NODE"), "2(x2)");
  EXPECT_EQ(t3.at("MASTER_ADDR"), "10.0.0.1");
  EXPECT_EQ(t3.at("MASTER_PORT"), "29542");
  EXPECT_EQ(t3.at("SLURMD_NODENAME"), "gpu-002");
}

TEST(SlurmEnvTest, NodeLocalVariablesAndPorts) {
  EXPECT_TRUE(NodeLocal("CUDA_VISIBLE_DEVICES"));
  EXPECT_TRUE(NodeLocal("TESSERA_NODE_NAME"));
  EXPECT_FALSE(NodeLocal("PATH"));
  EXPECT_FALSE(NodeLocal("SLURM_JOB_ID"));
  // Ranks of one job never share a port (they may share a host).
  const auto r1 = StepPorts("42", 1, 1), r2 = StepPorts("42", 1, 2);
  for (std::size_t k = 0; k < r1.size(); ++k) {
    EXPECT_NE(r1[k], r2[k]);
    EXPECT_GE(r1[k], 40000);
    EXPECT_LT(r1[k], 60000);
  }
  EXPECT_TRUE(SameSecret("abc", "abc"));
  EXPECT_FALSE(SameSecret("abc", "abd"));
  EXPECT_FALSE(SameSecret("abc", "ab"));
}

}  // namespace
}  // namespace tessera::cli::slurm
