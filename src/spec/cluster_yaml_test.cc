#include "spec/cluster_yaml.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace tessera::spec {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using model::TopologyLevel;

model::Cluster BuildShape(const std::string& text) {
  Result<model::ClusterShape> shape = ParseClusterShape(text);
  EXPECT_TRUE(shape.ok()) << shape.status().message();
  Result<model::Cluster> cluster = model::Cluster::Build(model::GenerateNodes(*shape));
  EXPECT_TRUE(cluster.ok()) << cluster.status().message();
  return std::move(cluster).value();
}

TEST(ClusterShapeTest, LargeShapeHasTheRightLeavesAndSpines) {
  const Result<model::ClusterShape> shape =
      ParseClusterShape("3125 nodes x 8 GPUs, 32 nodes per leaf, 16 leaves per spine");
  ASSERT_TRUE(shape.ok()) << shape.status().message();
  EXPECT_EQ(shape->nodes, 3125);
  EXPECT_EQ(shape->gpus_per_node, 8);
  EXPECT_EQ(shape->nodes_per_leaf, 32);
  EXPECT_EQ(shape->leaves_per_spine, 16);

  const std::vector<model::NodeSpec> nodes = model::GenerateNodes(*shape);
  ASSERT_EQ(nodes.size(), 3125u);
  EXPECT_EQ(nodes.front().name, "node-00000");
  EXPECT_EQ(nodes.back().name, "node-03124");
  EXPECT_EQ(nodes[31].leaf, "leaf-000");
  EXPECT_EQ(nodes[32].leaf, "leaf-001");
  EXPECT_EQ(nodes.back().leaf, "leaf-097");
  EXPECT_EQ(nodes[511].spine, "spine-00");
  EXPECT_EQ(nodes[512].spine, "spine-01");
  EXPECT_EQ(nodes.back().spine, "spine-06");
  EXPECT_TRUE(nodes.back().nvlink_group.empty());
  EXPECT_EQ(nodes.back().numa_sockets, 2);

  const model::Cluster cluster = BuildShape("3125 nodes x 8 GPUs, 32 nodes per leaf, 16 leaves per spine");
  EXPECT_EQ(cluster.nodes().size(), 3125u);
  EXPECT_EQ(cluster.capacity().gpu_milli, 25'000'000);
  EXPECT_EQ(cluster.GroupCount(TopologyLevel::kLeaf), 98);  // ceil(3125 / 32)
  EXPECT_EQ(cluster.GroupCount(TopologyLevel::kSpine), 7);  // ceil(98 / 16)
  EXPECT_EQ(cluster.GroupCount(TopologyLevel::kNvlink), 0);
  EXPECT_EQ(cluster.Group(TopologyLevel::kLeaf, 97).nodes.size(), 21u);  // 3125 - 97 * 32
}

TEST(ClusterShapeTest, SmallShapeUsesDefaults) {
  const model::Cluster cluster = BuildShape("16 nodes x 8 GPUs");
  EXPECT_EQ(cluster.nodes().size(), 16u);
  EXPECT_EQ(cluster.GroupCount(TopologyLevel::kLeaf), 1);
  EXPECT_EQ(cluster.GroupCount(TopologyLevel::kSpine), 1);
  EXPECT_EQ(cluster.model_name(cluster.nodes()[0].model), "H100");
  EXPECT_EQ(cluster.gpu(model::GpuId(0)).memory, 80 * kGiB);
}

