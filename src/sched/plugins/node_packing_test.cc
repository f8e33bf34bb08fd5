// fgd and random placement: what they choose, that they never break a
// constraint, and that a seed makes random placement reproducible.
#include "sched/plugins/node_packing.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "sched/plugins/topology_packing.h"
#include "sched/test_fixtures.h"

namespace tessera::sched {
namespace {

using fixtures::GpuFraction;
using fixtures::MakeCluster;
using fixtures::MakeJob;

std::unique_ptr<Placement> Fallback() { return std::make_unique<TopologyPacking>(8); }

TEST(FgdPlacementTest, FillsTheGpuWhereTheFractionLeavesNoFragment) {
  // Node 0: GPU 0 half used. A half-GPU task on GPU 0 leaves whole GPUs for
  // whole-GPU tasks; on any free GPU it would strand two halves.
  model::Cluster cluster = MakeCluster(2, 2);
  cluster.Allocate(GpuFraction(cluster, 0, 0, 500, 0));
  FgdPlacement fgd({{500, 0, 0, 1.0}, {1000, 0, 0, 1.0}}, Fallback());
  std::vector<model::TaskPlacement> out;
  ASSERT_TRUE(fgd.Place(MakeJob({.gpu_milli = 500}), cluster, {}, out).fits());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].gpus[0].gpu, cluster.node(model::NodeId(0)).gpu(0));
}

TEST(FgdPlacementTest, WholeGpusGoWhereTheyStrandLeast) {
  // Node 0 has a half-used GPU and one free GPU; node 1 two free GPUs. With
  // half-GPU tasks expected, a 1-GPU task on node 0 leaves node 1 whole for
  // 2-GPU tasks and node 0's half GPU still usable.
  model::Cluster cluster = MakeCluster(2, 2);
  cluster.Allocate(GpuFraction(cluster, 0, 0, 500, 0));
  FgdPlacement fgd({{500, 0, 0, 1.0}, {2000, 0, 0, 1.0}}, Fallback());
  std::vector<model::TaskPlacement> out;
  ASSERT_TRUE(fgd.Place(MakeJob({.gpu_milli = 1000}), cluster, {}, out).fits());
  EXPECT_EQ(out[0].node, model::NodeId(0));
}

TEST(RandomPlacementTest, SpreadsReproduciblyAndOnlyWhereItFits) {
  model::Cluster cluster = MakeCluster(8, 4);
  const model::Job job = MakeJob({.gpu_milli = 2000});
  const auto nodes_chosen = [&](std::uint64_t seed) {
    RandomPlacement random(seed, Fallback());
    std::vector<model::NodeId> chosen;
    for (int i = 0; i < 20; ++i) {
      std::vector<model::TaskPlacement> out;
      EXPECT_TRUE(random.Place(job, cluster, {}, out).fits());
      EXPECT_EQ(out[0].gpus.size(), 2u);
      chosen.push_back(out[0].node);
    }
    return chosen;
  };
  const auto a = nodes_chosen(1);
  EXPECT_EQ(a, nodes_chosen(1));
  EXPECT_GT(std::set<model::NodeId>(a.begin(), a.end()).size(), 2u);
  for (int n = 0; n < 8; ++n) cluster.Allocate(fixtures::WholeGpus(cluster, n, {0, 1, 2}));  // one GPU free each
  RandomPlacement random(3, Fallback());
  std::vector<model::TaskPlacement> out;
  EXPECT_FALSE(random.Place(job, cluster, {}, out).fits());
  EXPECT_TRUE(out.empty());
}

TEST(NodePackingTest, AGpuModelNoNodeHasIsNever) {
  model::Cluster cluster = MakeCluster(2, 8);
  model::Job job = MakeJob({.gpu_milli = 1000});
  job.groups[0].request.gpu_model = "B200";
  RandomPlacement random(1, Fallback());
  std::vector<model::TaskPlacement> out;
  const PlaceVerdict verdict = random.Place(job, cluster, {}, out);
  EXPECT_EQ(verdict.kind(), PlaceVerdict::Kind::kNever);
  EXPECT_THAT(verdict.never_reason(), ::testing::HasSubstr("no node has GPU model 'B200'"));
  EXPECT_TRUE(out.empty());
}

TEST(NodePackingTest, RequiredTopologyGoesToTopologyPacking) {
  model::Cluster cluster = MakeCluster(4, 4, /*nodes_per_leaf=*/2);
  RandomPlacement random(5, Fallback());
  const model::Job gang = MakeJob({.gpu_milli = 4000, .replicas = 2, .topology = {model::TopologyLevel::kLeaf, true}});
  for (int i = 0; i < 10; ++i) {
    std::vector<model::TaskPlacement> out;
    ASSERT_TRUE(random.Place(gang, cluster, {}, out).fits());
    EXPECT_EQ(cluster.node(out[0].node).leaf, cluster.node(out[1].node).leaf);
  }
}

}  // namespace
}  // namespace tessera::sched
