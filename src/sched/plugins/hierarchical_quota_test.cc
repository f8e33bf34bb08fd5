#include "sched/plugins/hierarchical_quota.h"

#include <gtest/gtest.h>

#include <string>

namespace tessera::sched {
namespace {

// A job of one task group: `replicas` tasks of `gpus` GPUs, at least `min_replicas` of them.
model::Job GroupJob(model::QueueId queue, std::int64_t gpus, std::int32_t replicas, std::int32_t min_replicas) {
  model::Job job;
  job.queue = queue;
  model::TaskGroup group;
  group.replicas = replicas;
  group.min_replicas = min_replicas;
  group.request.gpu_milli = gpus * 1000;
  job.groups.push_back(group);
  return job;
}

// orgA (guaranteed 8, limit 12) -> teamA (4), teamB (4, limit 6)
// orgB (guaranteed 8)           -> x (4), y (4)
class HierarchicalQuotaTest : public ::testing::Test {
 protected:
  HierarchicalQuotaTest()
      : queues_(*model::QueueTree::Build({{"orgA", 8000, 12000, 1.0},
                                          {"orgA/teamA", 4000, model::kUnlimited, 1.0},
                                          {"orgA/teamB", 4000, 6000, 1.0},
                                          {"orgB", 8000, model::kUnlimited, 1.0},
                                          {"orgB/x", 4000, model::kUnlimited, 1.0},
                                          {"orgB/y", 4000, model::kUnlimited, 1.0}})) {}

  model::QueueId Q(const std::string& path) const {
    const model::QueueId id = queues_.Find(path);
    EXPECT_TRUE(id.valid()) << path;
    return id;
  }
  void Charge(const std::string& path, std::int64_t gpu_milli, bool preemptible = true) {
    queues_.Charge(Q(path), {gpu_milli, 0, 0, 0}, +1, preemptible);
  }
  model::Job Job(const std::string& path, std::int64_t gpus, bool preemptible = true, std::int32_t replicas = 1,
                 std::int32_t min_replicas = 1) const {
    model::Job job = GroupJob(Q(path), gpus, replicas, min_replicas);
    job.preemptible = preemptible;
    job.held.gpu_milli = gpus * 1000 * min_replicas;  // as if running: what a victim would give back
    return job;
  }