TEST(ClusterShapeTest, NvlinkRackShape) {
  const Result<model::ClusterShape> shape =
      ParseClusterShape("18 nodes x 4 GPUs, 18 nodes per NVLink domain, GPU model GB200, 192Gi per GPU");
  ASSERT_TRUE(shape.ok()) << shape.status().message();
  EXPECT_EQ(shape->nvlink_domain_nodes, 18);
  EXPECT_EQ(shape->gpu_model, "GB200");
  EXPECT_EQ(shape->gpu_memory, 192 * kGiB);
  EXPECT_EQ(shape->nodes_per_leaf, 18);  // a rack is a leaf unless told otherwise

  const model::Cluster cluster =
      BuildShape("18 nodes x 4 GPUs, 18 nodes per NVLink domain, GPU model GB200, 192Gi per GPU");
  EXPECT_EQ(cluster.GroupCount(TopologyLevel::kNvlink), 1);
  EXPECT_EQ(cluster.Group(TopologyLevel::kNvlink, 0).name, "nvl-0000");
  EXPECT_EQ(cluster.Group(TopologyLevel::kNvlink, 0).nodes.size(), 18u);
  EXPECT_EQ(cluster.GroupCount(TopologyLevel::kLeaf), 1);
  EXPECT_EQ(cluster.model_name(cluster.nodes()[0].model), "GB200");
  // Every GPU of the rack is in the same NVLink domain.
  EXPECT_EQ(cluster.gpus().front().nvlink, cluster.gpus().back().nvlink);
}

TEST(ClusterShapeTest, SeveralNvlinkRacks) {
  const model::Cluster cluster = BuildShape("72 nodes x 4 GPUs, 18 nodes per nvlink domain, 36 nodes per leaf");
  EXPECT_EQ(cluster.GroupCount(TopologyLevel::kNvlink), 4);
  EXPECT_EQ(cluster.GroupCount(TopologyLevel::kLeaf), 2);
  EXPECT_EQ(cluster.GroupOf(model::NodeId(17), TopologyLevel::kNvlink), 0);
  EXPECT_EQ(cluster.GroupOf(model::NodeId(18), TopologyLevel::kNvlink), 1);
  EXPECT_NE(cluster.gpus().front().nvlink, cluster.gpus().back().nvlink);
}

TEST(ClusterShapeTest, WordsAreCaseInsensitiveAndOtherClausesWork) {
  const Result<model::ClusterShape> shape = ParseClusterShape(
      "4 NODES X 2 gpus, 2 Nodes Per Leaf, 1 leaf per spine, gpu model a100, 40Gi per gpu, 64 CPUs per node, "
      "512Gi memory per node, 1 NUMA socket");
  ASSERT_TRUE(shape.ok()) << shape.status().message();
  EXPECT_EQ(shape->nodes, 4);
  EXPECT_EQ(shape->gpus_per_node, 2);
  EXPECT_EQ(shape->nodes_per_leaf, 2);
  EXPECT_EQ(shape->leaves_per_spine, 1);
  EXPECT_EQ(shape->gpu_model, "a100");  // the name keeps its case
  EXPECT_EQ(shape->gpu_memory, 40 * kGiB);
  EXPECT_EQ(shape->cpu_milli, 64'000);
  EXPECT_EQ(shape->memory, 512 * kGiB);
  EXPECT_EQ(shape->numa_sockets, 1);
  const std::vector<model::NodeSpec> nodes = model::GenerateNodes(*shape);
  EXPECT_EQ(nodes[3].leaf, "leaf-001");
  EXPECT_EQ(nodes[3].spine, "spine-01");
}

TEST(ClusterShapeTest, RejectsWhatItCannotRead) {
  const auto error = [](const std::string& text) {
    const Result<model::ClusterShape> shape = ParseClusterShape(text);
    EXPECT_FALSE(shape.ok()) << text;
    return shape.status().message();
  };
  EXPECT_THAT(error("16 nodes by 8 GPUs"), HasSubstr("must start with '<N> nodes x <G> GPUs'"));
  EXPECT_THAT(error(""), HasSubstr("must start with"));
  EXPECT_THAT(error("0 nodes x 8 GPUs"), HasSubstr("not a node count"));
  EXPECT_THAT(error("16 nodes x 65 GPUs"), HasSubstr("between 0 and 64"));
  EXPECT_THAT(error("16 nodes x 8 GPUs, 4 nodes per rack"), HasSubstr("cannot read '4 nodes per rack'"));
  EXPECT_THAT(error("16 nodes x 8 GPUs, 0 nodes per leaf"), HasSubstr("not a valid amount"));
  EXPECT_THAT(error("16 nodes x 8 GPUs, 4 nodes per leaf, 8 nodes per leaf"), HasSubstr("given twice"));
  EXPECT_THAT(error("16 nodes x 8 GPUs, lots per GPU"), HasSubstr("'lots' is not a valid amount"));
  EXPECT_THAT(error("36 nodes x 4 GPUs, 18 nodes per NVLink domain, 32 nodes per leaf"),
              HasSubstr("multiple of nodes per NVLink domain"));
}

constexpr char kExplicitNodes[] = R"(apiVersion: tessera/v1
kind: Cluster
metadata: {name: lab}
spec:
  nodes:
    - {name: dgx-01, gpus: 8, gpuModel: H100, gpuMemory: 80Gi, cpus: 96, memory: 1Ti, leaf: leaf-a, spine: spine-1, numaSockets: 2, nvlinkDomains: 2}
    - {name: gb-01, gpus: 4, gpuModel: GB200, gpuMemory: 192Gi, cpus: 72, memory: 480Gi, leaf: leaf-b, spine: spine-1, nvlinkGroup: nvl72-a}
    - {name: gb-02, gpus: 4, gpuModel: GB200, gpuMemory: 192Gi, cpus: 72, memory: 480Gi, leaf: leaf-b, spine: spine-1, nvlinkGroup: nvl72-a}
    - name: cpu-01
      gpus: 0
      cpus: 128
      memory: 512Gi
)";

