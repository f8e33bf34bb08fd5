#include "sched/registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sched/scheduler.h"
#include "sched/test_fixtures.h"

namespace tessera::sched {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(RegistryTest, DefaultsBuildEveryPlugin) {
  const Result<Plugins> plugins = BuildPlugins(SchedulerConfig{});
  ASSERT_TRUE(plugins.ok()) << plugins.status().message();
  EXPECT_NE(plugins->job_order, nullptr);
  EXPECT_NE(plugins->queue_order, nullptr);
  EXPECT_NE(plugins->admission, nullptr);
  EXPECT_NE(plugins->placement, nullptr);
  EXPECT_NE(plugins->victim_cost, nullptr);
  EXPECT_NE(plugins->reservation, nullptr);
}

TEST(RegistryTest, ReservationNoneBuildsNoPolicy) {
  SchedulerConfig config;
  config.reservation = "none";
  const Result<Plugins> plugins = BuildPlugins(config);
  ASSERT_TRUE(plugins.ok()) << plugins.status().message();
  EXPECT_EQ(plugins->reservation, nullptr);
}

TEST(RegistryTest, ShortestFirstUsesTheConfiguredDefaultWalltime) {
  SchedulerConfig config;
  config.job_order = "shortest-first";
  config.default_walltime = 100;
  const Result<Plugins> plugins = BuildPlugins(config);
  ASSERT_TRUE(plugins.ok());
  model::Job none, hour;
  none.walltime = 0;
  hour.walltime = 3600;
  EXPECT_TRUE(plugins->job_order->Before(none, hour, 0));
  EXPECT_FALSE(plugins->job_order->Before(hour, none, 0));
}

TEST(RegistryTest, UnknownJobOrderListsTheKnownOnes) {
  SchedulerConfig config;
  config.job_order = "lifo";
  const Result<Plugins> plugins = BuildPlugins(config);
  ASSERT_FALSE(plugins.ok());
  EXPECT_EQ(plugins.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(plugins.status().message(),
              AllOf(HasSubstr("jobOrder"), HasSubstr("'lifo'"), HasSubstr("fifo"), HasSubstr("shortest-first")));
}

TEST(RegistryTest, EveryExtensionPointRejectsUnknownNames) {
  const auto expect_rejected = [](SchedulerConfig config, const char* point, const char* known) {
    const Result<Plugins> plugins = BuildPlugins(config);
    ASSERT_FALSE(plugins.ok()) << point;
    EXPECT_THAT(plugins.status().message(), AllOf(HasSubstr(point), HasSubstr("bogus"), HasSubstr(known)));
  };
  SchedulerConfig config;
  config.queue_order = "bogus";
  expect_rejected(config, "queueOrder", "drf");
  config = {};
  config.admission = "bogus";
  expect_rejected(config, "admission", "quota");
  config = {};
  config.placement = "bogus";
  expect_rejected(config, "placement", "topology-packing");
  config = {};
  config.victim_cost = "bogus";
  expect_rejected(config, "victimCost", "least-lost-work");
  config = {};
  config.reservation = "bogus";
  expect_rejected(config, "reservation", "easy-backfill, none");
}

TEST(RegistryTest, DefaultActionsBuildInOrder) {
  const auto actions = BuildActions(SchedulerConfig{});
  ASSERT_TRUE(actions.ok()) << actions.status().message();
  EXPECT_EQ(actions->size(), 4u);
}

TEST(RegistryTest, RejectsUnknownAction) {
  SchedulerConfig config;
  config.actions = {"allocate", "backfill", "defrag"};
  const auto actions = BuildActions(config);
  ASSERT_FALSE(actions.ok());
  EXPECT_THAT(actions.status().message(),
              AllOf(HasSubstr("'defrag'"), HasSubstr("allocate"), HasSubstr("backfill"), HasSubstr("reclaim"),
                    HasSubstr("preempt")));
}

TEST(RegistryTest, RejectsBackfillBeforeAllocate) {
  SchedulerConfig config;
  config.actions = {"backfill", "allocate"};
  const auto actions = BuildActions(config);
  ASSERT_FALSE(actions.ok());
  EXPECT_THAT(actions.status().message(), HasSubstr("backfill must come after allocate"));
}

TEST(RegistryTest, RequiresAllocate) {
  SchedulerConfig config;
  config.reservation = "none";
  config.actions = {"reclaim", "preempt"};
  const auto actions = BuildActions(config);
  ASSERT_FALSE(actions.ok());
  EXPECT_THAT(actions.status().message(), HasSubstr("allocate is required"));
}

TEST(RegistryTest, ReservationPolicyNeedsBackfill) {
  SchedulerConfig config;
  config.actions = {"allocate", "reclaim", "preempt"};
  const auto actions = BuildActions(config);
  ASSERT_FALSE(actions.ok());
  EXPECT_THAT(actions.status().message(), AllOf(HasSubstr("easy-backfill"), HasSubstr("backfill action")));
  // Without a reservation policy the same actions are fine.
  config.reservation = "none";
  const auto plain = BuildActions(config);
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  EXPECT_EQ(plain->size(), 3u);
}

TEST(RegistryTest, SchedulerCreateRejectsABadConfig) {
  SchedulerConfig config;
  config.placement = "round-robin";  // no such policy
  EXPECT_FALSE(Scheduler::Create(config).ok());
  config = {};
  config.actions = {"allocate"};
  EXPECT_FALSE(Scheduler::Create(config).ok());
}

TEST(RegistryTest, SchedulerWithDefaultsPlacesAJob) {
  Result<Scheduler> scheduler = Scheduler::Create(SchedulerConfig{});
  ASSERT_TRUE(scheduler.ok()) << scheduler.status().message();
  EXPECT_EQ(scheduler->config().job_order, "gittins");
  SchedulerState state = fixtures::MakeState(fixtures::MakeCluster(1, 8));
  const model::JobId id = state.Submit(fixtures::MakeJob({.gpu_milli = 2000}), 0);
  NullBinder binder;
  const CycleResult result = scheduler->RunCycle(state, 10, binder);
  EXPECT_EQ(result.placed, 1);
  EXPECT_EQ(state.job(id).state, model::JobState::kRunning);
  EXPECT_EQ(state.cluster().allocated().gpu_milli, 2000);
}

}  // namespace
}  // namespace tessera::sched
