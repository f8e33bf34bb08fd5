// The packing study on a synthetic fractional workload: it follows the
// protocol (every pod once, then draws until the demand is reached, drops
// what fits nowhere), is reproducible, and ranks the placements sensibly.
#include "simkit/packing.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/quantity.h"
#include "simkit/report.h"
#include "base/random.h"

namespace tessera::simkit {
namespace {

std::vector<model::NodeSpec> Nodes() {
  std::vector<model::NodeSpec> nodes;
  for (int i = 0; i < 16; ++i) {
    model::NodeSpec n;
    n.name = "n" + std::to_string(i);
    n.gpu_model = i < 8 ? "T4" : "V100";
    n.gpus = i < 8 ? 2 : 8;
    n.gpu_memory = 16 * kGiB;
    n.cpu_milli = 64000;
    n.memory = 256 * kGiB;
    nodes.push_back(n);
  }
  return nodes;
}

// Pods like Alibaba's: mostly fractions, some whole GPUs, a few CPU-only.
Workload Pods() {
  Workload pods{"synthetic", {}, {}};
  Rng rng(7);
  for (int i = 0; i < 150; ++i) {
    WorkloadJob pod;
    pod.job.name = "pod-" + std::to_string(i);
    model::TaskGroup group;
    group.name = "main";
    const double kind = rng.UniformReal();
    group.request.gpu_milli = kind < 0.6 ? rng.Uniform(1, 9) * 100 : kind < 0.9 ? 1000 * rng.Uniform(1, 2) : 0;
    group.request.cpu_milli = rng.Uniform(1, 8) * 1000;
    group.request.memory = rng.Uniform(1, 16) * kGiB;
    if (i % 10 == 0) group.request.gpu_model = "V100";
    pod.job.groups.push_back(group);
    pods.jobs.push_back(std::move(pod));
  }
  return pods;
}

TEST(PackingTest, FollowsTheProtocolAndIsReproducible) {
  PackingOptions options;
  options.seeds = 3;
  auto a = RunPacking(Nodes(), Pods(), options);
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_EQ(a->seeds.size(), 3u);
  for (const PackingCurve& c : a->seeds) {
    EXPECT_GE(c.arrived, 150);  // every pod once, then draws until 130% demand
    EXPECT_GT(c.dropped, 0);    // 130% cannot all fit
    EXPECT_GT(c.allocated, 0.5);
    EXPECT_LE(c.allocated, 1.0);
    ASSERT_FALSE(c.points.empty());
    EXPECT_GE(c.points.back().first, 1.29);  // the curve reaches the demand
    for (std::size_t i = 1; i < c.points.size(); ++i) {
      EXPECT_GE(c.points[i].second, c.points[i - 1].second);  // nothing departs
    }
  }
  auto b = RunPacking(Nodes(), Pods(), options);
  ASSERT_TRUE(b.ok());
  EXPECT_DOUBLE_EQ(a->mean_allocated, b->mean_allocated);
}

TEST(PackingTest, ReportShowsTheMeanCurve) {
  PackingOptions options;
  options.seeds = 2;
  auto r = RunPacking(Nodes(), Pods(), options);
  ASSERT_TRUE(r.ok());
  const std::string path = (std::filesystem::temp_directory_path() / "tessera_packing_report.html").string();
  ASSERT_TRUE(WritePackingHtmlReport(*r, {{"placement", "best-fit"}, {"mean_allocated", r->mean_allocated}}, path).ok());
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  const std::string html = text.str();
  EXPECT_NE(html.find("Allocated GPU capacity as demand arrives"), std::string::npos);
  EXPECT_NE(html.find("<polyline"), std::string::npos);
  EXPECT_NE(html.find("best-fit"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  std::filesystem::remove(path);
}

TEST(PackingTest, APodThatNamesAGpuModelPacksOnlyOntoThatModel) {
  // Whole-GPU pods that accept only T4s: the 8 T4 nodes hold 16 of the
  // cluster's 80 GPUs, so no placement may allocate more than 20%.
  Workload pods{"t4-only", {}, {}};
  for (int i = 0; i < 40; ++i) {
    WorkloadJob pod;
    pod.job.name = "pod-" + std::to_string(i);
    model::TaskGroup group;
    group.request.gpu_milli = 1000;
    group.request.cpu_milli = 1000;
    group.request.memory = kGiB;
    group.request.gpu_model = "T4";
    pod.job.groups.push_back(group);
    pods.jobs.push_back(std::move(pod));
  }
  PackingOptions options;
  options.seeds = 2;
  for (const char* placement : {"random", "topology-packing", "fgd"}) {
    options.placement = placement;
    auto r = RunPacking(Nodes(), pods, options);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_DOUBLE_EQ(r->mean_allocated, 16.0 / 80.0) << placement;
    for (const PackingCurve& c : r->seeds) EXPECT_GT(c.dropped, 0) << placement;
  }
}

TEST(PackingTest, PoliciesPackBetterThanRandom) {
  PackingOptions options;
  options.seeds = 5;
  double allocated[3];
  const char* placements[3] = {"random", "topology-packing", "fgd"};
  for (int p = 0; p < 3; ++p) {
    options.placement = placements[p];
    auto r = RunPacking(Nodes(), Pods(), options);
    ASSERT_TRUE(r.ok()) << r.status().message();
    allocated[p] = r->mean_allocated;
  }
  EXPECT_GT(allocated[1], allocated[0]) << "best-fit " << allocated[1] << " vs random " << allocated[0];
  EXPECT_GT(allocated[2], allocated[0]) << "fgd " << allocated[2] << " vs random " << allocated[0];
}

}  // namespace
}  // namespace tessera::simkit