TEST(ClusterYamlTest, ParsesExplicitNodes) {
  const Result<std::vector<model::NodeSpec>> nodes = ParseClusterYaml(kExplicitNodes, "lab.yaml");
  ASSERT_TRUE(nodes.ok()) << nodes.status().message();
  ASSERT_EQ(nodes->size(), 4u);
  const model::NodeSpec& dgx = (*nodes)[0];
  EXPECT_EQ(dgx.name, "dgx-01");
  EXPECT_EQ(dgx.gpus, 8);
  EXPECT_EQ(dgx.gpu_model, "H100");
  EXPECT_EQ(dgx.gpu_memory, 80 * kGiB);
  EXPECT_EQ(dgx.cpu_milli, 96'000);
  EXPECT_EQ(dgx.memory, 1024 * kGiB);
  EXPECT_EQ(dgx.leaf, "leaf-a");
  EXPECT_EQ(dgx.spine, "spine-1");
  EXPECT_EQ(dgx.numa_sockets, 2);
  EXPECT_EQ(dgx.nvlink_domains, 2);
  EXPECT_EQ((*nodes)[1].nvlink_group, "nvl72-a");
  EXPECT_EQ((*nodes)[3].gpus, 0);

  const Result<model::Cluster> cluster = model::Cluster::Build(*nodes);
  ASSERT_TRUE(cluster.ok()) << cluster.status().message();
  EXPECT_EQ(cluster->GroupCount(TopologyLevel::kLeaf), 3);  // leaf-a, leaf-b, and cpu-01's default
  EXPECT_EQ(cluster->GroupCount(TopologyLevel::kNvlink), 1);
  EXPECT_EQ(cluster->Group(TopologyLevel::kNvlink, 0).nodes.size(), 2u);
  EXPECT_EQ(cluster->node(model::NodeId(0)).nvlink_masks.size(), 2u);
  EXPECT_EQ(cluster->model_count(), 3u);  // H100, GB200 and the CPU node's "generic"
}

TEST(ClusterYamlTest, ReadsHowNodesShareTheirGpus) {
  const auto nodes = ParseClusterYaml(R"(apiVersion: tessera/v1
kind: Cluster
spec:
  generate: {nodes: 2, gpuSharing: exclusive}
  nodes:
    - {name: a, gpus: 8, gpuModel: H100, gpuMemory: 80Gi, cpus: 8, memory: 64Gi, gpuSharing: [vgpu, mps]}
    - {name: b, gpus: 8, gpuModel: H100, gpuMemory: 80Gi, cpus: 8, memory: 64Gi}
)", "c.yaml");
  ASSERT_TRUE(nodes.ok()) << nodes.status().message();
  EXPECT_TRUE((*nodes)[0].sharing.empty());
  EXPECT_EQ((*nodes)[2].sharing, model::GpuSharingSet::Of({model::GpuSharing::kVgpu, model::GpuSharing::kMps}));
  EXPECT_EQ((*nodes)[3].sharing, model::kDefaultGpuSharing);
  const auto bad = ParseClusterYaml("apiVersion: tessera/v1\nkind: Cluster\nspec:\n  generate: {nodes: 1, gpuSharing: [vgpu, mig]}\n", "c.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("spec.generate.gpuSharing: unknown GPU sharing mode 'mig'"));
}

TEST(ClusterYamlTest, ReadsTheMigDevicesOfANodesGpus) {
  const auto nodes = ParseClusterYaml(R"(apiVersion: tessera/v1
kind: Cluster
spec:
  nodes:
    - {name: a, gpus: 4, gpuModel: H100, gpuMemory: 80Gi, cpus: 8, memory: 64Gi, mig: {0: [1g.10gb, 3g.40gb], 3: [7g.80gb]}}
)", "c.yaml");
  ASSERT_TRUE(nodes.ok()) << nodes.status().message();
  EXPECT_EQ((*nodes)[0].gpu_mig, (std::vector<std::vector<std::string>>{{"1g.10gb", "3g.40gb"}, {}, {}, {"7g.80gb"}}));
  const Result<model::Cluster> cluster = model::Cluster::Build(*nodes);
  ASSERT_TRUE(cluster.ok()) << cluster.status().message();
  EXPECT_EQ(cluster->node(model::NodeId(0)).free_gpus(), 2) << "GPUs 0 and 3 are MIG devices only";
}

TEST(ClusterYamlTest, GeneratedNodesComeFirst) {
  const Result<std::vector<model::NodeSpec>> nodes = ParseClusterYaml(R"(apiVersion: tessera/v1
kind: Cluster
spec:
  generate: {nodes: 6, gpusPerNode: 4, gpuModel: L40S, gpuMemory: 48Gi, cpus: 64, memory: 256Gi, nodesPerLeaf: 2, leavesPerSpine: 2}
  nodes:
    - {name: extra, gpus: 2, gpuModel: A100, gpuMemory: 40Gi, cpus: 32, memory: 128Gi}
)",
                                                                      "gen.yaml");
  ASSERT_TRUE(nodes.ok()) << nodes.status().message();
  ASSERT_EQ(nodes->size(), 7u);
  EXPECT_EQ((*nodes)[0].name, "node-00000");
  EXPECT_EQ((*nodes)[0].gpu_model, "L40S");
  EXPECT_EQ((*nodes)[0].gpu_memory, 48 * kGiB);
  EXPECT_EQ((*nodes)[5].leaf, "leaf-002");
  EXPECT_EQ((*nodes)[5].spine, "spine-01");
  EXPECT_EQ((*nodes)[6].name, "extra");
  const Result<model::Cluster> cluster = model::Cluster::Build(*nodes);
  ASSERT_TRUE(cluster.ok()) << cluster.status().message();
  EXPECT_EQ(cluster->GroupCount(TopologyLevel::kLeaf), 4);  // three generated and leaf-0
}

// Every bad input names the source, line, field path and reason.
struct BadCluster {
  const char* name;
  const char* yaml;
  std::vector<const char*> expect;
};

class ClusterYamlErrorTest : public ::testing::TestWithParam<BadCluster> {};

TEST_P(ClusterYamlErrorTest, NamesLineFieldAndReason) {
  const Result<std::vector<model::NodeSpec>> nodes = ParseClusterYaml(GetParam().yaml, "c.yaml");
  ASSERT_FALSE(nodes.ok());
  EXPECT_EQ(nodes.status().code(), StatusCode::kInvalidArgument);
  for (const char* part : GetParam().expect) EXPECT_THAT(nodes.status().message(), HasSubstr(part));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ClusterYamlErrorTest,
    ::testing::Values(
        BadCluster{"MalformedYaml", "apiVersion: tessera/v1\nkind: Cluster\nspec:\n  nodes: [{name: a\n",
                   {"c.yaml:5:1: malformed YAML: did not find expected ',' or '}' (while parsing a flow mapping)"}},
        BadCluster{"BadIndentation", "apiVersion: tessera/v1\nkind: Cluster\nspec:\n  nodes: []\n    x: 1\n",
                   {"c.yaml:5:", "malformed YAML"}},
        BadCluster{"UnknownTopField", "apiVersion: tessera/v1\nkind: Cluster\nspecs: {}\n",
                   {"c.yaml:3:1: specs: unknown field 'specs'; allowed: apiVersion, kind, metadata, spec"}},
        BadCluster{"UnknownSpecField", "apiVersion: tessera/v1\nkind: Cluster\nspec:\n  node: []\n",
                   {"c.yaml:4:3: spec.node: unknown field 'node'; allowed: generate, nodes"}},
        BadCluster{"UnknownNodeField",
                   "apiVersion: tessera/v1\nkind: Cluster\nspec:\n  nodes:\n"
                   "    - {name: a, gpus: 1, gpuModel: H100, gpuMemory: 80Gi, cpus: 8, memory: 64Gi}\n"
                   "    - {name: b, gpu: 1, cpus: 8, memory: 64Gi}\n",
                   {"c.yaml:6:17: spec.nodes[1].gpu: unknown field 'gpu'"}},
        BadCluster{"UnknownGenerateField", "apiVersion: tessera/v1\nkind: Cluster\nspec:\n  generate:\n    nodes: 4\n    gpus: 8\n",
                   {"c.yaml:6:5: spec.generate.gpus: unknown field 'gpus'; allowed: nodes, gpusPerNode"}},
        BadCluster{"WrongType",
                   "apiVersion: tessera/v1\nkind: Cluster\nspec:\n  nodes:\n"
                   "    - {name: a, gpus: eight, cpus: 8, memory: 64Gi}\n",
                   {"c.yaml:5:23: spec.nodes[0].gpus: expected an integer, got 'eight'"}},
        BadCluster{"BadMemory", "apiVersion: tessera/v1\nkind: Cluster\nspec:\n  generate: {nodes: 2, memory: 1TB}\n",
                   {"c.yaml:4:32: spec.generate.memory: '1TB' is not a memory size"}},
        BadCluster{"ZeroNodes", "apiVersion: tessera/v1\nkind: Cluster\nspec:\n  generate: {nodes: 0}\n",
                   {"c.yaml:4:21: spec.generate.nodes: must be between 1 and"}},
        BadCluster{"MissingName", "apiVersion: tessera/v1\nkind: Cluster\nspec:\n  nodes:\n    - {gpus: 0, cpus: 8, memory: 64Gi}\n",
                   {"c.yaml:5:7: spec.nodes[0].name: required field is missing"}},
        BadCluster{"GpusWithoutMemory",
                   "apiVersion: tessera/v1\nkind: Cluster\nspec:\n  nodes:\n"
                   "    - {name: a, gpus: 8, gpuModel: H100, cpus: 8, memory: 64Gi}\n",
                   {"c.yaml:5:", "spec.nodes[0].gpuMemory: required field is missing"}},
        BadCluster{"DuplicateNode",
                   "apiVersion: tessera/v1\nkind: Cluster\nspec:\n  generate: {nodes: 2}\n  nodes:\n"
                   "    - {name: node-00001, gpus: 0, cpus: 8, memory: 64Gi}\n",
                   {"c.yaml:6:7: spec.nodes[0]: node 'node-00001' is defined twice (first at c.yaml:4:13)"}},
        BadCluster{"LeafUnderTwoSpines",
                   "apiVersion: tessera/v1\nkind: Cluster\nspec:\n  nodes:\n"
                   "    - {name: a, gpus: 0, cpus: 8, memory: 64Gi, leaf: l1, spine: s1}\n"
                   "    - {name: b, gpus: 0, cpus: 8, memory: 64Gi, leaf: l1, spine: s2}\n",
                   {"c.yaml:6:7: spec.nodes[1]: leaf 'l1' is under spine 's1'", "a leaf switch has one spine"}},
        BadCluster{"NvlinkStraddlesLeaves",
                   "apiVersion: tessera/v1\nkind: Cluster\nspec:\n"
                   "  generate: {nodes: 36, nvlinkDomainNodes: 18, nodesPerLeaf: 12}\n",
                   {"c.yaml:4:62: spec.generate.nodesPerLeaf: an NVLink domain must sit inside one leaf"}},
        BadCluster{"WrongApiVersion", "apiVersion: v1\nkind: Cluster\nspec: {}\n",
                   {"c.yaml:1:13: apiVersion: expected 'tessera/v1', got 'v1'"}},
        BadCluster{"WrongKind", "apiVersion: tessera/v1\nkind: Job\nspec: {}\n",
                   {"c.yaml:2:7: kind: expected a Cluster document, got kind 'Job'"}},
        BadCluster{"NoNodes", "apiVersion: tessera/v1\nkind: Cluster\nspec: {}\n",
                   {"c.yaml:3:7: spec: a Cluster lists its nodes"}},
        BadCluster{"TwoDocuments", "apiVersion: tessera/v1\nkind: Cluster\nspec: {generate: {nodes: 1}}\n---\nkind: Cluster\n",
                   {"c.yaml:5:1: expected one Cluster document, found 2"}},
        BadCluster{"MigGpuOutOfRange",
                   "apiVersion: tessera/v1\nkind: Cluster\nspec:\n  nodes:\n"
                   "    - {name: a, gpus: 2, gpuModel: H100, gpuMemory: 80Gi, cpus: 8, memory: 64Gi, mig: {2: [1g.10gb]}}\n",
                   {"c.yaml:5:", "spec.nodes[0].mig: must be between 0 and 1, got 2"}},
        BadCluster{"NotAMigProfile",
                   "apiVersion: tessera/v1\nkind: Cluster\nspec:\n  nodes:\n"
                   "    - {name: a, gpus: 2, gpuModel: H100, gpuMemory: 80Gi, cpus: 8, memory: 64Gi, mig: {0: [1g10gb]}}\n",
                   {"c.yaml:5:", "spec.nodes[0].mig.0[0]: '1g10gb' is not a MIG profile"}},
        BadCluster{"DuplicateKey", "apiVersion: tessera/v1\nkind: Cluster\nspec:\n  generate: {nodes: 1, nodes: 2}\n",
                   {"c.yaml:4:24: spec.generate.nodes: field 'nodes' is written twice (first at c.yaml:4:14)"}}),
    [](const ::testing::TestParamInfo<BadCluster>& param) { return std::string(param.param.name); });

TEST(LoadClusterTest, AcceptsAShape) {
  const Result<model::Cluster> cluster = LoadCluster("16 nodes x 8 GPUs, 4 nodes per leaf, 2 leaves per spine");
  ASSERT_TRUE(cluster.ok()) << cluster.status().message();
  EXPECT_EQ(cluster->nodes().size(), 16u);
  EXPECT_EQ(cluster->GroupCount(TopologyLevel::kLeaf), 4);
  EXPECT_EQ(cluster->GroupCount(TopologyLevel::kSpine), 2);
}

TEST(LoadClusterTest, ReadsAFile) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("tessera_cluster_test_" + std::to_string(::getpid()) + ".yaml");
  {
    std::ofstream out(path);
    out << kExplicitNodes;
  }
  const Result<model::Cluster> cluster = LoadCluster(path.string());
  std::filesystem::remove(path);
  ASSERT_TRUE(cluster.ok()) << cluster.status().message();
  EXPECT_EQ(cluster->nodes().size(), 4u);
  EXPECT_EQ(cluster->node(*cluster->FindNode("gb-02")).gpu_count, 4);
}

TEST(LoadClusterTest, ErrorsNameTheFileOrTheShape) {
  const Result<model::Cluster> missing = LoadCluster("no/such/cluster.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("cluster file 'no/such/cluster.yaml' does not exist"));

  const Result<model::Cluster> bad = LoadCluster("many nodes");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), AllOf(HasSubstr("cluster shape 'many nodes'"), HasSubstr("write e.g.")));
}

}  // namespace
}  // namespace tessera::spec