  HierarchicalQuota quota_;
  model::QueueTree queues_;
};

// --- Admit ----------------------------------------------------------------

TEST_F(HierarchicalQuotaTest, AdmitsWithinGuarantee) {
  EXPECT_FALSE(quota_.Admit(Job("orgA/teamA", 4), queues_).has_value());
  EXPECT_FALSE(quota_.Admit(Job("orgA/teamA", 4, /*preemptible=*/false), queues_).has_value());
}

TEST_F(HierarchicalQuotaTest, DeniesAtTheLeafLimit) {
  Charge("orgA/teamB", 4000);
  const auto denial = quota_.Admit(Job("orgA/teamB", 3), queues_);  // 7 > limit 6
  ASSERT_TRUE(denial.has_value());
  EXPECT_EQ(denial->kind, Denial::Kind::kQueueLimit);
  EXPECT_EQ(denial->queue, Q("orgA/teamB"));
  // Exactly at the limit is allowed.
  EXPECT_FALSE(quota_.Admit(Job("orgA/teamB", 2), queues_).has_value());
}

TEST_F(HierarchicalQuotaTest, DeniesAtAnAncestorLimitAndNamesIt) {
  Charge("orgA/teamB", 6000);
  Charge("orgA/teamA", 4000);  // orgA holds 10 of its limit 12
  const auto denial = quota_.Admit(Job("orgA/teamA", 3), queues_);
  ASSERT_TRUE(denial.has_value());
  EXPECT_EQ(denial->kind, Denial::Kind::kQueueLimit);
  EXPECT_EQ(denial->queue, Q("orgA"));
  EXPECT_FALSE(quota_.Admit(Job("orgA/teamA", 2), queues_).has_value());
}

TEST_F(HierarchicalQuotaTest, CountsOnlyTheMinimumGang) {
  Charge("orgA/teamB", 4000);
  // 4 replicas of 1 GPU would pass the limit of 6, the minimum of 2 does not.
  EXPECT_FALSE(quota_.Admit(Job("orgA/teamB", 1, true, /*replicas=*/4, /*min_replicas=*/2), queues_).has_value());
  EXPECT_TRUE(quota_.Admit(Job("orgA/teamB", 1, true, 4, 3), queues_).has_value());
}

TEST_F(HierarchicalQuotaTest, DeniesNonPreemptibleBeyondItsOwnGuarantee) {
  Charge("orgA/teamA", 2000, /*preemptible=*/false);
  const auto denial = quota_.Admit(Job("orgA/teamA", 3, /*preemptible=*/false), queues_);
  ASSERT_TRUE(denial.has_value());
  EXPECT_EQ(denial->kind, Denial::Kind::kNonPreemptibleOverGuarantee);
  EXPECT_EQ(denial->queue, Q("orgA/teamA"));
  // Up to the guarantee is fine.
  EXPECT_FALSE(quota_.Admit(Job("orgA/teamA", 2, false), queues_).has_value());
}

TEST_F(HierarchicalQuotaTest, DeniesNonPreemptibleBeyondAnAncestorsGuarantee) {
  Charge("orgA", 4000, /*preemptible=*/false);        // orgA's own non-preemptible jobs
  Charge("orgA/teamB", 4000, /*preemptible=*/false);  // orgA now pins all of its 8
  // teamA itself stays within 4, but orgA would pin 9 > 8.
  const auto denial = quota_.Admit(Job("orgA/teamA", 1, /*preemptible=*/false), queues_);
  ASSERT_TRUE(denial.has_value());
  EXPECT_EQ(denial->kind, Denial::Kind::kNonPreemptibleOverGuarantee);
  EXPECT_EQ(denial->queue, Q("orgA"));
}

TEST_F(HierarchicalQuotaTest, BorrowedPreemptibleUsageDoesNotBlockNonPreemptibleJobs) {
  Charge("orgA/teamA", 6000);  // teamA borrows 2 with preemptible jobs: reclaimable
  EXPECT_FALSE(quota_.Admit(Job("orgA/teamA", 4, /*preemptible=*/false), queues_).has_value());
  EXPECT_TRUE(quota_.Admit(Job("orgA/teamA", 5, /*preemptible=*/false), queues_).has_value());
}

TEST_F(HierarchicalQuotaTest, AdmitsPreemptibleJobsThatBorrow) {
  Charge("orgA/teamA", 4000);
  // teamA at its guarantee, orgA at 4 of 8: a preemptible job may borrow.
  EXPECT_FALSE(quota_.Admit(Job("orgA/teamA", 4), queues_).has_value());
  // orgB/x may borrow far beyond its guarantee: no limit anywhere on its path.
  EXPECT_FALSE(quota_.Admit(Job("orgB/x", 16), queues_).has_value());
}

// --- MayReclaim -------------------------------------------------------------

TEST_F(HierarchicalQuotaTest, ReclaimsFromASiblingOverItsGuarantee) {
  Charge("orgA/teamB", 6000);  // 2 over
  EXPECT_TRUE(quota_.MayReclaim(Job("orgA/teamA", 2), Job("orgA/teamB", 2), queues_));
}

TEST_F(HierarchicalQuotaTest, NeverReclaimsWithinTheSameQueue) {
  Charge("orgA/teamB", 6000);
  EXPECT_FALSE(quota_.MayReclaim(Job("orgA/teamB", 1), Job("orgA/teamB", 2), queues_));
}

TEST_F(HierarchicalQuotaTest, NeverReclaimsBetweenAncestorAndDescendant) {
  Charge("orgA/teamB", 6000);
  EXPECT_FALSE(quota_.MayReclaim(Job("orgA", 1), Job("orgA/teamB", 2), queues_));
}

TEST_F(HierarchicalQuotaTest, NeverReclaimsANonPreemptibleVictim) {
  Charge("orgA/teamB", 6000);
  EXPECT_FALSE(quota_.MayReclaim(Job("orgA/teamA", 2), Job("orgA/teamB", 2, /*preemptible=*/false), queues_));
}

TEST_F(HierarchicalQuotaTest, NoReclaimThatWouldTakeTheVictimBranchBelowItsGuarantee) {
  Charge("orgA/teamB", 4000);
  EXPECT_FALSE(quota_.MayReclaim(Job("orgA/teamA", 2), Job("orgA/teamB", 2), queues_));
  Charge("orgA/teamB", 1000);  // one over: taking 2 would leave 3 of the 4 guaranteed
  EXPECT_FALSE(quota_.MayReclaim(Job("orgA/teamA", 2), Job("orgA/teamB", 2), queues_));
  EXPECT_TRUE(quota_.MayReclaim(Job("orgA/teamA", 2), Job("orgA/teamB", 1), queues_));
  Charge("orgA/teamB", 1000);  // two over: taking 2 leaves exactly the guarantee
  EXPECT_TRUE(quota_.MayReclaim(Job("orgA/teamA", 2), Job("orgA/teamB", 2), queues_));
}

TEST_F(HierarchicalQuotaTest, HeadroomIsTheTightestLimitOrGuaranteeOnThePath) {
  Charge("orgA/teamB", 4000, /*preemptible=*/false);
  const std::int64_t limited = quota_.GpuHeadroom(Job("orgA/teamB", 1), queues_);
  EXPECT_EQ(limited, 2000);  // teamB's limit is 6
  EXPECT_EQ(quota_.GpuHeadroom(Job("orgA/teamB", 1, /*preemptible=*/false), queues_), 0);  // at its guarantee of 4
}

TEST_F(HierarchicalQuotaTest, NoReclaimWhenThePreemptorWouldPassItsGuarantee) {
  Charge("orgA/teamB", 6000);
  Charge("orgA/teamA", 3000);
  EXPECT_FALSE(quota_.MayReclaim(Job("orgA/teamA", 2), Job("orgA/teamB", 2), queues_));  // 5 > 4
  EXPECT_TRUE(quota_.MayReclaim(Job("orgA/teamA", 1), Job("orgA/teamB", 2), queues_));   // 4 = 4
}

TEST_F(HierarchicalQuotaTest, AcrossOrgsEveryQueueOnTheVictimsSideKeepsItsGuarantee) {
  // orgA borrows 2 (10 of 8), all of it through teamA (6 of 4); teamB is at its 4.
  Charge("orgA/teamA", 6000);
  Charge("orgA/teamB", 4000);
  // From another org: a teamA job gives back borrowed GPUs (orgA 8, teamA 4 after).
  EXPECT_TRUE(quota_.MayReclaim(Job("orgB/x", 2), Job("orgA/teamA", 2), queues_));
  // A teamB job would take teamB below its guarantee, though orgA borrows.
  EXPECT_FALSE(quota_.MayReclaim(Job("orgB/x", 2), Job("orgA/teamB", 2), queues_));
  // From its sibling, likewise.
  EXPECT_FALSE(quota_.MayReclaim(Job("orgA/teamA", 2), Job("orgA/teamB", 2), queues_));
}

TEST_F(HierarchicalQuotaTest, ThePreemptorsWholePathUpToTheAncestorMustStayWithinGuarantee) {
  Charge("orgA/teamA", 10000);  // orgA borrows 2
  Charge("orgB/y", 6000);       // orgB holds 6 of 8, all in y
  // x itself would hold 3 of 4, but orgB would hold 9 of 8.
  EXPECT_FALSE(quota_.MayReclaim(Job("orgB/x", 3), Job("orgA/teamA", 2), queues_));
  // 2 GPUs keep orgB at its guarantee of 8.
  EXPECT_TRUE(quota_.MayReclaim(Job("orgB/x", 2), Job("orgA/teamA", 2), queues_));
}

TEST_F(HierarchicalQuotaTest, SiblingReclaimIgnoresAncestorsAboveTheCommonAncestor) {
  // orgA borrows overall, so a path check up to the root would fail; the
  // preemptor's path is only checked up to orgA, the common ancestor.
  Charge("orgA/teamB", 6000);
  Charge("orgA/teamA", 3000);  // orgA at 9 > 8
  EXPECT_TRUE(quota_.MayReclaim(Job("orgA/teamA", 1), Job("orgA/teamB", 1), queues_));
}

// --- per-user limits ------------------------------------------------------

// team (guaranteed 16) lets one user hold at most 4 GPUs; its child lab
// (guaranteed 8) at most 2 of them.
class UserLimitTest : public ::testing::Test {
 protected:
  UserLimitTest()
      : queues_(*model::QueueTree::Build({{"team", 16000, model::kUnlimited, 1.0, 4000}, {"team/lab", 8000, model::kUnlimited, 1.0, 2000}})) {}

