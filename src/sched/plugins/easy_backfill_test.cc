#include "sched/plugins/easy_backfill.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "sched/registry.h"
#include "sched/scheduler.h"
#include "sched/session.h"
#include "sched/test_fixtures.h"

namespace tessera::sched {
namespace {

using fixtures::MakeCluster;
using fixtures::MakeJob;
using fixtures::WholeGpus;
using model::JobId;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr Seconds kDefaultWalltime = 3000;
constexpr Time kNow = 200;

struct Snapshot {
  model::Resources allocated;
  std::vector<JobId> running, pending;
  std::vector<std::vector<model::TaskPlacement>> placements;
  std::vector<Time> start_times, checkpoints;
  std::vector<model::Resources> queue_allocated;
  bool operator==(const Snapshot&) const = default;
};

Snapshot Take(const SchedulerState& state) {
  Snapshot s;
  s.allocated = state.cluster().allocated();
  // The pending and running sets are sets: their order is not kept.
  s.running = state.jobs().running();
  s.pending = state.jobs().pending();
  std::sort(s.pending.begin(), s.pending.end());
  std::sort(s.running.begin(), s.running.end());
  for (const model::Job& j : state.jobs().all()) {
    s.placements.push_back(j.placements);
    s.start_times.push_back(j.start_time);
    s.checkpoints.push_back(j.last_checkpoint);
  }
  for (const model::Queue& q : state.queues().queues()) s.queue_allocated.push_back(q.allocated);
  return s;
}

// Two 8-GPU nodes, full: "a" holds n0, "b" and "c" half of n1 each.
class EasyBackfillTest : public ::testing::Test {
 protected:
  EasyBackfillTest() : state_(fixtures::MakeState(MakeCluster(2, 8))) {
    config_.default_walltime = kDefaultWalltime;
    plugins_ = std::move(BuildPlugins(config_)).value();
  }

  JobId Run(const std::string& name, std::int32_t node, std::vector<std::int32_t> locals, Time start, Seconds walltime) {
    const auto gpus = static_cast<std::int64_t>(locals.size()) * 1000;
    return fixtures::StartJobOn(state_, MakeJob({.name = name, .gpu_milli = gpus, .walltime = walltime}),
                                {WholeGpus(state_.cluster(), node, locals)}, start);
  }
  // a: n0, ends by the default walltime; b: n1 0-3 ends at `b_end`; c: n1 4-7 ends at 600.
  void Fill(Seconds a_walltime, Time b_end) {
    Run("a", 0, {0, 1, 2, 3, 4, 5, 6, 7}, 0, a_walltime);
    Run("b", 1, {0, 1, 2, 3}, 0, b_end);
    Run("c", 1, {4, 5, 6, 7}, 100, 500);
  }
  std::optional<Reservation> Reserve(JobId head) {
    Session session(state_, plugins_, config_, kNow);
    const Snapshot before = Take(state_);
    auto reservation = EasyBackfill().Reserve(session, head);
    EXPECT_TRUE(Take(state_) == before) << "Reserve changed the state";
    EXPECT_EQ(session.statement().Mark(), 0u) << "Reserve left operations in the statement";
    EXPECT_THAT(state_.cluster().AuditIndexes(), IsEmpty());
    return reservation;
  }

  // One policy across cycles, as the scheduler holds it.
  std::optional<Reservation> ReserveAt(EasyBackfill& policy, JobId head, Time now) {
    Session session(state_, plugins_, config_, now);
    return policy.Reserve(session, head);
  }

