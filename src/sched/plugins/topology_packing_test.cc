#include "sched/plugins/topology_packing.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "base/quantity.h"
#include "model/feasibility.h"
#include "sched/test_fixtures.h"

namespace tessera::sched {
namespace {

using fixtures::GpuFraction;
using fixtures::JobShape;
using fixtures::MakeCluster;
using fixtures::MakeJob;
using fixtures::WholeGpus;
using model::TopologyLevel;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::set<std::int32_t> NodesOf(const std::vector<model::TaskPlacement>& out) {
  std::set<std::int32_t> nodes;
  for (const model::TaskPlacement& t : out) nodes.insert(t.node.value());
  return nodes;
}

std::set<std::int32_t> LeavesOf(const model::Cluster& cluster, const std::vector<model::TaskPlacement>& out) {
  std::set<std::int32_t> leaves;
  for (const model::TaskPlacement& t : out) leaves.insert(cluster.GroupOf(t.node, TopologyLevel::kLeaf));
  return leaves;
}

std::set<std::int32_t> NvlinksOf(const model::Cluster& cluster, const std::vector<model::TaskPlacement>& out) {
  std::set<std::int32_t> domains;
  for (const model::TaskPlacement& t : out) {
    for (const model::GpuShare& s : t.gpus) domains.insert(cluster.gpu(s.gpu).nvlink.value());
  }
  return domains;
}

std::set<std::int32_t> GpusOf(const std::vector<model::TaskPlacement>& out) {
  std::set<std::int32_t> gpus;
  for (const model::TaskPlacement& t : out) {
    for (const model::GpuShare& s : t.gpus) gpus.insert(s.gpu.value());
  }
  return gpus;
}

// Everything a placement attempt must leave as it found it.
struct Snapshot {
  model::Resources allocated;
  std::vector<std::uint64_t> free_masks;
  std::vector<std::int32_t> indexed_free;
  std::vector<std::int64_t> used_cpu;
  std::vector<std::int32_t> used_milli;
  std::vector<std::int64_t> used_memory;
  bool operator==(const Snapshot&) const = default;
};

Snapshot Take(const model::Cluster& cluster) {
  Snapshot s;
  s.allocated = cluster.allocated();
  for (const model::Node& n : cluster.nodes()) {
    s.free_masks.push_back(n.free_mask);
    s.indexed_free.push_back(n.indexed_free);
    s.used_cpu.push_back(n.used_cpu);
  }
  for (const model::Gpu& g : cluster.gpus()) {
    s.used_milli.push_back(g.used_milli);
    s.used_memory.push_back(g.used_memory);
  }
  return s;
}

class TopologyPackingTest : public ::testing::Test {
 protected:
  // Places `job` and checks that the cluster is left exactly as found.
  bool Place(const model::Job& job, model::Cluster& cluster, const PlaceOptions& options = {}) {
    out_.clear();
    const Snapshot before = Take(cluster);
    const bool placed = packing_.Place(job, cluster, options, out_).fits();
    EXPECT_TRUE(Take(cluster) == before) << "Place changed the cluster";
    EXPECT_THAT(cluster.AuditIndexes(), IsEmpty());
    if (!placed) {
      EXPECT_THAT(out_, IsEmpty());
    }
    return placed;
  }

