#include "model/cluster.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "base/quantity.h"
#include "base/random.h"
#include "model/test_nodes.h"

namespace tessera::model {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;


// Four 8-GPU nodes: n0, n1 under leaf-0 and n2, n3 under leaf-1, one spine.
Cluster FourNodes() {
  Result<Cluster> cluster = Cluster::Build({MakeNode("n0", 8, "leaf-0"), MakeNode("n1", 8, "leaf-0"),
                                            MakeNode("n2", 8, "leaf-1"), MakeNode("n3", 8, "leaf-1")});
  EXPECT_TRUE(cluster.ok()) << cluster.status().message();
  return std::move(cluster).value();
}

TaskPlacement Whole(const Cluster& cluster, std::int32_t node, std::vector<std::int32_t> locals) {
  TaskPlacement task;
  task.node = NodeId(node);
  for (std::int32_t local : locals) {
    task.gpus.push_back(GpuShare{cluster.node(NodeId(node)).gpu(local), 1000, 0});
  }
  task.cpu_milli = 1000;
  task.memory = kGiB;
  return task;
}

TaskPlacement Fraction(std::int32_t node, GpuId gpu, std::int32_t milli, std::int64_t memory) {
  TaskPlacement task;
  task.node = NodeId(node);
  task.gpus.push_back(GpuShare{gpu, milli, memory});
  return task;
}

std::size_t BucketSize(const Cluster& cluster, std::int32_t free) {
  return cluster.pool(GpuModelId(0)).buckets[free].size();
}

TEST(ClusterTest, BuildIndexesEveryNode) {
  const Cluster cluster = FourNodes();
  EXPECT_EQ(cluster.nodes().size(), 4u);
  EXPECT_EQ(cluster.gpus().size(), 32u);
  EXPECT_EQ(cluster.max_gpus_per_node(), 8);
  EXPECT_EQ(cluster.capacity(), (Resources{32'000, 32 * 80 * kGiB, 4 * 64'000, 4 * 512 * kGiB}));
  const PoolIndex& pool = cluster.pool(GpuModelId(0));
  EXPECT_EQ(pool.model_name, "H100");
  EXPECT_EQ(pool.free_whole, 32);
  EXPECT_EQ(BucketSize(cluster, 8), 4u);
  EXPECT_TRUE(pool.partial.empty());
  EXPECT_EQ(cluster.GroupCount(TopologyLevel::kLeaf), 2);
  EXPECT_EQ(cluster.GroupCount(TopologyLevel::kSpine), 1);
  EXPECT_EQ(cluster.GroupCount(TopologyLevel::kCluster), 1);
  EXPECT_EQ(cluster.GroupCount(TopologyLevel::kNode), 4);
  EXPECT_EQ(cluster.GroupCount(TopologyLevel::kNvlink), 0);
  EXPECT_EQ(cluster.GroupNodesWithFree(TopologyLevel::kLeaf, 0, 8), 2);
  EXPECT_EQ(cluster.GroupNodesWithFree(TopologyLevel::kLeaf, 1, 8), 2);
  EXPECT_EQ(cluster.GroupNodesWithFree(TopologyLevel::kCluster, 0, 8), 4);
  EXPECT_EQ(cluster.GroupOf(NodeId(2), TopologyLevel::kLeaf), 1);
  EXPECT_EQ(cluster.GroupOf(NodeId(2), TopologyLevel::kNvlink), -1);
  EXPECT_EQ(*cluster.FindNode("n3"), NodeId(3));
  EXPECT_FALSE(cluster.FindNode("n9").ok());
  EXPECT_THAT(cluster.AuditIndexes(), IsEmpty());
}

TEST(ClusterTest, AllocateAndReleaseKeepBucketsAndHistogramsExact) {
  Cluster cluster = FourNodes();
  const TaskPlacement three = Whole(cluster, 0, {0, 1, 2});
  cluster.Allocate(three);
  EXPECT_THAT(cluster.AuditIndexes(), IsEmpty());
  EXPECT_EQ(cluster.node(NodeId(0)).free_gpus(), 5);
  EXPECT_EQ(cluster.node(NodeId(0)).free_mask, 0b1111'1000u);
  EXPECT_EQ(cluster.node(NodeId(0)).used_cpu, 1000);
  EXPECT_EQ(cluster.pool(GpuModelId(0)).free_whole, 29);
  EXPECT_THAT(cluster.pool(GpuModelId(0)).buckets[5], ElementsAre(NodeId(0)));
  EXPECT_EQ(BucketSize(cluster, 8), 3u);
  EXPECT_EQ(cluster.GroupNodesWithFree(TopologyLevel::kLeaf, 0, 5), 1);
  EXPECT_EQ(cluster.GroupNodesWithFree(TopologyLevel::kLeaf, 0, 8), 1);
  EXPECT_EQ(cluster.GroupNodesWithFree(TopologyLevel::kLeaf, 1, 8), 2);
  EXPECT_EQ(cluster.GroupNodesWithFree(TopologyLevel::kSpine, 0, 5), 1);
  EXPECT_EQ(cluster.GroupNodesWithFree(TopologyLevel::kCluster, 0, 8), 3);
  EXPECT_EQ(cluster.allocated(), (Resources{3000, 0, 1000, kGiB}));

  // A whole node on another leaf: that node moves to bucket 0.
  const TaskPlacement eight = Whole(cluster, 3, {0, 1, 2, 3, 4, 5, 6, 7});
  cluster.Allocate(eight);
  EXPECT_THAT(cluster.AuditIndexes(), IsEmpty());
  EXPECT_THAT(cluster.pool(GpuModelId(0)).buckets[0], ElementsAre(NodeId(3)));
  EXPECT_EQ(cluster.GroupNodesWithFree(TopologyLevel::kLeaf, 1, 0), 1);
  EXPECT_EQ(cluster.pool(GpuModelId(0)).free_whole, 21);

  cluster.Release(three);
  EXPECT_THAT(cluster.AuditIndexes(), IsEmpty());
  EXPECT_EQ(cluster.node(NodeId(0)).free_gpus(), 8);
  EXPECT_TRUE(cluster.pool(GpuModelId(0)).buckets[5].empty());
  cluster.Release(eight);
  EXPECT_THAT(cluster.AuditIndexes(), IsEmpty());
  EXPECT_EQ(cluster.pool(GpuModelId(0)).free_whole, 32);
  EXPECT_EQ(BucketSize(cluster, 8), 4u);
  EXPECT_EQ(cluster.GroupNodesWithFree(TopologyLevel::kCluster, 0, 8), 4);
  EXPECT_EQ(cluster.allocated(), Resources{});
}

TEST(ClusterTest, FractionsMoveAGpuIntoThePartialIndexAndBack) {
  Cluster cluster = FourNodes();
  const GpuId gpu = cluster.node(NodeId(1)).gpu(2);
  const auto& partial = cluster.pool(GpuModelId(0)).partial;

  const TaskPlacement quarter = Fraction(1, gpu, 250, 10 * kGiB);
  cluster.Allocate(quarter);
  EXPECT_THAT(cluster.AuditIndexes(), IsEmpty());
  EXPECT_TRUE(cluster.gpu(gpu).in_partial_index);
  EXPECT_EQ(partial.size(), 1u);
  EXPECT_TRUE(partial.contains({750, gpu.value()}));
  EXPECT_EQ(cluster.node(NodeId(1)).free_gpus(), 7);  // a shared GPU is not whole-free
  EXPECT_EQ(cluster.pool(GpuModelId(0)).free_whole, 31);
  EXPECT_EQ(cluster.allocated().gpu_milli, 250);
  EXPECT_EQ(cluster.allocated().gpu_memory, 10 * kGiB);

  const TaskPlacement half = Fraction(1, gpu, 500, 20 * kGiB);
  cluster.Allocate(half);
  EXPECT_THAT(cluster.AuditIndexes(), IsEmpty());
  EXPECT_EQ(partial.size(), 1u);
  EXPECT_TRUE(partial.contains({250, gpu.value()}));

  // Filled up: no longer shared capacity, so out of the partial index.
  const TaskPlacement rest = Fraction(1, gpu, 250, 10 * kGiB);
  cluster.Allocate(rest);
  EXPECT_THAT(cluster.AuditIndexes(), IsEmpty());
  EXPECT_TRUE(partial.empty());
  EXPECT_FALSE(cluster.gpu(gpu).in_partial_index);

  cluster.Release(half);
  EXPECT_THAT(cluster.AuditIndexes(), IsEmpty());
  EXPECT_TRUE(partial.contains({500, gpu.value()}));
  cluster.Release(quarter);
  cluster.Release(rest);
  EXPECT_THAT(cluster.AuditIndexes(), IsEmpty());
  EXPECT_TRUE(partial.empty());
  EXPECT_EQ(cluster.node(NodeId(1)).free_gpus(), 8);
  EXPECT_EQ(cluster.pool(GpuModelId(0)).free_whole, 32);
  EXPECT_EQ(cluster.gpu(gpu).used_memory, 0);
}

TEST(ClusterTest, UnhealthyGpusLeaveTheFreeMaskAndIndexes) {
  Cluster cluster = FourNodes();
  const GpuId free_gpu = cluster.node(NodeId(0)).gpu(7);
  cluster.SetGpuHealthy(free_gpu, false);
  EXPECT_THAT(cluster.AuditIndexes(), IsEmpty());
  EXPECT_EQ(cluster.node(NodeId(0)).free_mask, 0b0111'1111u);
  EXPECT_EQ(cluster.pool(GpuModelId(0)).free_whole, 31);
  EXPECT_THAT(cluster.pool(GpuModelId(0)).buckets[7], ElementsAre(NodeId(0)));
  EXPECT_EQ(cluster.GroupNodesWithFree(TopologyLevel::kLeaf, 0, 7), 1);

  // A shared GPU that fails leaves the partial index too.
  const GpuId shared = cluster.node(NodeId(2)).gpu(0);
  const TaskPlacement half = Fraction(2, shared, 500, 40 * kGiB);
  cluster.Allocate(half);
  EXPECT_EQ(cluster.pool(GpuModelId(0)).partial.size(), 1u);
  cluster.SetGpuHealthy(shared, false);
  EXPECT_THAT(cluster.AuditIndexes(), IsEmpty());
  EXPECT_TRUE(cluster.pool(GpuModelId(0)).partial.empty());
  // Releasing the task of a failed GPU keeps it out of every index.
  cluster.Release(half);
  EXPECT_THAT(cluster.AuditIndexes(), IsEmpty());
  EXPECT_EQ(cluster.node(NodeId(2)).free_gpus(), 7);

  cluster.SetGpuHealthy(free_gpu, true);
  cluster.SetGpuHealthy(shared, true);
  EXPECT_THAT(cluster.AuditIndexes(), IsEmpty());
  EXPECT_EQ(cluster.pool(GpuModelId(0)).free_whole, 32);
  EXPECT_EQ(BucketSize(cluster, 8), 4u);
}

TEST(ClusterTest, UnschedulableNodesLeaveTheBuckets) {
  Cluster cluster = FourNodes();
  const GpuId shared = cluster.node(NodeId(1)).gpu(3);
  cluster.Allocate(Fraction(1, shared, 250, 10 * kGiB));
  cluster.SetSchedulable(NodeId(1), false);
  EXPECT_THAT(cluster.AuditIndexes(), IsEmpty());
  EXPECT_EQ(cluster.node(NodeId(1)).indexed_free, -1);
  EXPECT_EQ(BucketSize(cluster, 8), 3u);
  EXPECT_TRUE(cluster.pool(GpuModelId(0)).buckets[7].empty());
  EXPECT_EQ(cluster.pool(GpuModelId(0)).free_whole, 24);
  EXPECT_TRUE(cluster.pool(GpuModelId(0)).partial.empty());
  EXPECT_EQ(cluster.GroupNodesWithFree(TopologyLevel::kLeaf, 0, 8), 1);
  EXPECT_EQ(cluster.GroupNodesWithFree(TopologyLevel::kLeaf, 0, 7), 0);
  EXPECT_EQ(cluster.GroupNodesWithFree(TopologyLevel::kCluster, 0, 8), 3);

  cluster.SetSchedulable(NodeId(1), true);
  EXPECT_THAT(cluster.AuditIndexes(), IsEmpty());
  EXPECT_THAT(cluster.pool(GpuModelId(0)).buckets[7], ElementsAre(NodeId(1)));
  EXPECT_TRUE(cluster.pool(GpuModelId(0)).partial.contains({750, shared.value()}));
  EXPECT_EQ(cluster.pool(GpuModelId(0)).free_whole, 31);
}

TEST(ClusterTest, RandomAllocationsKeepIndexesExact) {
  Result<Cluster> built = Cluster::Build({MakeNode("a", 8, "l0"), MakeNode("b", 4, "l0"), MakeNode("c", 8, "l1"),
                                          MakeNode("d", 2, "l1", "spine-0", "A100", 40 * kGiB)});
  ASSERT_TRUE(built.ok());
  Cluster& cluster = *built;
  Rng rng(42);
  std::vector<TaskPlacement> running;
  for (int step = 0; step < 400; ++step) {
    if (!running.empty() && rng.Bernoulli(0.4)) {
      const std::size_t i = static_cast<std::size_t>(rng.Uniform(0, static_cast<std::int64_t>(running.size()) - 1));
      cluster.Release(running[i]);
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
    } else if (rng.Bernoulli(0.1)) {
      const GpuId gpu(static_cast<std::int32_t>(rng.Uniform(0, static_cast<std::int64_t>(cluster.gpus().size()) - 1)));
      cluster.SetGpuHealthy(gpu, !cluster.gpu(gpu).healthy);
    } else if (rng.Bernoulli(0.05)) {
      const NodeId node(static_cast<std::int32_t>(rng.Uniform(0, 3)));
      cluster.SetSchedulable(node, !cluster.node(node).schedulable);
    } else {
      const Node& node = cluster.node(NodeId(static_cast<std::int32_t>(rng.Uniform(0, 3))));
      TaskPlacement task;
      task.node = node.id;
      if (rng.Bernoulli(0.5)) {  // whole GPUs from the free mask
        for (std::int32_t local = 0; local < node.gpu_count; ++local) {
          if ((node.free_mask >> local & 1) && rng.Bernoulli(0.5)) task.gpus.push_back({node.gpu(local), 1000, 0});
        }
      } else {  // a fraction of a GPU with room left
        const GpuId gpu = node.gpu(static_cast<std::int32_t>(rng.Uniform(0, node.gpu_count - 1)));
        const std::int32_t milli = static_cast<std::int32_t>(rng.Uniform(1, 4)) * 250;
        if (cluster.gpu(gpu).healthy && cluster.gpu(gpu).free_milli() >= milli) task.gpus.push_back({gpu, milli, kGiB});
      }
      if (task.gpus.empty()) continue;
      cluster.Allocate(task);
      running.push_back(task);
    }
    ASSERT_THAT(cluster.AuditIndexes(), IsEmpty()) << "after step " << step;
  }
  for (const TaskPlacement& task : running) cluster.Release(task);
  for (const Node& node : cluster.nodes()) {
    cluster.SetSchedulable(node.id, true);
    for (std::int32_t local = 0; local < node.gpu_count; ++local) cluster.SetGpuHealthy(node.gpu(local), true);
  }
  EXPECT_THAT(cluster.AuditIndexes(), IsEmpty());
  EXPECT_EQ(cluster.allocated(), Resources{});
  EXPECT_EQ(cluster.pool(GpuModelId(0)).free_whole, 20);
  EXPECT_EQ(cluster.pool(GpuModelId(1)).free_whole, 2);
}

TEST(ClusterTest, GpuModelsFormSeparatePools) {
  Result<Cluster> cluster = Cluster::Build(
      {MakeNode("h", 8), MakeNode("a", 4, "leaf-0", "spine-0", "A100", 40 * kGiB), MakeNode("h2", 8)});
  ASSERT_TRUE(cluster.ok());
  EXPECT_EQ(cluster->model_count(), 2u);
  const GpuModelId a100 = cluster->FindModel("A100");
  ASSERT_TRUE(a100.valid());
  EXPECT_FALSE(cluster->FindModel("V100").valid());
  EXPECT_EQ(cluster->pool(a100).free_whole, 4);
  EXPECT_EQ(cluster->pool(a100).buckets[4].size(), 1u);
  EXPECT_EQ(cluster->pool(cluster->FindModel("H100")).free_whole, 16);
}

TEST(ClusterTest, NumaAndNodeLocalNvlinkDomainsSplitTheGpus) {
  NodeSpec spec = MakeNode("n", 8);
  spec.numa_sockets = 2;
  spec.nvlink_domains = 2;
  Result<Cluster> cluster = Cluster::Build({spec, MakeNode("m", 8)});
  ASSERT_TRUE(cluster.ok());
  const Node& node = cluster->node(NodeId(0));
  EXPECT_THAT(node.numa_masks, ElementsAre(0x0Fu, 0xF0u));
  EXPECT_THAT(node.nvlink_masks, ElementsAre(0x0Fu, 0xF0u));
  EXPECT_EQ(cluster->gpu(node.gpu(3)).numa, 0);
  EXPECT_EQ(cluster->gpu(node.gpu(4)).numa, 1);
  EXPECT_EQ(cluster->gpu(node.gpu(0)).nvlink, cluster->gpu(node.gpu(3)).nvlink);
  EXPECT_NE(cluster->gpu(node.gpu(3)).nvlink, cluster->gpu(node.gpu(4)).nvlink);
  // Node-local domains are not kNvlink groups, and no two nodes share one.
  EXPECT_EQ(cluster->GroupCount(TopologyLevel::kNvlink), 0);
  EXPECT_NE(cluster->gpu(node.gpu(4)).nvlink, cluster->gpu(cluster->node(NodeId(1)).gpu(0)).nvlink);
}

TEST(ClusterTest, GroupsGivenGpuByGpuNeedNotBeContiguous) {
  // As NVML may find them: NVLink pairs 0+2 and 1+3, NUMA sockets 7 and 3.
  NodeSpec spec = MakeNode("n", 4);
  spec.gpu_nvlink = {5, 9, 5, 9};
  spec.gpu_numa = {7, 7, 3, 3};
  Result<Cluster> cluster = Cluster::Build({spec});
  ASSERT_TRUE(cluster.ok()) << cluster.status().message();
  const Node& node = cluster->node(NodeId(0));
  EXPECT_THAT(node.nvlink_masks, ElementsAre(0b0101u, 0b1010u));
  EXPECT_THAT(node.numa_masks, ElementsAre(0b0011u, 0b1100u));
  EXPECT_EQ(cluster->gpu(node.gpu(0)).nvlink, cluster->gpu(node.gpu(2)).nvlink);
  EXPECT_NE(cluster->gpu(node.gpu(0)).nvlink, cluster->gpu(node.gpu(1)).nvlink);
  EXPECT_EQ(cluster->gpu(node.gpu(1)).numa, 0);
  EXPECT_EQ(cluster->gpu(node.gpu(2)).numa, 1);
  EXPECT_EQ(cluster->max_domain_gpus(TopologyLevel::kNvlink), 2);

  spec.gpu_numa = {0, 0};
  const Result<Cluster> wrong = Cluster::Build({spec});
  ASSERT_FALSE(wrong.ok());
  EXPECT_THAT(wrong.status().message(), HasSubstr("names the groups of 2 GPUs but has 4"));
}

TEST(ClusterTest, MultiNodeNvlinkGroupFormsAnNvlinkGroup) {
  NodeSpec a = MakeNode("gb-0", 4, "rack-0", "spine-0", "GB200", 192 * kGiB);
  NodeSpec b = MakeNode("gb-1", 4, "rack-0", "spine-0", "GB200", 192 * kGiB);
  a.nvlink_group = b.nvlink_group = "nvl72-a";
  Result<Cluster> cluster = Cluster::Build({a, b, MakeNode("dgx", 8, "leaf-1")});
  ASSERT_TRUE(cluster.ok()) << cluster.status().message();
  ASSERT_EQ(cluster->GroupCount(TopologyLevel::kNvlink), 1);
  EXPECT_EQ(cluster->Group(TopologyLevel::kNvlink, 0).name, "nvl72-a");
  EXPECT_THAT(cluster->Group(TopologyLevel::kNvlink, 0).nodes, ElementsAre(NodeId(0), NodeId(1)));
  EXPECT_EQ(cluster->GroupOf(NodeId(1), TopologyLevel::kNvlink), 0);
  EXPECT_EQ(cluster->GroupOf(NodeId(2), TopologyLevel::kNvlink), -1);
  EXPECT_EQ(cluster->node(NodeId(0)).nvlink_masks.size(), 1u);
  // One NVLink domain across both nodes.
  EXPECT_EQ(cluster->gpu(cluster->node(NodeId(0)).gpu(0)).nvlink, cluster->gpu(cluster->node(NodeId(1)).gpu(3)).nvlink);
  EXPECT_EQ(cluster->GroupNodesWithFree(TopologyLevel::kNvlink, 0, 4), 2);

  cluster->Allocate(Whole(*cluster, 1, {0, 1}));
  EXPECT_THAT(cluster->AuditIndexes(), IsEmpty());
  EXPECT_EQ(cluster->GroupNodesWithFree(TopologyLevel::kNvlink, 0, 4), 1);
  EXPECT_EQ(cluster->GroupNodesWithFree(TopologyLevel::kNvlink, 0, 2), 1);
}

TEST(ClusterTest, AnEmptyClusterHasNoCapacity) {
  const Result<Cluster> cluster = Cluster::Build({});
  ASSERT_TRUE(cluster.ok()) << cluster.status().message();
  EXPECT_EQ(cluster->capacity().gpu_milli, 0);
  EXPECT_TRUE(cluster->nodes().empty());
  EXPECT_THAT(cluster->AuditIndexes(), IsEmpty());
}

TEST(ClusterTest, BuildRejectsInconsistentSpecs) {
  const auto error = [](const std::vector<NodeSpec>& specs) {
    const Result<Cluster> cluster = Cluster::Build(specs);
    EXPECT_FALSE(cluster.ok());
    return cluster.status().message();
  };
  EXPECT_THAT(error({MakeNode("n", 8), MakeNode("n", 8)}), HasSubstr("node 'n' is defined twice"));
  EXPECT_THAT(error({MakeNode("a", 8, "leaf-0", "spine-0"), MakeNode("b", 8, "leaf-0", "spine-1")}),
              HasSubstr("leaf 'leaf-0' is placed under spines 'spine-0' and 'spine-1'"));
  EXPECT_THAT(error({MakeNode("a", 65)}), HasSubstr("gpus must be between 0 and 64"));
  EXPECT_THAT(error({MakeNode("a", 8, "l", "s", "H100", 0)}), HasSubstr("gpuMemory must be positive"));
  NodeSpec no_cpu = MakeNode("a", 8);
  no_cpu.cpu_milli = 0;
  EXPECT_THAT(error({no_cpu}), HasSubstr("cpus must be positive"));
  NodeSpec no_name = MakeNode("", 8);
  EXPECT_THAT(error({no_name}), HasSubstr("a node has no name"));
}

TEST(ClusterTest, SixtyFourGpuNodesUseTheWholeMask) {
  Result<Cluster> cluster = Cluster::Build({MakeNode("big", 64)});
  ASSERT_TRUE(cluster.ok());
  EXPECT_EQ(cluster->node(NodeId(0)).free_mask, ~std::uint64_t{0});
  EXPECT_EQ(cluster->node(NodeId(0)).free_gpus(), 64);
  cluster->Allocate(Whole(*cluster, 0, {63}));
  EXPECT_THAT(cluster->AuditIndexes(), IsEmpty());
  EXPECT_EQ(cluster->node(NodeId(0)).free_gpus(), 63);
}

}  // namespace
}  // namespace tessera::model

namespace tessera::model {
namespace {

TEST(ClusterGroupTest, FreeGpusAndTasksThatFitFollowTheHistogram) {
  Result<Cluster> built = Cluster::Build({MakeNode("a", 8, "leaf-0"), MakeNode("b", 8, "leaf-0"), MakeNode("c", 8, "leaf-1")});
  ASSERT_TRUE(built.ok());
  Cluster& cluster = *built;
  TaskPlacement task;  // three GPUs of node a
  task.node = NodeId(0);
  for (std::int32_t i = 0; i < 3; ++i) task.gpus.push_back({cluster.node(task.node).gpu(i), 1000, 80 * kGiB});
  cluster.Allocate(task);
  EXPECT_EQ(cluster.GroupFreeGpus(TopologyLevel::kLeaf, 0), 5 + 8);
  EXPECT_EQ(cluster.GroupTasksThatFit(TopologyLevel::kLeaf, 0, 4), 1 + 2);  // 5 free hold one, 8 hold two
  EXPECT_EQ(cluster.GroupFreeGpus(TopologyLevel::kNode, 0), 5);
  EXPECT_EQ(cluster.GroupTasksThatFit(TopologyLevel::kNode, 0, 2), 2);
  EXPECT_EQ(cluster.GroupFreeGpus(TopologyLevel::kCluster, 0), 21);
  cluster.SetSchedulable(NodeId(1), false);  // a cordoned node offers nothing
  EXPECT_EQ(cluster.GroupFreeGpus(TopologyLevel::kLeaf, 0), 5);
  EXPECT_EQ(cluster.GroupFreeGpus(TopologyLevel::kNode, 1), 0);
}

}  // namespace
}  // namespace tessera::model
