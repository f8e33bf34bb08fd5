#include "model/cluster_shape.h"

#include <gtest/gtest.h>

#include <vector>

namespace tessera::model {
namespace {

TEST(ClusterShape, NamesNodesLeavesAndSpinesInOrder) {
  const std::vector<NodeSpec> nodes =
      GenerateNodes({.nodes = 5, .gpus_per_node = 4, .nodes_per_leaf = 2, .leaves_per_spine = 2});
  ASSERT_EQ(nodes.size(), 5u);
  EXPECT_EQ(nodes[0].name, "node-00000");
  EXPECT_EQ(nodes[4].name, "node-00004");
  EXPECT_EQ(nodes[1].leaf, "leaf-000");
  EXPECT_EQ(nodes[2].leaf, "leaf-001");
  EXPECT_EQ(nodes[3].spine, "spine-00");
  EXPECT_EQ(nodes[4].leaf, "leaf-002");
  EXPECT_EQ(nodes[4].spine, "spine-01");
  EXPECT_EQ(nodes[4].gpus, 4);
  EXPECT_TRUE(nodes[4].nvlink_group.empty());
  EXPECT_TRUE(Cluster::Build(nodes).ok());
}

TEST(ClusterShape, NvlinkDomainsInsideEachNodeOrAcrossNodes) {
  EXPECT_EQ(GenerateNodes({.nodes = 1, .nvlink_domains = 2})[0].nvlink_domains, 2);
  const std::vector<NodeSpec> racks = GenerateNodes({.nodes = 4, .gpus_per_node = 4, .nvlink_domain_nodes = 2});
  EXPECT_EQ(racks[1].nvlink_group, "nvl-0000");
  EXPECT_EQ(racks[2].nvlink_group, "nvl-0001");
}

}  // namespace
}  // namespace tessera::model
