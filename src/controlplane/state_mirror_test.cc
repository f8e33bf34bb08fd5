// The control plane's two scheduler states: a cycle runs on the copy while
// the live state changes, and the two stay one state.
#include "controlplane/state_mirror.h"

#include <gtest/gtest.h>

#include <random>

#include "model/invariants.h"
#include "sched/scheduler.h"
#include "sched/test_fixtures.h"

namespace tessera::controlplane {
namespace {

using sched::fixtures::MakeCluster;
using sched::fixtures::MakeJob;
using sched::fixtures::MakeState;

class StateMirrorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    mirror_.Replace(std::make_unique<sched::SchedulerState>(MakeState(MakeCluster(2, 4))));
  }
  // A cycle, split as the control plane splits it: BeginCycle under the
  // mutex, the cycle on the copy, `meanwhile` (changes made by the API while
  // it runs), then EndCycle.
  bool Cycle(Time now, const std::function<void()>& meanwhile = [] {}) {
    StateMirror::CatchUp catch_up = mirror_.BeginCycle();
    sched::SchedulerState& copy = mirror_.CatchUpCopy(std::move(catch_up));
    decisions_ = CycleDecisions();
    decisions_.now = now;
    DecisionRecorder binder(decisions_);
    scheduler_.RunCycle(copy, now, binder);
    meanwhile();
    return mirror_.EndCycle(decisions_);
  }
  // The live state and a fresh catch-up of the copy hold the same jobs in the same states on the same GPUs.
  void ExpectSameState() {
    EXPECT_TRUE(model::CheckInvariants(mirror_->cluster(), mirror_->jobs().all(), mirror_->queues()).empty());
    sched::SchedulerState& copy = mirror_.CatchUpCopy(mirror_.BeginCycle());
    mirror_.EndCycle({});
    ASSERT_EQ(copy.jobs().all().size(), mirror_->jobs().all().size());
    for (const model::Job& job : mirror_->jobs().all()) {
      EXPECT_EQ(copy.job(job.id).state, job.state) << job.name;
      EXPECT_EQ(copy.job(job.id).placements.size(), job.placements.size()) << job.name;
    }
    EXPECT_EQ(copy.cluster().allocated().gpu_milli, mirror_->cluster().allocated().gpu_milli);
    EXPECT_TRUE(model::CheckInvariants(copy.cluster(), copy.jobs().all(), copy.queues()).empty());
  }

  StateMirror mirror_;
  sched::Scheduler scheduler_ = std::move(sched::Scheduler::Create({})).value();
  CycleDecisions decisions_;
};

TEST_F(StateMirrorTest, ACyclesDecisionsReachTheLiveStateAndSubmissionsDuringItTheNext) {
  const model::JobId first = mirror_.Submit(MakeJob({.name = "first", .gpu_milli = 4000}), 0);
  model::JobId during;
  ASSERT_TRUE(Cycle(1, [&] { during = mirror_.Submit(MakeJob({.name = "during", .gpu_milli = 4000}), 1); }));
  EXPECT_EQ(mirror_->job(first).state, model::JobState::kRunning);
  EXPECT_EQ(mirror_->job(during).state, model::JobState::kPending) << "submitted during the cycle: waits for the next";
  ASSERT_TRUE(Cycle(2));
  ASSERT_EQ(decisions_.bound.size(), 1u);
  EXPECT_EQ(decisions_.bound[0].first, during) << "the copy gave the submission the live state's id";
  EXPECT_EQ(mirror_->job(during).state, model::JobState::kRunning);
  ExpectSameState();
}

TEST_F(StateMirrorTest, CancellingAJobTheCycleJustPlacedDiscardsTheCycle) {
  const model::JobId job = mirror_.Submit(MakeJob({.name = "cancelled", .gpu_milli = 4000}), 0);
  EXPECT_FALSE(Cycle(1, [&] { mirror_.Finish(job, model::JobState::kCancelled, 1); }));
  EXPECT_EQ(decisions_.bound.size(), 1u) << "the copy placed it";
  EXPECT_EQ(mirror_->job(job).state, model::JobState::kCancelled);
  EXPECT_EQ(mirror_->cluster().allocated().gpu_milli, 0) << "no decision of a discarded cycle reaches the live state";
  ExpectSameState();
}

TEST_F(StateMirrorTest, ElementsAnArraySpawnsOnTheCopyAreTheLiveStatesToo) {
  const model::JobId array = mirror_.Submit(sched::fixtures::MakeArray(MakeJob({.name = "sweep"}), "0-99"), 0);
  model::JobId during;
  // A submission during the cycle takes an id after the array's reserved ones,
  // in both states: the elements keep theirs.
  ASSERT_TRUE(Cycle(1, [&] { during = mirror_.Submit(MakeJob({.name = "during"}), 1); }));
  ASSERT_EQ(decisions_.spawned.size(), 8u);
  EXPECT_EQ(decisions_.spawned[0], std::make_pair(array, model::ArrayElementId(array, 0)));
  EXPECT_EQ(during, model::JobId(array.value() + 101));
  EXPECT_EQ(mirror_->job(model::ArrayElementId(array, 7)).state, model::JobState::kRunning);
  EXPECT_EQ(mirror_->job(array).array_progress.active(), 8);
  mirror_.Finish(model::ArrayElementId(array, 3), model::JobState::kSucceeded, 1);
  ASSERT_TRUE(Cycle(2));
  EXPECT_EQ(decisions_.spawned.size(), 1u);
  EXPECT_EQ(mirror_->job(model::ArrayElementId(array, 8)).state, model::JobState::kRunning);
  ExpectSameState();
}

