// The scheduler config reader: its pluginArgs block hands each plugin's
// arguments to that plugin's parser (spec/plugin_args/).
#include "spec/scheduler_yaml.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace tessera::spec {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

YamlValue Yaml(const std::string& text) { return std::move(LoadYamlDocuments(text, "test.yaml")).value().at(0); }

TEST(SchedulerYamlTest, TheSchedulerConfigReadsPluginArgsAndRefusesAnUnknownPlugin) {
  auto config = ParseSchedulerConfig(Yaml("{jobOrder: las, maxDomainTries: 4, pluginArgs: {las: {thresholds: [10]}}}"));
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->max_domain_tries, 4);
  EXPECT_THAT(config->plugin_args.las.thresholds, ElementsAre(10.0));
  EXPECT_EQ(config->plugin_args.random.seed, 1u);  // untouched: its default
  EXPECT_EQ(ParseSchedulerConfig(Yaml("{pluginArgs: {gittins: {displaceFactor: 3}}}"))->plugin_args.gittins.displace_factor, 3.0);
  EXPECT_THAT(ParseSchedulerConfig(Yaml("{pluginArgs: {lass: {}}}")).status().message(),
              HasSubstr("unknown field 'lass'; allowed: las, gittins, random, fgd"));
}

// What `tessera server` runs without --scheduler-config is the simulator's
// `default` (docs/simulator.md): the same SchedulerConfig, read from nothing.
TEST(SchedulerYamlTest, AnEmptySchedulerConfigIsTheDefaultPolicy) {
  auto config = ParseSchedulerConfig(Yaml("{}"));
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->job_order, "gittins");
  EXPECT_TRUE(config->preempt_by_job_order);
  EXPECT_EQ(config->reservation, "easy-backfill");
  EXPECT_THAT(config->actions, ElementsAre("allocate", "backfill", "reclaim", "preempt"));
  EXPECT_EQ(config->plugin_args.gittins.displace_factor, 2.0);
}

}  // namespace
}  // namespace tessera::spec
