#include "cli/slurm/hostlist.h"

#include <gtest/gtest.h>

namespace tessera::cli::slurm {
namespace {

TEST(HostlistTest, FoldsRunsKeepingZeroPadding) {
  EXPECT_EQ(CompressHostlist({"gpu-001", "gpu-002", "gpu-003", "gpu-004", "gpu-007"}), "gpu-[001-004,007]");
  EXPECT_EQ(CompressHostlist({"gpu-007", "gpu-001", "gpu-002"}), "gpu-[001-002,007]");  // sorted within a prefix
  EXPECT_EQ(CompressHostlist({"n1"}), "n1");
  EXPECT_EQ(CompressHostlist({"n1", "n2"}), "n[1-2]");
  EXPECT_EQ(CompressHostlist({"n9", "n10", "n11"}), "n[9-11]");  // unpadded numbers of different widths
  EXPECT_EQ(CompressHostlist({"n1", "n3", "n5"}), "n[1,3,5]");
  EXPECT_EQ(CompressHostlist({}), "");
}

TEST(HostlistTest, SeparatesPrefixesAndWidthsAndKeepsPlainNames) {
  EXPECT_EQ(CompressHostlist({"a01", "b01", "a02"}), "a[01-02],b01");
  EXPECT_EQ(CompressHostlist({"gpu01", "gpu001"}), "gpu01,gpu001");
  EXPECT_EQ(CompressHostlist({"login", "gpu-1", "gpu-2", "login"}), "login,gpu-[1-2]");
  EXPECT_EQ(CompressHostlist({"rack1-node4", "rack1-node5", "rack2-node4"}), "rack1-node[4-5],rack2-node4");
  EXPECT_EQ(CompressHostlist({"n2", "n2"}), "n2");  // duplicates once
}

TEST(HostlistTest, ExpandIsTheInverse) {
  const std::vector<std::string> names = {"gpu-001", "gpu-002", "gpu-003", "gpu-007", "login", "n9", "n10"};
  EXPECT_EQ(ExpandHostlist(CompressHostlist(names)), names);
  EXPECT_EQ(ExpandHostlist("gpu-[001-002],cpu1"), (std::vector<std::string>{"gpu-001", "gpu-002", "cpu1"}));
}

}  // namespace
}  // namespace tessera::cli::slurm
