#include "model/feasibility.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "base/quantity.h"
#include "model/test_nodes.h"

namespace tessera::model {
namespace {

using ::testing::HasSubstr;


// Two leaves of two 8 x H100 nodes; a leaf with one 4 x A100 (40Gi) node; and
// one CPU-only node with more CPUs and memory than any GPU node.
Cluster TestCluster() {
  NodeSpec cpu = MakeNode("cpu", 0, "leaf-cpu");
  cpu.cpu_milli = 256'000;
  cpu.memory = 2048 * kGiB;
  Result<Cluster> cluster =
      Cluster::Build({MakeNode("h0", 8, "leaf-0"), MakeNode("h1", 8, "leaf-0"), MakeNode("h2", 8, "leaf-1"),
                      MakeNode("h3", 8, "leaf-1"), MakeNode("a0", 4, "leaf-2", "spine-0", "A100", 40 * kGiB), cpu});
  EXPECT_TRUE(cluster.ok()) << cluster.status().message();
  return std::move(cluster).value();
}

QueueTree TestQueues() {
  Result<QueueTree> tree = QueueTree::Build({
      {"default", 8'000, 16'000, 1.0},
      {"production", 16'000, kUnlimited, 1.0},
      {"research", 24'000, 24'000, 1.0},
      {"research/nlp", 8'000, kUnlimited, 1.0},
      {"shared", 8'000, kUnlimited, 1.0, 4'000},  // one user at most 4 GPUs
  });
  EXPECT_TRUE(tree.ok()) << tree.status().message();
  return std::move(tree).value();
}

Job MakeJob(std::int32_t replicas, std::int64_t gpu_milli, std::int64_t gpu_memory = 0, std::string model = "") {
  Job job;
  job.name = "job";
  TaskGroup group;
  group.name = "worker";
  group.replicas = replicas;
  group.min_replicas = replicas;
  group.request.gpu_milli = gpu_milli;
  group.request.gpu_memory = gpu_memory;
  group.request.cpu_milli = 8'000;
  group.request.memory = 64 * kGiB;
  group.request.gpu_model = std::move(model);
  job.groups.push_back(group);
  return job;
}

class FeasibilityTest : public ::testing::Test {
 protected:
  Status Check(Job job, const std::string& queue = "production") {
    job.queue = queues_.Find(queue);
    return CheckFeasible(job, cluster_, queues_);
  }
  std::string Infeasible(const Job& job, const std::string& queue = "production") {
    const Status status = Check(job, queue);
    EXPECT_EQ(status.code(), StatusCode::kInfeasible) << status.message();
    return status.message();
  }

  Cluster cluster_ = TestCluster();
  QueueTree queues_ = TestQueues();
};

TEST_F(FeasibilityTest, FeasibleJobsPass) {
  EXPECT_TRUE(Check(MakeJob(1, 1000)).ok());
  EXPECT_TRUE(Check(MakeJob(4, 8000)).ok());                         // every H100 node
  EXPECT_TRUE(Check(MakeJob(1, 500, 20 * kGiB)).ok());               // half a GPU
  EXPECT_TRUE(Check(MakeJob(1, 4000, 40 * kGiB, "A100")).ok());      // the A100 node
  EXPECT_TRUE(Check(MakeJob(1, 8000, 80 * kGiB, "H100")).ok());
  EXPECT_TRUE(Check(MakeJob(3, 0)).ok());                            // CPU only
  Job nothing = MakeJob(3, 0);                                       // asks for nothing at all
  nothing.groups[0].request.cpu_milli = 0;
  nothing.groups[0].request.memory = 0;
  EXPECT_TRUE(Check(nothing).ok());
  Job leaf = MakeJob(2, 8000);
  leaf.topology = {TopologyLevel::kLeaf, true};
  EXPECT_TRUE(Check(leaf).ok());
  Job nvlink = MakeJob(1, 8000);
  nvlink.topology = {TopologyLevel::kNvlink, true};
  EXPECT_TRUE(Check(nvlink).ok());
  // Preferred topology never makes a job infeasible.
  Job spread = MakeJob(4, 8000);
  spread.topology = {TopologyLevel::kNode, false};
  EXPECT_TRUE(Check(spread).ok());
  // A gang that may start with fewer members is judged on its minimum.
  Job elastic = MakeJob(6, 8000);
  elastic.groups[0].min_replicas = 4;
  EXPECT_TRUE(Check(elastic).ok());
}

TEST_F(FeasibilityTest, NoTasks) {
  Job job = MakeJob(1, 1000);
  job.groups.clear();
  EXPECT_THAT(Infeasible(job), HasSubstr("spec.tasks: a job needs at least one task"));
}

TEST_F(FeasibilityTest, TooManyGpusPerTask) {
  EXPECT_THAT(Infeasible(MakeJob(1, 9000)),
              HasSubstr("spec.tasks[0].resources.gpus: 9 GPUs per task, but the largest node has 8"));
  EXPECT_THAT(Infeasible(MakeJob(1, 8000, 0, "A100")),
              HasSubstr("spec.tasks[0].resources.gpus: 8 GPUs per task, but the largest node with A100 GPUs has 4"));
}

TEST_F(FeasibilityTest, TooMuchGpuMemory) {
  EXPECT_THAT(Infeasible(MakeJob(1, 1000, 100 * kGiB)),
              HasSubstr("spec.tasks[0].resources.gpuMemory: asks 100Gi per GPU, but the largest GPU has 80Gi"));
  EXPECT_THAT(Infeasible(MakeJob(1, 250, 96 * kGiB)),
              HasSubstr("spec.tasks[0].resources.gpuMemory: asks 96Gi per GPU, but the largest GPU has 80Gi"));
  EXPECT_THAT(Infeasible(MakeJob(1, 500, 60 * kGiB, "A100")),
              HasSubstr("resources.gpuMemory: asks 60Gi per GPU, but the largest GPU with A100 GPUs has 40Gi"));
}

TEST_F(FeasibilityTest, TooMuchCpuOrMemoryOrNotAllTogether) {
  Job cpus = MakeJob(1, 0);
  cpus.groups[0].request.cpu_milli = 512'000;
  EXPECT_THAT(Infeasible(cpus), HasSubstr("spec.tasks[0].resources.cpus: asks 512 CPUs, but the largest node has 256"));
  Job memory = MakeJob(1, 0);
  memory.groups[0].request.memory = 4096 * kGiB;
  EXPECT_THAT(Infeasible(memory), HasSubstr("spec.tasks[0].resources.memory: asks 4Ti, but the largest node has 2Ti"));
  // 8 GPUs fit on a GPU node and 128 CPUs on the CPU node, but never both on one.
  Job both = MakeJob(1, 8000);
  both.groups[0].request.cpu_milli = 128'000;
  EXPECT_THAT(Infeasible(both), HasSubstr("spec.tasks[0].resources: no single node has 8 GPUs, 128 CPUs and 64Gi of "
                                          "memory together"));
}

TEST_F(FeasibilityTest, UnknownGpuModel) {
  EXPECT_THAT(Infeasible(MakeJob(1, 1000, 0, "V100")),
              HasSubstr("spec.tasks[0].resources.gpuModel: no node has GPU model 'V100' (this cluster has H100, A100)"));
}

TEST_F(FeasibilityTest, GangLargerThanTheCluster) {
  EXPECT_THAT(Infeasible(MakeJob(5, 8000)),
              HasSubstr("spec.tasks[0].replicas: the gang needs 5 such tasks at once, but the whole cluster holds only 4"));
  // Fractions: an 80Gi H100 holds two 40Gi halves, a 40Gi A100 one: 32 * 2 + 4 = 68.
  Job halves = MakeJob(68, 500, 40 * kGiB);
  halves.groups[0].request.cpu_milli = 1000;
  halves.groups[0].request.memory = kGiB;
  EXPECT_TRUE(Check(halves).ok());
  halves.groups[0].replicas = halves.groups[0].min_replicas = 69;
  EXPECT_THAT(Infeasible(halves), HasSubstr("spec.tasks[0].replicas: the gang needs 69 such tasks at once, but the "
                                            "whole cluster holds only 68"));
}

// Two groups that each fit in a node but not together: 6 + 4 GPUs in one 8-GPU node.
TEST_F(FeasibilityTest, GpuModelAlternatives) {
  EXPECT_TRUE(Check(MakeJob(1, 8000, 0, "A100|H100")).ok());   // 8 GPUs: only an H100 node has them
  EXPECT_THAT(Infeasible(MakeJob(1, 8000, 0, "A100")), HasSubstr("the largest node with A100 GPUs has 4"));
  EXPECT_THAT(Infeasible(MakeJob(1, 1000, 0, "H100|B200")),
              HasSubstr("spec.tasks[0].resources.gpuModel: no node has GPU model 'B200' (this cluster has H100, A100"));
}

TEST_F(FeasibilityTest, GroupsThatFitAloneButNotTogether) {
  Job job = MakeJob(1, 6000);
  TaskGroup second = job.groups[0];
  second.name = "helper";
  second.request.gpu_milli = 4000;
  job.groups.push_back(second);
  job.topology = {TopologyLevel::kNode, true};
  EXPECT_THAT(Infeasible(job), HasSubstr("the gang needs 10 GPUs inside one node, but the largest node has 8 GPUs"));
  job.groups[1].request.gpu_milli = 2000;  // 6 + 2 fits
  EXPECT_TRUE(Check(job).ok());
}

TEST_F(FeasibilityTest, RequiredTopologyLevelSmallerThanTheGang) {
  Job leaf = MakeJob(3, 8000);
  leaf.topology = {TopologyLevel::kLeaf, true};
  EXPECT_THAT(Infeasible(leaf), HasSubstr("spec.topology: the gang needs 24 GPUs inside one leaf, but the largest leaf "
                                          "has 16 GPUs (use mode: preferred to allow spreading)"));
  Job node = MakeJob(2, 8000);
  node.topology = {TopologyLevel::kNode, true};
  EXPECT_THAT(Infeasible(node), HasSubstr("spec.topology: the gang needs 16 GPUs inside one node, but the largest node "
                                          "has 8 GPUs"));
  // On a cluster without multi-node NVLink, a domain is inside one node.
  Job nvlink = MakeJob(2, 4000);
  nvlink.topology = {TopologyLevel::kNvlink, true};
  EXPECT_TRUE(Check(nvlink).ok());
  nvlink.groups[0].replicas = nvlink.groups[0].min_replicas = 3;
  EXPECT_THAT(Infeasible(nvlink), HasSubstr("spec.topology: the gang needs 12 GPUs inside one nvlink-domain, but the "
                                            "largest nvlink-domain has 8 GPUs"));
}

TEST(FeasibilityNvlinkTest, NodeLocalDomainsSmallerThanTheNode) {
  NodeSpec split = MakeNode("split", 8, "leaf-0");
  split.nvlink_domains = 2;  // two NVLink islands of 4 GPUs
  const Cluster cluster = *Cluster::Build({split});
  const QueueTree queues = QueueTree::Default(8000);
  Job job = MakeJob(1, 8000);
  job.queue = queues.Find("default");
  job.topology = {TopologyLevel::kNvlink, true};
  Status status = CheckFeasible(job, cluster, queues);
  EXPECT_EQ(status.code(), StatusCode::kInfeasible);
  EXPECT_THAT(status.message(), HasSubstr("the gang needs 8 GPUs inside one nvlink-domain, but the largest "
                                          "nvlink-domain has 4 GPUs"));
  job = MakeJob(1, 4000);
  job.queue = queues.Find("default");
  job.topology = {TopologyLevel::kNvlink, true};
  EXPECT_TRUE(CheckFeasible(job, cluster, queues).ok());
}

TEST(FeasibilityNvlinkTest, MultiNodeDomainsAndNodeLocalDomainsTogether) {
  // An NVL-style rack of two 4 x GB200 nodes, next to a DGX whose 8 H100s share one NVSwitch.
  NodeSpec a = MakeNode("gb-0", 4, "rack-0", "spine-0", "GB200", 192 * kGiB);
  NodeSpec b = MakeNode("gb-1", 4, "rack-0", "spine-0", "GB200", 192 * kGiB);
  a.nvlink_group = b.nvlink_group = "nvl-0";
  const Cluster cluster = *Cluster::Build({a, b, MakeNode("dgx", 8, "leaf-1")});
  const QueueTree queues = QueueTree::Default(16'000);
  const auto check = [&](Job job) {
    job.queue = queues.Find("default");
    job.topology = {TopologyLevel::kNvlink, true};
    return CheckFeasible(job, cluster, queues);
  };
  EXPECT_TRUE(check(MakeJob(2, 4000, 0, "GB200")).ok());  // across the rack's two nodes
  EXPECT_TRUE(check(MakeJob(1, 8000, 0, "H100")).ok());   // inside the DGX
  EXPECT_TRUE(check(MakeJob(2, 4000)).ok());
  const Status too_big = check(MakeJob(3, 4000));
  EXPECT_EQ(too_big.code(), StatusCode::kInfeasible);
  EXPECT_THAT(too_big.message(), HasSubstr("the gang needs 12 GPUs inside one nvlink-domain, but the largest "
                                           "nvlink-domain has 8 GPUs"));
}

TEST_F(FeasibilityTest, QueueLimits) {
  EXPECT_THAT(Infeasible(MakeJob(3, 8000), "default"),
              HasSubstr("metadata.queue: queue 'default' is limited to 16 GPUs, but the gang needs 24"));
  // An ancestor's limit binds too.
  EXPECT_THAT(Infeasible(MakeJob(4, 8000), "research/nlp"),
              HasSubstr("metadata.queue: queue 'research' is limited to 24 GPUs, but the gang needs 32"));
  EXPECT_TRUE(Check(MakeJob(2, 8000), "default").ok());
}

TEST_F(FeasibilityTest, AGangLargerThanTheUserLimitNeverFits) {
  EXPECT_THAT(Infeasible(MakeJob(1, 8000), "shared"),
              HasSubstr("metadata.queue: queue 'shared' allows one user 4 GPUs, but the gang needs 8"));
  EXPECT_TRUE(Check(MakeJob(2, 2000), "shared").ok());
}

TEST_F(FeasibilityTest, NonPreemptibleJobsMustFitTheGuarantee) {
  Job job = MakeJob(3, 8000);
  job.preemptible = false;
  EXPECT_THAT(Infeasible(job), HasSubstr("spec.preemptible: a non-preemptible job must fit in its queue's guarantee, "
                                         "but queue 'production' guarantees 16 GPUs and the gang needs 24"));
  job.preemptible = true;
  EXPECT_TRUE(Check(job).ok());  // preemptible: it may borrow beyond the guarantee
  Job fits = MakeJob(2, 8000);
  fits.preemptible = false;
  EXPECT_TRUE(Check(fits).ok());
  // research/nlp guarantees 8 of research's 24.
  Job nlp = MakeJob(2, 8000);
  nlp.preemptible = false;
  EXPECT_THAT(Infeasible(nlp, "research/nlp"), HasSubstr("queue 'research/nlp' guarantees 8 GPUs"));
}

}  // namespace
}  // namespace tessera::model

namespace tessera::model {
namespace {

TEST_F(FeasibilityTest, OnePerNodeCountsNodesNotGpus) {
  // Five nodes with GPUs (four H100, one A100): six 1-GPU tasks fit by GPUs, not one per node.
  Job spread = MakeJob(6, 1000);
  spread.groups[0].one_per_node = true;
  EXPECT_THAT(Infeasible(spread), HasSubstr("spec.tasks[0].replicas: the gang needs 6 such tasks at once, one per node, but the whole cluster holds only 5"));
  spread.groups[0].replicas = spread.groups[0].min_replicas = 5;
  EXPECT_TRUE(Check(spread).ok());
  Job leaf = MakeJob(3, 1000);
  leaf.groups[0].one_per_node = true;
  leaf.topology = {TopologyLevel::kLeaf, true};  // two nodes a leaf
  EXPECT_EQ(Check(leaf).code(), StatusCode::kInfeasible);
}

}  // namespace
}  // namespace tessera::model
