// Each plugin's argument parser: defaults, values, and unknown keys refused by name.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "spec/plugin_args/fgd_args_yaml.h"
#include "spec/plugin_args/gittins_args_yaml.h"
#include "spec/plugin_args/las_args_yaml.h"
#include "spec/plugin_args/random_args_yaml.h"

namespace tessera::spec {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

YamlValue Yaml(const std::string& text) { return std::move(LoadYamlDocuments(text, "test.yaml")).value().at(0); }

TEST(PluginArgsYamlTest, LasReadsAscendingThresholds) {
  auto args = ParseLasArgs(Yaml("{thresholds: [600, 6000]}"));
  ASSERT_TRUE(args.ok()) << args.status().message();
  EXPECT_THAT(args->thresholds, ElementsAre(600.0, 6000.0));
  EXPECT_THAT(ParseLasArgs(Yaml("{thresholds: [600, 60]}")).status().message(), HasSubstr("ascending"));
}

TEST(PluginArgsYamlTest, LasRefusesAnUnknownKeyNamingIt) {
  EXPECT_THAT(ParseLasArgs(Yaml("{threshold: [600]}")).status().message(),
              HasSubstr("unknown field 'threshold'; allowed: thresholds"));
}

TEST(PluginArgsYamlTest, GittinsReadsItsDisplaceFactorAndRefusesOneBelowOne) {
  EXPECT_EQ(ParseGittinsArgs(Yaml("{}"))->displace_factor, 2.0);
  EXPECT_EQ(ParseGittinsArgs(Yaml("{displaceFactor: 4}"))->displace_factor, 4.0);
  EXPECT_THAT(ParseGittinsArgs(Yaml("{displaceFactor: 0.5}")).status().message(), HasSubstr("at least 1"));
  EXPECT_THAT(ParseGittinsArgs(Yaml("{factor: 3}")).status().message(), HasSubstr("unknown field 'factor'; allowed: displaceFactor"));
}

TEST(PluginArgsYamlTest, RandomRefusesAnUnknownKeyNamingIt) {
  EXPECT_EQ(ParseRandomArgs(Yaml("{seed: 7}"))->seed, 7u);
  EXPECT_THAT(ParseRandomArgs(Yaml("{sed: 7}")).status().message(), HasSubstr("unknown field 'sed'; allowed: seed"));
}

TEST(PluginArgsYamlTest, FgdReadsTheWorkloadAndRefusesAnUnknownKeyNamingIt) {
  auto args = ParseFgdArgs(Yaml("{workload: [{gpus: 0.5, cpus: 4, memory: 16Gi, weight: 3}, {gpus: 8}]}"));
  ASSERT_TRUE(args.ok()) << args.status().message();
  ASSERT_EQ(args->workload.size(), 2u);
  EXPECT_EQ(args->workload[0].gpu_milli, 500);
  EXPECT_EQ(args->workload[0].cpu_milli, 4000);
  EXPECT_EQ(args->workload[0].memory, std::int64_t{16} << 30);
  EXPECT_EQ(args->workload[0].weight, 3.0);
  EXPECT_EQ(args->workload[1].gpu_milli, 8000);
  EXPECT_THAT(ParseFgdArgs(Yaml("{work: []}")).status().message(), HasSubstr("unknown field 'work'; allowed: workload"));
  EXPECT_THAT(ParseFgdArgs(Yaml("{workload: [{gpu: 1}]}")).status().message(),
              HasSubstr("unknown field 'gpu'; allowed: gpus, cpus, memory, weight"));
}

}  // namespace
}  // namespace tessera::spec