TEST_F(StateMirrorTest, CancellingAnUnstartedElementDuringTheCycleDiscardsItsArraysStarts) {
  const model::JobId array = mirror_.Submit(sched::fixtures::MakeArray(MakeJob({.name = "sweep"}), "0-99"), 0);
  EXPECT_FALSE(Cycle(1, [&] { mirror_.CancelUnstarted(array, 2); }));  // the copy started element 2
  EXPECT_EQ(mirror_->job(model::ArrayElementId(array, 2)).state, model::JobState::kCancelled);
  EXPECT_EQ(mirror_->cluster().allocated().gpu_milli, 0);
  ASSERT_TRUE(Cycle(2));
  EXPECT_EQ(mirror_->job(model::ArrayElementId(array, 8)).state, model::JobState::kRunning) << "2 was skipped";
  ExpectSameState();
}

TEST_F(StateMirrorTest, ANodeLeavingDuringTheCycleDiscardsBindsOnIt) {
  mirror_.Submit(MakeJob({.name = "a", .gpu_milli = 4000}), 0);
  EXPECT_FALSE(Cycle(1, [&] {
    mirror_.SetSchedulable(model::NodeId(0), false);
    mirror_.SetSchedulable(model::NodeId(1), false);
  }));
  EXPECT_EQ(mirror_->cluster().allocated().gpu_milli, 0);
  ExpectSameState();
  // Back in service, the next cycle places it.
  mirror_.SetSchedulable(model::NodeId(0), true);
  EXPECT_TRUE(Cycle(2));
  EXPECT_EQ(mirror_->cluster().allocated().gpu_milli, 4000);
}

TEST_F(StateMirrorTest, ChangesThatTouchNothingTheCycleDecidedCommuteWithIt) {
  const model::JobId running = mirror_.Submit(MakeJob({.name = "running", .gpu_milli = 4000}), 0);
  ASSERT_TRUE(Cycle(1));
  const model::JobId next = mirror_.Submit(MakeJob({.name = "next", .gpu_milli = 4000}), 2);
  const model::JobId pending = mirror_.Submit(MakeJob({.name = "too big", .gpu_milli = 8000}), 2);
  // While the cycle places `next` on the free node, `running` ends and a job is cancelled.
  ASSERT_TRUE(Cycle(3, [&] {
    mirror_.Finish(running, model::JobState::kSucceeded, 3);
    mirror_.Finish(pending, model::JobState::kCancelled, 3);
  }));
  EXPECT_EQ(mirror_->job(next).state, model::JobState::kRunning);
  EXPECT_EQ(mirror_->cluster().allocated().gpu_milli, 4000);
  ExpectSameState();
}

TEST_F(StateMirrorTest, ARebuildDuringTheCycleDiscardsIt) {
  mirror_.Submit(MakeJob({.name = "a", .gpu_milli = 1000}), 0);
  EXPECT_FALSE(Cycle(1, [&] {
    auto rebuilt = std::make_unique<sched::SchedulerState>(MakeState(MakeCluster(3, 4)));
    rebuilt->Submit(MakeJob({.name = "a", .gpu_milli = 1000}), 0);
    mirror_.Replace(std::move(rebuilt));
  }));
  EXPECT_EQ(mirror_->cluster().allocated().gpu_milli, 0);
  ExpectSameState();
}

// Random changes before and during random cycles: whatever is applied or
// discarded, the live state keeps its invariants and the copy, caught up,
// is the live state.
TEST_F(StateMirrorTest, AnyInterleavingOfChangesAndCyclesKeepsOneState) {
  std::mt19937 rng(7);
  const auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  const auto some_job = [&](model::JobState state) {
    std::vector<model::JobId> ids;
    for (const model::Job& job : mirror_->jobs().all()) {
      if (job.state == state) ids.push_back(job.id);
    }
    return ids.empty() ? model::JobId() : ids[static_cast<std::size_t>(pick(static_cast<int>(ids.size())))];
  };
  const std::int64_t sizes[] = {500, 1000, 2000, 4000};
  const auto change = [&](Time now) {
    switch (pick(5)) {
      case 0:
      case 1:
        mirror_.Submit(MakeJob({.name = "j", .gpu_milli = sizes[pick(4)], .replicas = 1 + pick(2), .priority = pick(3)}), now);
        break;
      case 2:
        if (const model::JobId id = some_job(pick(2) == 0 ? model::JobState::kPending : model::JobState::kRunning); id.valid()) {
          mirror_.Finish(id, model::JobState::kCancelled, 1);
        }
        break;
      case 3:
        if (const model::JobId id = some_job(model::JobState::kRunning); id.valid()) mirror_.Requeue(id, now);
        break;
      case 4:
        mirror_.SetSchedulable(model::NodeId(pick(2)), pick(3) != 0);
        break;
    }
  };
  int applied = 0, discarded = 0;
  for (Time now = 1; now <= 300; ++now) {
    for (int i = pick(4); i > 0; --i) change(now);
    const bool ok = Cycle(now, [&] {
      for (int i = pick(3); i > 0; --i) change(now);
    });
    (ok ? applied : discarded) += 1;
    ExpectSameState();
    if (HasFailure()) break;
  }
  EXPECT_GT(applied, 0);
  EXPECT_GT(discarded, 0) << "the interleavings must include conflicts";
}

}  // namespace
}  // namespace tessera::controlplane