  SchedulerConfig config_;
  Plugins plugins_;
  SchedulerState state_;
};

TEST_F(EasyBackfillTest, StartsAtTheFirstEndAfterWhichTheHeadFits) {
  Fill(0, 2000);
  const JobId head = state_.Submit(MakeJob({.name = "head", .gpu_milli = 8000}), 150);
  const auto reservation = Reserve(head);
  ASSERT_TRUE(reservation.has_value());
  EXPECT_EQ(reservation->job, head);
  // c ends at 600 (4 GPUs free: not enough), b at 2000 frees all of n1.
  EXPECT_EQ(reservation->start, 2000);
  EXPECT_THAT(reservation->nodes, ElementsAre(0, 1));
}

TEST_F(EasyBackfillTest, JobsWithoutWalltimeEndByTheDefault) {
  Fill(0, 5000);  // a gives no walltime: expected to end at 0 + 3000, before b
  const JobId head = state_.Submit(MakeJob({.name = "head", .gpu_milli = 8000}), 150);
  const auto reservation = Reserve(head);
  ASSERT_TRUE(reservation.has_value());
  EXPECT_EQ(reservation->start, kDefaultWalltime);
  EXPECT_THAT(reservation->nodes, ElementsAre(1, 0));
}

TEST_F(EasyBackfillTest, AJobPastItsEstimateIsExpectedToEndNow) {
  Fill(100, 5000);  // a should have ended at 100
  const JobId head = state_.Submit(MakeJob({.name = "head", .gpu_milli = 8000}), 150);
  const auto reservation = Reserve(head);
  ASSERT_TRUE(reservation.has_value());
  EXPECT_EQ(reservation->start, kNow);
  EXPECT_THAT(reservation->nodes, ElementsAre(1, 0));
}

TEST_F(EasyBackfillTest, ReservesOnlyTheNodesTheHeadWouldGet) {
  Fill(0, 2000);
  const JobId head = state_.Submit(MakeJob({.name = "head", .gpu_milli = 4000}), 150);
  const auto reservation = Reserve(head);
  ASSERT_TRUE(reservation.has_value());
  EXPECT_EQ(reservation->start, 600);  // c's four GPUs on n1 suffice
  EXPECT_THAT(reservation->nodes, ElementsAre(0, 1));
}

TEST_F(EasyBackfillTest, GangReservationCoversEveryNodeOfItsPlacement) {
  Fill(0, 2000);
  const JobId head = state_.Submit(MakeJob({.name = "head", .gpu_milli = 4000, .replicas = 3}), 150);
  const auto reservation = Reserve(head);
  ASSERT_TRUE(reservation.has_value());
  EXPECT_EQ(reservation->start, kDefaultWalltime);  // 12 GPUs only once a ends too
  EXPECT_THAT(reservation->nodes, ElementsAre(1, 1));
}

TEST_F(EasyBackfillTest, NoReservationWhenTheHeadNeverFits) {
  Fill(0, 2000);
  // Two whole nodes inside one node: not even an empty cluster holds it.
  const JobId head = state_.Submit(
      MakeJob({.name = "head", .gpu_milli = 8000, .replicas = 2, .topology = {model::TopologyLevel::kNode, true}}), 150);
  EXPECT_FALSE(Reserve(head).has_value());
}

TEST_F(EasyBackfillTest, AJobEndingEarlyMovesTheKeptStartForward) {
  Fill(0, 2000);
  const JobId head = state_.Submit(MakeJob({.name = "head", .gpu_milli = 8000}), 150);
  EasyBackfill policy;
  ASSERT_EQ(ReserveAt(policy, head, kNow)->start, 2000);
  state_.Finish(state_.jobs().FindByName("b"), model::JobState::kSucceeded, kNow);  // 1,700 s early
  const auto again = ReserveAt(policy, head, kNow + 10);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->start, 600) << "c's end now frees all of n1";
}

TEST_F(EasyBackfillTest, AJobStartedOnTheReservedGpusPastTheStartMovesTheReservation) {
  Run("a", 0, {0, 1, 2, 3, 4, 5, 6, 7}, 0, 0);  // n0 until 3000
  Run("c", 1, {4, 5, 6, 7}, 100, 500);          // n1 4-7 until 600; n1 0-3 free
  const JobId head = state_.Submit(MakeJob({.name = "head", .gpu_milli = 8000}), 150);
  EasyBackfill policy;
  ASSERT_EQ(ReserveAt(policy, head, kNow)->start, 600);
  Run("short", 1, {0, 1}, kNow, 300);  // ends at 500, before the start: the plan holds
  EXPECT_EQ(ReserveAt(policy, head, kNow + 1)->start, 600);
  Run("long", 1, {2, 3}, kNow + 2, 5000);  // placed ahead of the head: n1 is taken past 600
  const auto moved = ReserveAt(policy, head, kNow + 3);
  ASSERT_TRUE(moved.has_value());
  EXPECT_EQ(moved->start, kDefaultWalltime);
  EXPECT_THAT(moved->nodes, ElementsAre(1, 0));
}

TEST_F(EasyBackfillTest, ACordonedReservedNodeMovesTheReservation) {
  Run("a", 0, {0, 1, 2, 3, 4, 5, 6, 7}, 0, 0);
  Run("c", 1, {4, 5, 6, 7}, 100, 500);
  const JobId head = state_.Submit(MakeJob({.name = "head", .gpu_milli = 8000}), 150);
  EasyBackfill policy;
  ASSERT_THAT(ReserveAt(policy, head, kNow)->nodes, ElementsAre(0, 1));
  state_.cluster().SetSchedulable(model::NodeId(1), false);
  const auto moved = ReserveAt(policy, head, kNow + 1);
  ASSERT_TRUE(moved.has_value());
  EXPECT_THAT(moved->nodes, ElementsAre(1, 0));
  EXPECT_EQ(moved->start, kDefaultWalltime);
}

TEST_F(EasyBackfillTest, BackfillRunsShortJobsAndKeepsLongOnesOffTheReservedNodes) {
  Run("a", 0, {0, 1, 2, 3, 4, 5, 6, 7}, 0, 0);  // n0 until 3000
  Run("c", 1, {4, 5, 6, 7}, 100, 500);          // half of n1 until 600; n1 0-3 free
  const JobId head = state_.Submit(MakeJob({.name = "head", .gpu_milli = 8000}), 150);
  const JobId long_job = state_.Submit(MakeJob({.name = "long", .gpu_milli = 2000, .walltime = 5000}), 160);
  const JobId short_job = state_.Submit(MakeJob({.name = "short", .gpu_milli = 2000, .walltime = 300}), 170);

  Result<Scheduler> scheduler = Scheduler::Create(config_);
  ASSERT_TRUE(scheduler.ok()) << scheduler.status().message();
  NullBinder binder;
  const CycleResult result = scheduler->RunCycle(state_, kNow, binder);

  ASSERT_TRUE(result.reservation.has_value());
  EXPECT_EQ(result.reservation->job, head);
  EXPECT_EQ(result.reservation->start, 600);
  EXPECT_THAT(result.reservation->nodes, ElementsAre(0, 1));
  ASSERT_EQ(result.outcomes.size(), 3u);
  EXPECT_EQ(result.outcomes[0].job, head);
  EXPECT_EQ(result.outcomes[0].reason, WaitReason::kCapacity);
  EXPECT_EQ(result.outcomes[1].job, long_job);
  EXPECT_EQ(result.outcomes[1].verdict, Verdict::kNotNow);
  EXPECT_EQ(result.outcomes[1].reason, WaitReason::kReservation);
  EXPECT_EQ(result.outcomes[1].detail, head.value());
  EXPECT_EQ(result.outcomes[2].job, short_job);
  EXPECT_EQ(result.outcomes[2].verdict, Verdict::kPlaced);
  EXPECT_TRUE(result.outcomes[2].backfilled);
  EXPECT_EQ(state_.job(short_job).state, model::JobState::kRunning);
  EXPECT_EQ(state_.job(long_job).state, model::JobState::kPending);
  EXPECT_EQ(state_.job(head).state, model::JobState::kPending);
}

}  // namespace
}  // namespace tessera::sched