  TopologyPacking packing_{8};
  std::vector<model::TaskPlacement> out_;
};

// --- single tasks -------------------------------------------------------------

TEST_F(TopologyPackingTest, SingleGpuGoesToTheNodeWithFewestFreeGpusThatFits) {
  model::Cluster cluster = MakeCluster(3, 8);
  cluster.Allocate(WholeGpus(cluster, 0, {0, 1, 2, 3}));        // n0: 4 free
  cluster.Allocate(WholeGpus(cluster, 2, {0, 1, 2, 3, 4, 5}));  // n2: 2 free

  ASSERT_TRUE(Place(MakeJob({.gpu_milli = 1000}), cluster));
  ASSERT_EQ(out_.size(), 1u);
  EXPECT_EQ(out_[0].node.value(), 2);
  ASSERT_EQ(out_[0].gpus.size(), 1u);
  EXPECT_EQ(cluster.gpu(out_[0].gpus[0].gpu).used_milli, 0);
  EXPECT_EQ(out_[0].gpus[0].milli, 1000);

  // Three GPUs no longer fit n2: the next fullest is n0, on its free GPUs.
  ASSERT_TRUE(Place(MakeJob({.gpu_milli = 3000}), cluster));
  EXPECT_EQ(out_[0].node.value(), 0);
  for (const model::GpuShare& s : out_[0].gpus) EXPECT_GE(cluster.gpu(s.gpu).local_index, 4);
  EXPECT_EQ(out_[0].gpus.size(), 3u);

  // A whole node only fits the empty n1.
  ASSERT_TRUE(Place(MakeJob({.gpu_milli = 8000}), cluster));
  EXPECT_EQ(out_[0].node.value(), 1);
  EXPECT_EQ(out_[0].gpus.size(), 8u);
}

TEST_F(TopologyPackingTest, TaskCarriesItsCpuAndMemory) {
  model::Cluster cluster = MakeCluster(1, 8);
  ASSERT_TRUE(Place(MakeJob({.gpu_milli = 2000, .cpu_milli = 12'000, .memory = 64 * kGiB}), cluster));
  EXPECT_EQ(out_[0].cpu_milli, 12'000);
  EXPECT_EQ(out_[0].memory, 64 * kGiB);
  EXPECT_EQ(out_[0].group, 0);
  EXPECT_EQ(out_[0].index, 0);
}

TEST_F(TopologyPackingTest, NoRoomMeansNoPlacement) {
  model::Cluster cluster = MakeCluster(2, 4);
  cluster.Allocate(WholeGpus(cluster, 0, {0, 1}));
  cluster.Allocate(WholeGpus(cluster, 1, {0, 1}));
  EXPECT_FALSE(Place(MakeJob({.gpu_milli = 3000}), cluster));  // 4 free in total, 2 per node
}

// One 8-GPU node in two node-local NVLink domains: GPUs 0-3 and 4-7.
model::Cluster TwoNvlinkDomains() {
  model::ClusterShape shape = fixtures::Shape(1, 8);
  shape.nvlink_domains = 2;
  return MakeCluster(shape);
}

TEST_F(TopologyPackingTest, FourGpuTaskStaysInsideOneNvlinkDomain) {
  model::Cluster cluster = TwoNvlinkDomains();
  // GPU 1 is taken: the lowest four free GPUs (0, 2, 3, 4) would span both domains.
  cluster.Allocate(WholeGpus(cluster, 0, {1}));
  ASSERT_TRUE(Place(MakeJob({.gpu_milli = 4000}), cluster));
  ASSERT_EQ(out_[0].gpus.size(), 4u);
  EXPECT_EQ(NvlinksOf(cluster, out_).size(), 1u);
  EXPECT_EQ(*NvlinksOf(cluster, out_).begin(), cluster.gpu(cluster.node(model::NodeId(0)).gpu(4)).nvlink.value());
}

TEST_F(TopologyPackingTest, SmallTaskBestFitsTheFullerNvlinkDomain) {
  model::Cluster cluster = TwoNvlinkDomains();
  cluster.Allocate(WholeGpus(cluster, 0, {5}));  // domain 1 has 3 free, domain 0 has 4
  ASSERT_TRUE(Place(MakeJob({.gpu_milli = 2000}), cluster));
  EXPECT_EQ(NvlinksOf(cluster, out_),
            std::set<std::int32_t>{cluster.gpu(cluster.node(model::NodeId(0)).gpu(5)).nvlink.value()});
}

// --- fractions ------------------------------------------------------------------

// --- image locality: a tie-break between nodes that fit equally well ----------

constexpr std::uint64_t kImage = 0x1234;

model::Job WithImage(model::Job job) {
  for (model::TaskGroup& g : job.groups) g.request.image = kImage;
  return job;
}

TEST_F(TopologyPackingTest, ATaskGoesToANodeThatHoldsItsImageAmongThoseAsFull) {
  model::Cluster cluster = MakeCluster(4, 8);
  cluster.SetImages(model::NodeId(2), {99, kImage});
  ASSERT_TRUE(Place(WithImage(MakeJob({.gpu_milli = 1000})), cluster));
  EXPECT_EQ(out_[0].node.value(), 2);
  ASSERT_TRUE(Place(MakeJob({.gpu_milli = 1000}), cluster));  // no image: the first of the bucket
  EXPECT_EQ(out_[0].node.value(), 0);

  // Never at the cost of a worse fit: n0, fuller, wins over the holder.
  cluster.Allocate(WholeGpus(cluster, 0, {0, 1, 2, 3}));
  ASSERT_TRUE(Place(WithImage(MakeJob({.gpu_milli = 1000})), cluster));
  EXPECT_EQ(out_[0].node.value(), 0);
  // Never a constraint: with the holder full, the task goes elsewhere.
  cluster.Allocate(WholeGpus(cluster, 2, {0, 1, 2, 3, 4, 5, 6, 7}));
  ASSERT_TRUE(Place(WithImage(MakeJob({.gpu_milli = 8000})), cluster));
  EXPECT_NE(out_[0].node.value(), 2);
}

TEST_F(TopologyPackingTest, AGangInsideOneNodePrefersTheNodeThatHoldsItsImage) {
  model::Cluster cluster = MakeCluster(4, 8);
  cluster.SetImages(model::NodeId(3), {kImage});
  ASSERT_TRUE(Place(WithImage(MakeJob({.gpu_milli = 2000, .replicas = 2})), cluster));
  EXPECT_EQ(NodesOf(out_), std::set<std::int32_t>{3});
}

TEST_F(TopologyPackingTest, AGangAcrossNodesPrefersTheHoldersInsideItsLeaf) {
  model::Cluster cluster = MakeCluster(6, 8, 3);  // leaves {n0, n1, n2} and {n3, n4, n5}
  cluster.SetImages(model::NodeId(1), {kImage});
  cluster.SetImages(model::NodeId(2), {kImage});
  cluster.SetImages(model::NodeId(4), {kImage});
  const model::Job gang = MakeJob({.gpu_milli = 8000, .replicas = 2, .topology = {TopologyLevel::kLeaf, true}});
  ASSERT_TRUE(Place(WithImage(gang), cluster));
  EXPECT_EQ(NodesOf(out_), (std::set<std::int32_t>{1, 2}));
  ASSERT_TRUE(Place(gang, cluster));
  EXPECT_EQ(NodesOf(out_), (std::set<std::int32_t>{0, 1}));
}

TEST_F(TopologyPackingTest, FractionJoinsASharedGpuRatherThanAFreeOne) {
  model::Cluster cluster = MakeCluster(2, 2);
  cluster.Allocate(GpuFraction(cluster, 1, 1, 500, 10 * kGiB));
  ASSERT_TRUE(Place(MakeJob({.gpu_milli = 250, .gpu_memory = 20 * kGiB}), cluster));
  ASSERT_EQ(out_.size(), 1u);
  EXPECT_EQ(out_[0].node.value(), 1);
  EXPECT_THAT(out_[0].gpus, ElementsAre(model::GpuShare{cluster.node(model::NodeId(1)).gpu(1), 250, 20 * kGiB}));
}

TEST_F(TopologyPackingTest, AFractionWithoutMemoryHoldsItsShareOfTheGpusMemory) {
  model::Cluster cluster = MakeCluster(1, 2);  // 80 GiB GPUs
  // 60 GiB held on GPU 0 leave too little for half of its memory: the half goes to GPU 1.
  cluster.Allocate(GpuFraction(cluster, 0, 0, 250, 60 * kGiB));
  ASSERT_TRUE(Place(MakeJob({.gpu_milli = 500}), cluster));
  ASSERT_EQ(out_.size(), 1u);
  EXPECT_THAT(out_[0].gpus, ElementsAre(model::GpuShare{cluster.node(model::NodeId(0)).gpu(1), 500, 40 * kGiB}));
  // The next half fits beside it on GPU 1, and a third half nowhere.
  cluster.Allocate(out_[0]);
  ASSERT_TRUE(Place(MakeJob({.gpu_milli = 500}), cluster));
  EXPECT_EQ(out_[0].gpus[0].gpu, cluster.node(model::NodeId(0)).gpu(1));
  cluster.Allocate(out_[0]);
  EXPECT_FALSE(Place(MakeJob({.gpu_milli = 500}), cluster));
}

TEST_F(TopologyPackingTest, AFractionSharesOnlyAGpuSharedTheSameWay) {
  model::Cluster cluster = MakeCluster(1, 2);
  model::TaskPlacement timesliced = GpuFraction(cluster, 0, 1, 250, kGiB);
  timesliced.gpus[0].sharing = model::GpuSharing::kTimeSlice;
  cluster.Allocate(timesliced);
  // A vGPU fraction would fit on GPU 1 by size, but it holds a time-sliced tenant.
  ASSERT_TRUE(Place(MakeJob({.gpu_milli = 250, .gpu_memory = kGiB}), cluster));
  EXPECT_EQ(out_[0].gpus[0].gpu, cluster.node(model::NodeId(0)).gpu(0));
  EXPECT_EQ(out_[0].gpus[0].sharing, model::GpuSharing::kVgpu);
  // A time-sliced fraction joins its own kind.
  model::Job ts = MakeJob({.gpu_milli = 250, .gpu_memory = kGiB});
  ts.groups[0].request.sharing = model::GpuSharing::kTimeSlice;
  out_.clear();
  ASSERT_TRUE(Place(ts, cluster));
  EXPECT_EQ(out_[0].gpus[0].gpu, cluster.node(model::NodeId(0)).gpu(1));
}

TEST_F(TopologyPackingTest, AnExclusiveNodeTakesNoFractions) {
  std::vector<model::NodeSpec> specs = model::GenerateNodes(fixtures::Shape(2, 8));
  specs[0].sharing = {};  // exclusive
  model::Cluster cluster = *model::Cluster::Build(specs);
  ASSERT_TRUE(Place(MakeJob({.gpu_milli = 500, .gpu_memory = kGiB}), cluster));
  EXPECT_EQ(out_[0].node.value(), 1);
  out_.clear();
  ASSERT_TRUE(Place(MakeJob({.gpu_milli = 8000}), cluster)) << "whole GPUs still go anywhere";
}

// --- MIG -------------------------------------------------------------------------

// One node of four GPUs; GPU 0 is in MIG mode with two 1g.10gb devices and a 3g.40gb.
model::Cluster MigCluster() {
  std::vector<model::NodeSpec> specs = model::GenerateNodes(fixtures::Shape(1, 4));
  specs[0].gpu_mig = {{"1g.10gb", "1g.10gb", "3g.40gb"}};
  return *model::Cluster::Build(specs);
}

model::Job MigJob(const std::string& profile) {
  model::Job job = MakeJob({.gpu_milli = 142, .gpu_memory = 10 * kGiB});
  job.groups[0].request.sharing = model::GpuSharing::kMig;
  job.groups[0].request.mig_profile = profile;
  return job;
}

TEST_F(TopologyPackingTest, AMigTaskTakesAFreeDeviceOfItsProfileBesideWholeGpuTasks) {
  model::Cluster cluster = MigCluster();
  const model::GpuId mig_gpu = cluster.node(model::NodeId(0)).gpu(0);
  EXPECT_EQ(cluster.node(model::NodeId(0)).free_gpus(), 3) << "a GPU in MIG mode is never whole";
  EXPECT_TRUE(cluster.node(model::NodeId(0)).Offers(model::GpuSharing::kMig));
  // Whole GPUs: the three others, never GPU 0.
  ASSERT_TRUE(Place(MakeJob({.gpu_milli = 3000}), cluster));
  EXPECT_EQ(GpusOf(out_).count(mig_gpu.value()), 0u);
  cluster.Allocate(out_[0]);
  EXPECT_FALSE(Place(MakeJob({.gpu_milli = 1000}), cluster)) << "GPU 0 cannot stand in for a whole GPU";
  EXPECT_FALSE(Place(MakeJob({.gpu_milli = 250, .gpu_memory = kGiB}), cluster)) << "nor take a vGPU fraction";
  // Two 1g.10gb tasks take one device each; a third waits; the 3g.40gb one fits.
  for (const std::int32_t device : {0, 1}) {
    ASSERT_TRUE(Place(MigJob("1g.10gb"), cluster)) << device;
    ASSERT_EQ(out_[0].gpus.size(), 1u);
    EXPECT_EQ(out_[0].gpus[0].gpu, mig_gpu);
    EXPECT_EQ(out_[0].gpus[0].mig, device);
    EXPECT_EQ(out_[0].gpus[0].sharing, model::GpuSharing::kMig);
    cluster.Allocate(out_[0]);
  }
  EXPECT_FALSE(Place(MigJob("1g.10gb"), cluster));
  ASSERT_TRUE(Place(MigJob("3g.40gb"), cluster));
  EXPECT_EQ(out_[0].gpus[0].mig, 2);
  cluster.Allocate(out_[0]);
  EXPECT_THAT(cluster.AuditIndexes(), IsEmpty());
  // Released, a device is free again.
  model::TaskPlacement first{0, 0, model::NodeId(0), {model::GpuShare{mig_gpu, 142, 10 * kGiB, model::GpuSharing::kMig, 0}}, 0, 0};
  cluster.Release(first);
  ASSERT_TRUE(Place(MigJob("1g.10gb"), cluster));
  EXPECT_EQ(out_[0].gpus[0].mig, 0);
}

TEST_F(TopologyPackingTest, AMigTaskFindsItsDeviceBehindManySharedGpus) {
  // 200 GPUs half held by vGPU fractions come first in the shared-GPU index
  // (500 free milli each, against the MIG GPU's 1000): more than a fraction
  // scans before it opens a whole GPU, which a MIG task cannot do.
  std::vector<model::NodeSpec> specs = model::GenerateNodes(fixtures::Shape(201, 1));
  specs.back().gpu_mig = {{"1g.10gb"}};
  model::Cluster cluster = *model::Cluster::Build(specs);
  for (std::int32_t n = 0; n < 200; ++n) cluster.Allocate(GpuFraction(cluster, n, 0, 500, kGiB));
  ASSERT_TRUE(Place(MigJob("1g.10gb"), cluster));
  EXPECT_EQ(out_[0].node.value(), 200);
}

TEST(MigFeasibilityTest, AProfileNoNodeHasIsRefusedNamingTheOnesThereAre) {
  const model::Cluster cluster = MigCluster();
  const model::QueueTree queues = model::QueueTree::Default(cluster.capacity().gpu_milli);
  EXPECT_TRUE(model::CheckFeasible(MigJob("3g.40gb"), cluster, queues).ok());
  const Status refused = model::CheckFeasible(MigJob("2g.20gb"), cluster, queues);
  EXPECT_EQ(refused.message(), "spec.tasks[0].resources.mig: no node has a MIG device of profile 2g.20gb (the cluster's profiles: 1g.10gb, 3g.40gb)");
  const Status none = model::CheckFeasible(MigJob("1g.10gb"), MakeCluster(1, 2), queues);
  EXPECT_THAT(none.message(), HasSubstr("(no GPU is in MIG mode)"));
}

TEST_F(TopologyPackingTest, FractionBestFitsTheSharedGpuWithFewestFreeMilli) {
  model::Cluster cluster = MakeCluster(2, 2);
  const model::GpuId roomy = cluster.node(model::NodeId(0)).gpu(0);
  const model::GpuId tight = cluster.node(model::NodeId(1)).gpu(0);
  cluster.Allocate(GpuFraction(cluster, 0, 0, 500, kGiB));  // 500 free
  cluster.Allocate(GpuFraction(cluster, 1, 0, 700, kGiB));  // 300 free
  ASSERT_TRUE(Place(MakeJob({.gpu_milli = 250, .gpu_memory = kGiB}), cluster));
  EXPECT_EQ(out_[0].gpus[0].gpu, tight);
  ASSERT_TRUE(Place(MakeJob({.gpu_milli = 300, .gpu_memory = kGiB}), cluster));
  EXPECT_EQ(out_[0].gpus[0].gpu, tight);
  ASSERT_TRUE(Place(MakeJob({.gpu_milli = 400, .gpu_memory = kGiB}), cluster));
  EXPECT_EQ(out_[0].gpus[0].gpu, roomy);
}

TEST_F(TopologyPackingTest, FractionSkipsASharedGpuWithoutEnoughMemory) {
  model::Cluster cluster = MakeCluster(2, 4);
  cluster.Allocate(GpuFraction(cluster, 0, 0, 500, 75 * kGiB));  // milli to spare, 5 GiB left
  cluster.Allocate(WholeGpus(cluster, 1, {0, 1}));               // n1: 2 free, n0: 3 free
  ASSERT_TRUE(Place(MakeJob({.gpu_milli = 250, .gpu_memory = 10 * kGiB}), cluster));
  // Opens a wholly free GPU on the fullest node.
  EXPECT_EQ(out_[0].node.value(), 1);
  const model::Gpu& gpu = cluster.gpu(out_[0].gpus[0].gpu);
  EXPECT_EQ(gpu.node.value(), 1);
  EXPECT_TRUE(gpu.whole_free());
  EXPECT_EQ(out_[0].gpus[0].milli, 250);
  EXPECT_EQ(out_[0].gpus[0].memory, 10 * kGiB);
  // 5 GiB still fits the shared GPU.
  ASSERT_TRUE(Place(MakeJob({.gpu_milli = 250, .gpu_memory = 5 * kGiB}), cluster));
  EXPECT_EQ(out_[0].gpus[0].gpu, cluster.node(model::NodeId(0)).gpu(0));
}

TEST_F(TopologyPackingTest, FractionOpensAFreeGpuOnTheFullestNodeWhenNoSharedGpuHasRoom) {
  model::Cluster cluster = MakeCluster(3, 4);
  cluster.Allocate(GpuFraction(cluster, 0, 0, 900, kGiB));  // only 100 free
  cluster.Allocate(WholeGpus(cluster, 2, {0, 1, 2}));       // n2: 1 free; n0: 3; n1: 4
  ASSERT_TRUE(Place(MakeJob({.gpu_milli = 250, .gpu_memory = kGiB}), cluster));
  EXPECT_EQ(out_[0].node.value(), 2);
  EXPECT_EQ(out_[0].gpus[0].gpu, cluster.node(model::NodeId(2)).gpu(3));
}

// --- gangs and topology -----------------------------------------------------------

// Four 8-GPU nodes, two per leaf: leaf0 = {n0, n1}, leaf1 = {n2, n3}.
model::Cluster TwoLeaves() { return MakeCluster(4, 8, 2); }

TEST_F(TopologyPackingTest, RequiredLeafGangGoesToTheFullestLeafThatFits) {
  model::Cluster cluster = TwoLeaves();
  cluster.Allocate(WholeGpus(cluster, 0, {0, 1, 2, 3}));  // leaf0: 12 free, leaf1: 16
  const model::Job gang = MakeJob({.gpu_milli = 4000, .replicas = 3, .topology = {TopologyLevel::kLeaf, true}});
  ASSERT_TRUE(Place(gang, cluster));
  ASSERT_EQ(out_.size(), 3u);
  EXPECT_EQ(LeavesOf(cluster, out_), std::set<std::int32_t>{cluster.GroupOf(model::NodeId(0), TopologyLevel::kLeaf)});
  EXPECT_EQ(GpusOf(out_).size(), 12u);  // no GPU given twice
  for (const model::TaskPlacement& t : out_) {
    for (const model::GpuShare& s : t.gpus) EXPECT_TRUE(cluster.gpu(s.gpu).whole_free());
  }
}

TEST_F(TopologyPackingTest, RequiredLeafGangSkipsALeafWithEnoughGpusButNotEnoughWholeNodes) {
  // Three nodes per leaf; leaf0 has 16 free GPUs, but only one node with 8.
  model::Cluster cluster = MakeCluster(6, 8, 3);
  cluster.Allocate(WholeGpus(cluster, 0, {0, 1, 2, 3}));
  cluster.Allocate(WholeGpus(cluster, 1, {0, 1, 2, 3}));
  const model::Job gang = MakeJob({.gpu_milli = 8000, .replicas = 2, .topology = {TopologyLevel::kLeaf, true}});
  ASSERT_TRUE(Place(gang, cluster));
  ASSERT_EQ(out_.size(), 2u);
  EXPECT_EQ(LeavesOf(cluster, out_), std::set<std::int32_t>{cluster.GroupOf(model::NodeId(3), TopologyLevel::kLeaf)});
  EXPECT_EQ(NodesOf(out_).size(), 2u);
}

TEST_F(TopologyPackingTest, RequiredLeafGangNeverSpansLeaves) {
  model::Cluster cluster = TwoLeaves();
  cluster.Allocate(WholeGpus(cluster, 0, {0, 1, 2, 3}));  // 28 free, at most 16 in one leaf
  JobShape shape{.gpu_milli = 4000, .replicas = 5, .topology = {TopologyLevel::kLeaf, true}};
  EXPECT_FALSE(Place(MakeJob(shape), cluster));
  // Preferred, it places across both leaves.
  shape.topology.required = false;
  ASSERT_TRUE(Place(MakeJob(shape), cluster));
  EXPECT_EQ(out_.size(), 5u);
  EXPECT_EQ(LeavesOf(cluster, out_).size(), 2u);
}

TEST_F(TopologyPackingTest, RequiredNodeGangNeverSpansNodes) {
  model::Cluster cluster = MakeCluster(2, 8);
  cluster.Allocate(WholeGpus(cluster, 0, {0, 1, 2, 3}));
  cluster.Allocate(WholeGpus(cluster, 1, {0, 1, 2, 3}));
  EXPECT_FALSE(Place(MakeJob({.gpu_milli = 4000, .replicas = 2, .topology = {TopologyLevel::kNode, true}}), cluster));
  ASSERT_TRUE(Place(MakeJob({.gpu_milli = 4000, .replicas = 2}), cluster));
  EXPECT_EQ(NodesOf(out_).size(), 2u);
}

TEST_F(TopologyPackingTest, GangThatDoesNotFitLeavesClusterAndIndexesUnchanged) {
  // Three nodes: by GPUs four 4-GPU tasks fit, but each node's CPUs hold only
  // one, so the gang fails after tentatively placing three of them.
  model::Cluster cluster = MakeCluster(3, 8);
  cluster.Allocate(WholeGpus(cluster, 0, {0}));
  cluster.Allocate(GpuFraction(cluster, 1, 7, 300, 2 * kGiB));
  const Snapshot before = Take(cluster);
  const model::Job gang = MakeJob({.gpu_milli = 4000, .cpu_milli = 40'000, .replicas = 4});
  EXPECT_FALSE(Place(gang, cluster));
  EXPECT_TRUE(Take(cluster) == before);
  EXPECT_EQ(cluster.allocated(), before.allocated);
  EXPECT_THAT(cluster.AuditIndexes(), IsEmpty());
  // Three of them do fit, one per node.
  ASSERT_TRUE(Place(MakeJob({.gpu_milli = 4000, .cpu_milli = 40'000, .replicas = 3}), cluster));
  EXPECT_EQ(NodesOf(out_), (std::set<std::int32_t>{0, 1, 2}));
}

TEST_F(TopologyPackingTest, RankingSkipsLeavesWithoutTheRequestedModel) {
  // Eight leaves of three 4-GPU A100 nodes (12 free GPUs) rank before one leaf
  // of two 8-GPU H100 nodes (16 free): best fit. With 8 tries per tier, a
  // 12-GPU H100 gang that needs a leaf must not spend them all on A100 leaves.
  std::vector<model::NodeSpec> specs;
  for (int i = 0; i < 26; ++i) {
    model::NodeSpec n;
    const bool h100 = i >= 24;
    n.name = "n" + std::to_string(i);
    n.gpu_model = h100 ? "H100" : "A100";
    n.gpus = h100 ? 8 : 4;
    n.gpu_memory = 80 * kGiB;
    n.cpu_milli = 64000;
    n.memory = 512 * kGiB;
    n.leaf = "leaf" + std::to_string(h100 ? 8 : i / 3);
    specs.push_back(n);
  }
  model::Cluster cluster = std::move(model::Cluster::Build(specs)).value();
  model::Job gang = MakeJob({.gpu_milli = 4000, .replicas = 3, .topology = {model::TopologyLevel::kLeaf, true}});
  gang.groups[0].request.gpu_model = "H100";
  gang.groups[0].request.models = *cluster.ResolveModels("H100");
  ASSERT_TRUE(Place(gang, cluster));
  for (const model::TaskPlacement& t : out_) EXPECT_EQ(cluster.node(t.node).model, cluster.FindModel("H100"));
}

TEST_F(TopologyPackingTest, AGpuModelNoNodeHasIsNeverNotAnyModel) {
  model::Cluster cluster = MakeCluster(2, 8);
  model::Job job = MakeJob({.gpu_milli = 1000});
  job.groups[0].request.gpu_model = "B200";  // resolves to no model: 0, which Accepts reads as any
  std::vector<model::TaskPlacement> out;
  const PlaceVerdict verdict = packing_.Place(job, cluster, {}, out);
  EXPECT_EQ(verdict.kind(), PlaceVerdict::Kind::kNever);
  EXPECT_THAT(verdict.never_reason(), HasSubstr("no node has GPU model 'B200'"));
  EXPECT_THAT(out, IsEmpty());
}

TEST_F(TopologyPackingTest, AcceptsAnyOfSeveralGpuModels) {
  std::vector<model::NodeSpec> specs;
  for (const char* gpu_model : {"V100", "A100", "H100"}) {
    model::NodeSpec n;
    n.name = gpu_model;
    n.gpu_model = gpu_model;
    n.gpus = 1;
    n.gpu_memory = 40 * kGiB;
    n.cpu_milli = 8000;
    n.memory = 64 * kGiB;
    specs.push_back(n);
  }
  model::Cluster cluster = std::move(model::Cluster::Build(specs)).value();
  model::Job job = MakeJob({.gpu_milli = 1000});
  job.groups[0].request.models = *cluster.ResolveModels("H100|A100");
  std::set<std::string> used;
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(Place(job, cluster));
    used.insert(cluster.node(out_[0].node).name);
    cluster.Allocate(out_[0]);
  }
  EXPECT_EQ(used, (std::set<std::string>{"A100", "H100"}));
  EXPECT_FALSE(Place(job, cluster));  // the V100 is free but not accepted
}

TEST_F(TopologyPackingTest, OptionalMembersStopAtTheQuotaHeadroom) {
  model::Cluster cluster = MakeCluster(1, 8);
  const model::Job gang = MakeJob({.gpu_milli = 2000, .replicas = 4, .min_replicas = 2});
  PlaceOptions options;
  options.max_gpu_milli = 6000;  // the queue may hold 6 more GPUs: min 2 tasks plus one
  ASSERT_TRUE(Place(gang, cluster, options));
  EXPECT_EQ(out_.size(), 3u);
  options.max_gpu_milli = 3000;  // below the minimum's 4: the minimum still goes (admission judged it)
  ASSERT_TRUE(Place(gang, cluster, options));
  EXPECT_EQ(out_.size(), 2u);
}

TEST_F(TopologyPackingTest, OptionalMembersAreAddedWhereThereIsRoom) {
  model::Cluster cluster = MakeCluster(1, 8);
  const model::Job gang = MakeJob({.gpu_milli = 2000, .replicas = 4, .min_replicas = 2});
  ASSERT_TRUE(Place(gang, cluster));
  EXPECT_EQ(out_.size(), 4u);
  EXPECT_EQ(GpusOf(out_).size(), 8u);

  cluster.Allocate(WholeGpus(cluster, 0, {0, 1}));  // 6 free: min 2 plus one optional
  ASSERT_TRUE(Place(gang, cluster));
  ASSERT_EQ(out_.size(), 3u);
  std::set<std::int32_t> indexes;
  for (const model::TaskPlacement& t : out_) indexes.insert(t.index);
  EXPECT_EQ(indexes, (std::set<std::int32_t>{0, 1, 2}));

  cluster.Allocate(WholeGpus(cluster, 0, {2, 3}));  // 4 free: only the minimum
  ASSERT_TRUE(Place(gang, cluster));
  ASSERT_EQ(out_.size(), 2u);
  EXPECT_EQ(out_[0].index, 0);
  EXPECT_EQ(out_[1].index, 1);

  cluster.Allocate(WholeGpus(cluster, 0, {4, 5}));  // 2 free: not even the minimum
  EXPECT_FALSE(Place(gang, cluster));
}

TEST_F(TopologyPackingTest, ExcludedNodesAreNeverUsed) {
  model::Cluster cluster = MakeCluster(3, 8);
  cluster.Allocate(WholeGpus(cluster, 0, {0, 1, 2, 3, 4, 5}));  // n0 is the best fit
  std::vector<std::uint8_t> excluded = {1, 0, 0};
  PlaceOptions options;
  options.excluded_nodes = &excluded;

  ASSERT_TRUE(Place(MakeJob({.gpu_milli = 1000}), cluster));
  EXPECT_EQ(out_[0].node.value(), 0);
  ASSERT_TRUE(Place(MakeJob({.gpu_milli = 1000}), cluster, options));
  EXPECT_NE(out_[0].node.value(), 0);

  const model::Job gang = MakeJob({.gpu_milli = 1000, .replicas = 2});
  ASSERT_TRUE(Place(gang, cluster));
  EXPECT_EQ(NodesOf(out_), std::set<std::int32_t>{0});
  ASSERT_TRUE(Place(gang, cluster, options));
  EXPECT_EQ(NodesOf(out_).count(0), 0u);

  const model::Job fraction = MakeJob({.gpu_milli = 500, .gpu_memory = kGiB});
  cluster.Allocate(GpuFraction(cluster, 0, 7, 500, kGiB));  // a shared GPU on the excluded node
  ASSERT_TRUE(Place(fraction, cluster, options));
  EXPECT_NE(out_[0].node.value(), 0);

  excluded = {1, 1, 1};
  EXPECT_FALSE(Place(MakeJob({.gpu_milli = 1000}), cluster, options));
  EXPECT_FALSE(Place(gang, cluster, options));
}

TEST_F(TopologyPackingTest, WithinGroupRestrictsToThatDomain) {
  model::Cluster cluster = TwoLeaves();
  cluster.Allocate(WholeGpus(cluster, 0, {0, 1, 2, 3, 4, 5}));  // n0 (leaf0) is the best fit
  const std::int32_t leaf1 = cluster.GroupOf(model::NodeId(2), TopologyLevel::kLeaf);
  const PlaceOptions in_leaf1{TopologyLevel::kLeaf, leaf1, nullptr};

  ASSERT_TRUE(Place(MakeJob({.gpu_milli = 1000}), cluster, in_leaf1));
  EXPECT_EQ(LeavesOf(cluster, out_), std::set<std::int32_t>{leaf1});

  const model::Job gang = MakeJob({.gpu_milli = 1000, .replicas = 2});
  ASSERT_TRUE(Place(gang, cluster));
  EXPECT_EQ(NodesOf(out_), (std::set<std::int32_t>{0}));  // unrestricted: fills n0
  ASSERT_TRUE(Place(gang, cluster, in_leaf1));
  EXPECT_EQ(LeavesOf(cluster, out_), std::set<std::int32_t>{leaf1});

  const PlaceOptions on_n3{TopologyLevel::kNode, 3, nullptr};
  ASSERT_TRUE(Place(MakeJob({.gpu_milli = 1000}), cluster, on_n3));
  EXPECT_EQ(out_[0].node.value(), 3);
  ASSERT_TRUE(Place(gang, cluster, on_n3));
  EXPECT_EQ(NodesOf(out_), (std::set<std::int32_t>{3}));

  // A domain too small for the gang: no placement, even though others have room.
  EXPECT_FALSE(Place(MakeJob({.gpu_milli = 4000, .replicas = 2}), cluster,
                     PlaceOptions{TopologyLevel::kNode, 0, nullptr}));
}

// Four 4-GPU nodes in two rack-wide NVLink groups: nvl0 = {n0, n1}, nvl1 = {n2, n3}.
model::Cluster TwoNvlinkRacks() {
  model::ClusterShape shape = fixtures::Shape(4, 4);
  shape.nvlink_domain_nodes = 2;
  return MakeCluster(shape);
}

TEST_F(TopologyPackingTest, RequiredNvlinkGangStaysInOneRackWideGroup) {
  model::Cluster cluster = TwoNvlinkRacks();
  cluster.Allocate(WholeGpus(cluster, 0, {0}));  // nvl0: 7 free, but only one 4-GPU node
  ASSERT_TRUE(Place(MakeJob({.gpu_milli = 4000, .replicas = 2, .topology = {TopologyLevel::kNvlink, true}}), cluster));
  EXPECT_EQ(NodesOf(out_), (std::set<std::int32_t>{2, 3}));
  EXPECT_EQ(NvlinksOf(cluster, out_).size(), 1u);
}

TEST_F(TopologyPackingTest, RequiredNvlinkGangBestFitsTheFullerGroup) {
  model::Cluster cluster = TwoNvlinkRacks();
  cluster.Allocate(WholeGpus(cluster, 0, {0}));  // nvl0: 7 free, nvl1: 8
  ASSERT_TRUE(Place(MakeJob({.gpu_milli = 2000, .replicas = 2, .topology = {TopologyLevel::kNvlink, true}}), cluster));
  EXPECT_EQ(NvlinksOf(cluster, out_),
            std::set<std::int32_t>{cluster.gpu(cluster.node(model::NodeId(0)).gpu(0)).nvlink.value()});
  for (std::int32_t node : NodesOf(out_)) EXPECT_LT(node, 2);
}

TEST_F(TopologyPackingTest, RequiredNvlinkGangDoesNotSpanGroups) {
  model::Cluster cluster = TwoNvlinkRacks();
  cluster.Allocate(WholeGpus(cluster, 0, {0, 1}));
  cluster.Allocate(WholeGpus(cluster, 2, {0, 1}));  // 6 free in each group, 12 in all
  JobShape shape{.gpu_milli = 2000, .replicas = 4, .topology = {TopologyLevel::kNvlink, true}};
  EXPECT_FALSE(Place(MakeJob(shape), cluster));
  shape.topology.required = false;
  ASSERT_TRUE(Place(MakeJob(shape), cluster));
  EXPECT_EQ(NvlinksOf(cluster, out_).size(), 2u);
}

}  // namespace
}  // namespace tessera::sched

namespace tessera::sched {
namespace {

// --- one task per node (sbatch's allocations) ---------------------------------

TEST_F(TopologyPackingTest, OnePerNodeGroupNeverSharesANode) {
  model::Cluster cluster = MakeCluster(4, 8);
  model::Job packed = fixtures::MakeJob({.gpu_milli = 2000, .replicas = 3});
  ASSERT_TRUE(Place(packed, cluster));
  EXPECT_EQ(NodesOf(out_).size(), 1u);  // without the constraint: packed onto one node

  model::Job spread = packed;
  spread.groups[0].one_per_node = true;
  ASSERT_TRUE(Place(spread, cluster));
  EXPECT_EQ(NodesOf(out_).size(), 3u);
  // Fractions too: each on a GPU of its own node.
  model::Job fractions = fixtures::MakeJob({.gpu_milli = 250, .replicas = 2});
  fractions.groups[0].one_per_node = true;
  ASSERT_TRUE(Place(fractions, cluster));
  EXPECT_EQ(NodesOf(out_).size(), 2u);
}

TEST_F(TopologyPackingTest, OnePerNodeGangWaitsForEnoughNodes) {
  model::Cluster cluster = MakeCluster(2, 8);
  model::Job spread = fixtures::MakeJob({.gpu_milli = 1000, .replicas = 3});
  spread.groups[0].one_per_node = true;
  EXPECT_FALSE(Place(spread, cluster));  // 16 free GPUs, but only two nodes
  spread.groups[0].replicas = spread.groups[0].min_replicas = 2;
  EXPECT_TRUE(Place(spread, cluster));
  EXPECT_EQ(NodesOf(out_).size(), 2u);
}

}  // namespace
}  // namespace tessera::sched
