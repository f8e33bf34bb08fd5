#include "sched/session.h"
#include "sched/scheduler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sched/actions/action.h"
#include "sched/registry.h"
#include "sched/test_fixtures.h"

namespace tessera::sched {
namespace {

using fixtures::MakeCluster;
using fixtures::MakeJob;
using model::JobId;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

// Two sibling queues qa and qb, each guaranteed half of a 16-GPU cluster.
class SessionTest : public ::testing::Test {
 protected:
  SessionTest()
      : state_(MakeCluster(2, 8), *model::QueueTree::Build({{"qa", 8000, model::kUnlimited, 1.0},
                                                             {"qb", 8000, model::kUnlimited, 1.0}})),
        plugins_(std::move(BuildPlugins(config_)).value()),
        qa_(state_.queues().Find("qa")),
        qb_(state_.queues().Find("qb")) {}

  JobId Submit(const std::string& name, model::QueueId queue, std::int32_t priority, Time at) {
    return state_.Submit(MakeJob({.name = name, .gpu_milli = 1000, .priority = priority, .queue = queue}), at);
  }
  void Charge(model::QueueId queue, std::int64_t gpu_milli) {
    state_.queues().Charge(queue, {gpu_milli, 0, 0, 0}, +1);
  }
  // Names of the whole stream, in order, without placing anything.
  static std::vector<std::string> Drain(Session& session) {
    std::vector<std::string> names;
    while (const auto id = session.NextPending()) names.push_back(session.state().job(*id).name);
    return names;
  }
  static const Outcome* OutcomeOf(Session& session, JobId job) {
    for (const Outcome& o : session.result().outcomes) {
      if (o.job == job) return &o;
    }
    return nullptr;
  }