  model::Job Job(const std::string& path, const std::string& user, std::int64_t gpus, std::int32_t replicas = 1,
                 std::int32_t min_replicas = 1) const {
    model::Job job = GroupJob(queues_.Find(path), gpus, replicas, min_replicas);
    job.user = user;
    return job;
  }
  void Run(const std::string& path, const std::string& user, std::int64_t gpus, int sign = +1) {
    queues_.Charge(queues_.Find(path), {gpus * 1000, 0, 0, 0}, sign, true, user);
  }

  HierarchicalQuota quota_;
  model::QueueTree queues_;
};

TEST_F(UserLimitTest, OneUserStopsAtTheLimitWhileOthersGoOn) {
  Run("team", "alice", 3);
  EXPECT_FALSE(quota_.Admit(Job("team", "alice", 1), queues_).has_value());
  const auto denial = quota_.Admit(Job("team", "alice", 2), queues_);  // 5 > 4
  ASSERT_TRUE(denial.has_value());
  EXPECT_EQ(denial->kind, Denial::Kind::kUserLimit);
  EXPECT_EQ(denial->queue, queues_.Find("team"));
  EXPECT_FALSE(quota_.Admit(Job("team", "bob", 4), queues_).has_value()) << "bob has a limit of his own";
  Run("team", "alice", 3, -1);
  EXPECT_FALSE(quota_.Admit(Job("team", "alice", 4), queues_).has_value()) << "what alice gave back counts no more";
  EXPECT_TRUE(queues_.queue(queues_.Find("team")).user_gpu_milli.empty()) << "users holding nothing are forgotten";
}

TEST_F(UserLimitTest, EveryLimitOnThePathBinds) {
  // In lab, the child's 2 binds first; what alice holds in team itself counts toward team's 4.
  const auto in_lab = quota_.Admit(Job("team/lab", "alice", 3), queues_);
  ASSERT_TRUE(in_lab.has_value());
  EXPECT_EQ(in_lab->queue, queues_.Find("team/lab"));
  Run("team", "alice", 3);
  const auto above = quota_.Admit(Job("team/lab", "alice", 2), queues_);  // lab: 2 <= 2, team: 5 > 4
  ASSERT_TRUE(above.has_value());
  EXPECT_EQ(above->queue, queues_.Find("team"));
  Run("team/lab", "bob", 2);
  EXPECT_EQ(queues_.queue(queues_.Find("team")).UserHeld("bob"), 2000) << "a child's jobs count in the parent's subtree";
}

TEST_F(UserLimitTest, HeadroomStopsOptionalMembersAtTheUserLimit) {
  Run("team", "alice", 1);
  // An elastic gang of 1-GPU members: 3 more fit under alice's 4.
  EXPECT_EQ(quota_.GpuHeadroom(Job("team", "alice", 1, 8, 1), queues_), 3000);
  EXPECT_EQ(quota_.GpuHeadroom(Job("team", "bob", 1, 8, 1), queues_), 4000);
}

TEST(UserLimitTreeTest, AUserLimitMustBePositive) {
  const Result<model::QueueTree> tree = model::QueueTree::Build({{"team", 0, model::kUnlimited, 1.0, 0}});
  ASSERT_FALSE(tree.ok());
  EXPECT_NE(tree.status().message().find("userLimit must be above zero"), std::string::npos) << tree.status().message();
}

}  // namespace
}  // namespace tessera::sched