  SchedulerConfig config_;
  SchedulerState state_;
  Plugins plugins_;
  model::QueueId qa_, qb_;
};

TEST_F(SessionTest, HigherPriorityFirstRegardlessOfQueueShare) {
  Charge(qb_, 8000);  // qb holds half the cluster, qa nothing
  Submit("qa-low", qa_, 0, 0);
  Submit("qb-low", qb_, 0, 1);
  Submit("qb-high", qb_, 10, 2);
  Session session(state_, plugins_, config_, 100);
  EXPECT_THAT(Drain(session), ElementsAre("qb-high", "qa-low", "qb-low"));
}

TEST_F(SessionTest, WithinAPriorityTheQueueWithTheLowerShareGoesFirst) {
  Charge(qa_, 4000);
  Submit("qa-1", qa_, 0, 0);
  Submit("qb-1", qb_, 0, 1);
  Session session(state_, plugins_, config_, 100);
  EXPECT_THAT(Drain(session), ElementsAre("qb-1", "qa-1"));
}

TEST_F(SessionTest, EqualSharesFallBackToQueueOrderThenJobOrder) {
  Submit("qb-1", qb_, 0, 0);
  Submit("qa-2", qa_, 0, 2);
  Submit("qa-1", qa_, 0, 1);
  Session session(state_, plugins_, config_, 100);
  // No usage anywhere: qa (the lower id) keeps winning; FIFO inside it.
  EXPECT_THAT(Drain(session), ElementsAre("qa-1", "qa-2", "qb-1"));
}

TEST_F(SessionTest, WithinAQueueTheJobOrdersRankGoesFirstThenSubmissionThenId) {
  config_.job_order = "shortest-first";
  plugins_ = std::move(BuildPlugins(config_)).value();
  const auto submit = [&](const std::string& name, Seconds walltime, Time at) {
    state_.Submit(MakeJob({.name = name, .gpu_milli = 1000, .queue = qa_, .walltime = walltime}), at);
  };
  submit("hour-early", 3600, 0);
  submit("minute-late", 60, 5);
  submit("hour-tied-b", 3600, 3);
  submit("hour-tied-a", 3600, 3);  // same rank and time as the one before: the lower id goes first
  submit("minute-early", 60, 1);
  Session session(state_, plugins_, config_, 100);
  EXPECT_THAT(Drain(session), ElementsAre("minute-early", "minute-late", "hour-early", "hour-tied-b", "hour-tied-a"));
}

TEST_F(SessionTest, SharesAreReevaluatedAfterEveryPlacement) {
  const JobId qa1 = Submit("qa-1", qa_, 0, 0);
  Submit("qa-2", qa_, 0, 1);
  const JobId qb1 = Submit("qb-1", qb_, 0, 2);
  Submit("qb-2", qb_, 0, 3);
  Session session(state_, plugins_, config_, 100);
  std::vector<std::string> order;
  while (const auto id = session.NextPending()) {
    order.push_back(state_.job(*id).name);
    EXPECT_EQ(session.TryPlace(*id), PlaceVerdict::Kind::kFits);
  }
  // Placing qa-1 raises qa's share, so qb goes next; then they are even again.
  EXPECT_THAT(order, ElementsAre("qa-1", "qb-1", "qa-2", "qb-2"));
  EXPECT_EQ(state_.job(qa1).state, model::JobState::kRunning);
  EXPECT_EQ(state_.job(qb1).state, model::JobState::kRunning);
  EXPECT_EQ(session.result().placed, 4);
}

TEST_F(SessionTest, PendingDependencyWaitsAndIsNotStreamed) {
  const JobId prep = Submit("prep", qa_, 0, 0);
  model::Job train = MakeJob({.name = "train", .queue = qa_});
  train.depends_on.push_back({"prep", model::Dependency::When::kSucceeded});
  const JobId train_id = state_.Submit(std::move(train), 1);
  Session session(state_, plugins_, config_, 100);
  const Outcome* outcome = OutcomeOf(session, train_id);
  ASSERT_NE(outcome, nullptr);
  EXPECT_EQ(outcome->verdict, Verdict::kNotNow);
  EXPECT_EQ(outcome->reason, WaitReason::kDependency);
  EXPECT_EQ(outcome->detail, prep.value());
  EXPECT_THAT(Drain(session), ElementsAre("prep"));
}

TEST_F(SessionTest, ARestartWaitsOutItsBackoff) {
  const JobId id = Submit("flaky", qa_, 0, 0);
  state_.job(id).not_before = 130;
  {
    Session session(state_, plugins_, config_, 100);
    const Outcome* outcome = OutcomeOf(session, id);
    ASSERT_NE(outcome, nullptr);
    EXPECT_EQ(outcome->reason, WaitReason::kBackoff);
    EXPECT_EQ(Explain(*outcome, state_), "waiting: restart backoff, 30s left (spec.restart.backoff)");
    EXPECT_THAT(Drain(session), ElementsAre());
  }
  Session later(state_, plugins_, config_, 130);
  EXPECT_THAT(Drain(later), ElementsAre("flaky"));
}

TEST_F(SessionTest, DependencyOnAnUnknownJobWaitsAndSaysSo) {
  model::Job train = MakeJob({.name = "train", .queue = qa_});
  train.depends_on.push_back({"not-yet-submitted", model::Dependency::When::kSucceeded});
  const JobId train_id = state_.Submit(std::move(train), 1);
  Session session(state_, plugins_, config_, 100);
  const Outcome* outcome = OutcomeOf(session, train_id);
  ASSERT_NE(outcome, nullptr);
  EXPECT_EQ(outcome->reason, WaitReason::kDependency);
  EXPECT_EQ(Explain(*outcome, state_), "waiting: depends on job 'not-yet-submitted', which has not been submitted");
}

TEST_F(SessionTest, SucceededDependencyLetsTheJobThrough) {
  const JobId prep = Submit("prep", qa_, 0, 0);
  model::Job train = MakeJob({.name = "train", .queue = qa_});
  train.depends_on.push_back({"prep", model::Dependency::When::kSucceeded});
  const JobId train_id = state_.Submit(std::move(train), 1);
  state_.Finish(prep, model::JobState::kSucceeded, 1);
  Session session(state_, plugins_, config_, 100);
  EXPECT_EQ(OutcomeOf(session, train_id), nullptr);
  EXPECT_THAT(Drain(session), ElementsAre("train"));
}

TEST_F(SessionTest, FailedDependencyIsNever) {
  const JobId prep = Submit("prep", qa_, 0, 0);
  model::Job train = MakeJob({.name = "train", .queue = qa_});
  train.depends_on.push_back({"prep", model::Dependency::When::kSucceeded});
  const JobId train_id = state_.Submit(std::move(train), 1);
  model::Job cleanup = MakeJob({.name = "cleanup", .queue = qa_});
  cleanup.depends_on.push_back({"prep", model::Dependency::When::kEnded});
  state_.Submit(std::move(cleanup), 2);
  state_.Finish(prep, model::JobState::kFailed, 1);
  Session session(state_, plugins_, config_, 100);
  const Outcome* outcome = OutcomeOf(session, train_id);
  ASSERT_NE(outcome, nullptr);
  EXPECT_EQ(outcome->verdict, Verdict::kNever);
  EXPECT_EQ(outcome->reason, WaitReason::kDependencyFailed);
  EXPECT_EQ(outcome->detail, prep.value());
  // A dependency on the job merely ending is satisfied.
  EXPECT_THAT(Drain(session), ElementsAre("cleanup"));
}

TEST_F(SessionTest, FailedWhenRunsOnlyAfterAFailure) {
  const JobId prep = Submit("prep", qa_, 0, 0);
  const JobId other = Submit("other", qa_, 0, 1);
  model::Job rescue = MakeJob({.name = "rescue", .queue = qa_});
  rescue.depends_on.push_back({"prep", model::Dependency::When::kFailed});
  const JobId rescue_id = state_.Submit(std::move(rescue), 2);
  model::Job never = MakeJob({.name = "never", .queue = qa_});
  never.depends_on.push_back({"other", model::Dependency::When::kFailed});
  const JobId never_id = state_.Submit(std::move(never), 3);
  {
    Session session(state_, plugins_, config_, 100);
    ASSERT_NE(OutcomeOf(session, rescue_id), nullptr);
    EXPECT_EQ(OutcomeOf(session, rescue_id)->reason, WaitReason::kDependency);  // prep has not ended
  }
  state_.Finish(prep, model::JobState::kFailed, 1);
  state_.Finish(other, model::JobState::kSucceeded, 1);
  Session session(state_, plugins_, config_, 100);
  EXPECT_EQ(OutcomeOf(session, rescue_id), nullptr);
  const Outcome* outcome = OutcomeOf(session, never_id);
  ASSERT_NE(outcome, nullptr);
  EXPECT_EQ(outcome->verdict, Verdict::kNever);
  EXPECT_EQ(Explain(*outcome, state_), "never: depends on job 'other' failing, and it succeeded");
  EXPECT_THAT(Drain(session), ElementsAre("rescue"));
}

TEST_F(SessionTest, DependencyByIdIgnoresLaterJobsOfTheSameName) {
  const JobId first = Submit("train", qa_, 0, 0);
  model::Job again = MakeJob({.name = "train", .queue = qa_});
  model::Dependency dep;
  dep.job_id = first;  // the same name: only an id can say which
  again.depends_on.push_back(dep);
  const JobId again_id = state_.Submit(std::move(again), 1);
  model::Job unknown = MakeJob({.name = "other", .queue = qa_});
  model::Dependency missing;
  missing.job_id = model::JobId(999);
  unknown.depends_on.push_back(missing);
  const JobId unknown_id = state_.Submit(std::move(unknown), 2);
  {
    Session session(state_, plugins_, config_, 100);
    ASSERT_NE(OutcomeOf(session, again_id), nullptr);
    EXPECT_EQ(OutcomeOf(session, again_id)->detail, first.value());
    EXPECT_EQ(Explain(*OutcomeOf(session, unknown_id), state_), "waiting: depends on job 999, which this server does not know");
  }
  state_.Finish(first, model::JobState::kSucceeded, 1);
  Session session(state_, plugins_, config_, 100);
  EXPECT_EQ(OutcomeOf(session, again_id), nullptr);
}

TEST_F(SessionTest, SingletonWaitsForTheEarlierJobOfItsNameAndUser) {
  model::Job first = MakeJob({.name = "train", .queue = qa_});
  first.user = "alice";
  const JobId first_id = state_.Submit(first, 0);
  model::Job second = first;
  second.singleton = true;
  const JobId second_id = state_.Submit(second, 1);
  model::Job bobs = second;  // another user's job of that name is no obstacle
  bobs.user = "bob";
  state_.Submit(bobs, 2);
  {
    Session session(state_, plugins_, config_, 100);
    const Outcome* outcome = OutcomeOf(session, second_id);
    ASSERT_NE(outcome, nullptr);
    EXPECT_EQ(outcome->reason, WaitReason::kSingleton);
    EXPECT_EQ(Explain(*outcome, state_),
              "waiting: singleton: job " + std::to_string(first_id.value()) + " of the same name and user has not ended");
    EXPECT_THAT(Drain(session), ElementsAre("train", "train"));  // alice's first and bob's
  }
  state_.Finish(first_id, model::JobState::kSucceeded, 1);
  Session session(state_, plugins_, config_, 100);
  EXPECT_EQ(OutcomeOf(session, second_id), nullptr);
}

TEST_F(SessionTest, InfeasibleJobIsRecordedNeverAndNotStreamed) {
  Submit("fits", qa_, 0, 0);
  const JobId huge = state_.Submit(MakeJob({.name = "huge", .gpu_milli = 16'000, .queue = qa_}), 1);
  ASSERT_FALSE(state_.job(huge).never_reason.empty());
  Session session(state_, plugins_, config_, 100);
  const Outcome* outcome = OutcomeOf(session, huge);
  ASSERT_NE(outcome, nullptr);
  EXPECT_EQ(outcome->verdict, Verdict::kNever);
  EXPECT_EQ(outcome->reason, WaitReason::kInfeasible);
  EXPECT_THAT(Drain(session), ElementsAre("fits"));
  EXPECT_THAT(session.waiting(), IsEmpty());  // never is not a candidate for preemption
}

TEST_F(SessionTest, NeverReasonSetLaterAlsoKeepsTheJobOut) {
  const JobId id = Submit("doomed", qb_, 5, 0);
  state_.job(id).never_reason = "operator says no";
  Session session(state_, plugins_, config_, 100);
  const Outcome* outcome = OutcomeOf(session, id);
  ASSERT_NE(outcome, nullptr);
  EXPECT_EQ(outcome->verdict, Verdict::kNever);
  EXPECT_THAT(Drain(session), IsEmpty());
}

// Places as the configured plugin does, except one job it knows can never run.
class NeverFor final : public Placement {
 public:
  NeverFor(std::string name, std::unique_ptr<Placement> others) : name_(std::move(name)), others_(std::move(others)) {}
  PlaceVerdict Place(const model::Job& job, model::Cluster& cluster, const PlaceOptions& options,
                     std::vector<model::TaskPlacement>& out) override {
    ++asked_;
    if (job.name == name_) return PlaceVerdict::Never("no rack of this cluster is wired for '" + name_ + "'");
    return others_->Place(job, cluster, options, out);
  }
  int asked_ = 0;

 private:
  std::string name_;
  std::unique_ptr<Placement> others_;
};

TEST_F(SessionTest, APlacementsNeverReachesTheOutcomeAndHoldsNothingBack) {
  const JobId doomed = Submit("doomed", qa_, 10, 0);  // first in line
  const JobId next = Submit("next", qa_, 0, 1);
  auto never = std::make_unique<NeverFor>("doomed", std::move(plugins_.placement));
  NeverFor& placement = *never;
  plugins_.placement = std::move(never);
  auto allocate = MakeAllocateAction();
  {
    Session session(state_, plugins_, config_, 100);
    allocate->Run(session);
    const Outcome* outcome = OutcomeOf(session, doomed);
    ASSERT_NE(outcome, nullptr);
    EXPECT_EQ(outcome->verdict, Verdict::kNever);
    EXPECT_EQ(outcome->reason, WaitReason::kInfeasible);
    EXPECT_EQ(Explain(*outcome, state_), "never: no rack of this cluster is wired for 'doomed'");
    // allocate went on past it: nothing is held back for a job that can never run.
    EXPECT_EQ(state_.job(next).state, model::JobState::kRunning);
    EXPECT_FALSE(session.head().has_value());
  }
  // Later cycles report it, like any infeasible job, without asking the placement again.
  const int asked = placement.asked_;
  Session later(state_, plugins_, config_, 200);
  allocate->Run(later);
  const Outcome* outcome = OutcomeOf(later, doomed);
  ASSERT_NE(outcome, nullptr);
  EXPECT_EQ(outcome->verdict, Verdict::kNever);
  EXPECT_EQ(placement.asked_, asked + 1);  // only "next", placed again after the rollback
}

TEST_F(SessionTest, UncommittedPlacementsAreRolledBackWithTheSession) {
  const JobId id = Submit("qa-1", qa_, 0, 0);
  {
    Session session(state_, plugins_, config_, 100);
    ASSERT_EQ(session.TryPlace(id), PlaceVerdict::Kind::kFits);
    EXPECT_EQ(state_.job(id).state, model::JobState::kRunning);
  }
  EXPECT_EQ(state_.job(id).state, model::JobState::kPending);
  EXPECT_EQ(state_.cluster().allocated().gpu_milli, 0);
}

}  // namespace
}  // namespace tessera::sched
