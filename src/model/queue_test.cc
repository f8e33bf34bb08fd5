#include "model/queue.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace tessera::model {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

QueueSpec Spec(std::string path, std::int64_t guaranteed_gpus, std::int64_t limit_gpus = -1, double weight = 1.0) {
  return QueueSpec{std::move(path), guaranteed_gpus * 1000, limit_gpus < 0 ? kUnlimited : limit_gpus * 1000, weight};
}

QueueTree Lab() {
  Result<QueueTree> tree = QueueTree::Build({Spec("research", 64, 128, 2.0), Spec("research/nlp", 32),
                                              Spec("research/vision/alice", 8), Spec("research/vision/bob", 4),
                                              Spec("production", 32)});
  EXPECT_TRUE(tree.ok()) << tree.status().message();
  return std::move(tree).value();
}

TEST(QueueTreeTest, BuildCreatesImplicitParentsWithSummedGuarantees) {
  const QueueTree tree = Lab();
  const QueueId research = tree.Find("research");
  const QueueId vision = tree.Find("research/vision");
  const QueueId alice = tree.Find("research/vision/alice");
  ASSERT_TRUE(research.valid() && vision.valid() && alice.valid());
  EXPECT_FALSE(tree.Find("research/speech").valid());

  // research/vision was never declared: it guarantees what its children do.
  EXPECT_EQ(tree.queue(vision).guaranteed_milli, 12'000);
  EXPECT_EQ(tree.queue(vision).limit_milli, kUnlimited);
  EXPECT_EQ(tree.queue(vision).weight, 1.0);
  EXPECT_EQ(tree.queue(vision).parent, research);
  EXPECT_EQ(tree.queue(vision).depth, 2);
  EXPECT_THAT(tree.queue(vision).children, ElementsAre(alice, tree.Find("research/vision/bob")));
  // Declared queues keep what they declared.
  EXPECT_EQ(tree.queue(research).guaranteed_milli, 64'000);
  EXPECT_EQ(tree.queue(research).limit_milli, 128'000);
  EXPECT_EQ(tree.queue(research).weight, 2.0);
  EXPECT_EQ(tree.queue(research).depth, 1);
  // The root guarantees its children's sum.
  EXPECT_EQ(tree.queue(tree.root()).guaranteed_milli, 96'000);
  EXPECT_EQ(tree.queue(tree.root()).path, "");
  EXPECT_EQ(tree.queue(tree.root()).children.size(), 2u);
}

TEST(QueueTreeTest, ImplicitParentsNestTheirSums) {
  Result<QueueTree> tree = QueueTree::Build({Spec("org/a/x", 6), Spec("org/a/y", 2), Spec("org/b", 5)});
  ASSERT_TRUE(tree.ok()) << tree.status().message();
  EXPECT_EQ(tree->queue(tree->Find("org/a")).guaranteed_milli, 8'000);
  EXPECT_EQ(tree->queue(tree->Find("org")).guaranteed_milli, 13'000);
  EXPECT_EQ(tree->queue(tree->root()).guaranteed_milli, 13'000);
}

TEST(QueueTreeTest, RejectsChildrenGuaranteedMoreThanTheirParent) {
  Result<QueueTree> tree = QueueTree::Build({Spec("research", 16), Spec("research/nlp", 12), Spec("research/cv", 8)});
  ASSERT_FALSE(tree.ok());
  EXPECT_EQ(tree.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(tree.status().message(),
              HasSubstr("queue 'research': its children are guaranteed 20 GPUs, more than its own guarantee of 16"));

  // Through an implicit level as well.
  tree = QueueTree::Build({Spec("org", 10), Spec("org/a/x", 6), Spec("org/b", 6)});
  ASSERT_FALSE(tree.ok());
  EXPECT_THAT(tree.status().message(), HasSubstr("queue 'org': its children are guaranteed 12 GPUs"));

  // Fractions of GPUs are reported as such, not rounded down to zero.
  tree = QueueTree::Build({QueueSpec{"team", 500, kUnlimited, 1.0}, QueueSpec{"team/alice", 750, kUnlimited, 1.0}});
  ASSERT_FALSE(tree.ok());
  EXPECT_THAT(tree.status().message(),
              HasSubstr("queue 'team': its children are guaranteed 0.75 GPUs, more than its own guarantee of 0.5"));
}

TEST(QueueTreeTest, RejectsBadSpecs) {
  const auto error = [](const std::vector<QueueSpec>& specs) {
    const Result<QueueTree> tree = QueueTree::Build(specs);
    EXPECT_FALSE(tree.ok());
    return tree.status().message();
  };
  EXPECT_THAT(error({Spec("a", 8, 4)}), HasSubstr("queue 'a': limit is below its guarantee"));
  EXPECT_THAT(error({Spec("a", 1), Spec("a", 2)}), HasSubstr("queue 'a' is defined twice"));
  EXPECT_THAT(error({Spec("a//b", 1)}), HasSubstr("a queue path is names joined by '/'"));
  EXPECT_THAT(error({Spec("/a", 1)}), HasSubstr("a queue path is names joined by '/'"));
  EXPECT_THAT(error({Spec("", 1)}), HasSubstr("a queue path is names joined by '/'"));
  EXPECT_THAT(error({Spec("a", -1, 4)}), HasSubstr("guaranteed must not be negative"));
  EXPECT_THAT(error({Spec("a", 1, -1, 0.0)}), HasSubstr("weight must be positive"));
}

TEST(QueueTreeTest, DefaultIsOneQueueWithTheWholeCluster) {
  const QueueTree tree = QueueTree::Default(64'000);
  ASSERT_EQ(tree.queues().size(), 2u);
  const QueueId q = tree.Find("default");
  ASSERT_TRUE(q.valid());
  EXPECT_EQ(tree.queue(q).guaranteed_milli, 64'000);
  EXPECT_EQ(tree.queue(q).limit_milli, kUnlimited);
}

TEST(QueueTreeTest, ChargeRollsUpToEveryAncestor) {
  QueueTree tree = Lab();
  const QueueId alice = tree.Find("research/vision/alice");
  const QueueId vision = tree.Find("research/vision");
  const QueueId research = tree.Find("research");
  const Resources held{4000, 0, 32'000, 0};
  tree.Charge(alice, held, +1);
  tree.Charge(vision, Resources{1000, 0, 0, 0}, +1);
  EXPECT_EQ(tree.queue(alice).own_allocated, held);
  EXPECT_EQ(tree.queue(alice).allocated, held);
  EXPECT_EQ(tree.queue(vision).own_allocated.gpu_milli, 1000);
  EXPECT_EQ(tree.queue(vision).allocated.gpu_milli, 5000);
  EXPECT_EQ(tree.queue(research).own_allocated.gpu_milli, 0);
  EXPECT_EQ(tree.queue(research).allocated.gpu_milli, 5000);
  EXPECT_EQ(tree.queue(research).allocated.cpu_milli, 32'000);
  EXPECT_EQ(tree.queue(tree.root()).allocated.gpu_milli, 5000);
  EXPECT_EQ(tree.queue(tree.Find("production")).allocated, Resources{});

  tree.Charge(alice, held, -1);
  EXPECT_EQ(tree.queue(alice).allocated, Resources{});
  EXPECT_EQ(tree.queue(research).allocated.gpu_milli, 1000);
  EXPECT_EQ(tree.queue(tree.root()).allocated.gpu_milli, 1000);
}

TEST(QueueTreeTest, DecayMovesHalfWayTowardTheAllocationPerHalfLife) {
  QueueTree tree = Lab();
  const QueueId nlp = tree.Find("research/nlp");
  tree.Charge(nlp, Resources{8000, 0, 0, 0}, +1);
  tree.Decay(3600, 3600);
  EXPECT_EQ(tree.queue(nlp).usage_average.gpu_milli, 4000);
  EXPECT_EQ(tree.queue(tree.Find("research")).usage_average.gpu_milli, 4000);
  tree.Decay(3600, 3600);
  EXPECT_EQ(tree.queue(nlp).usage_average.gpu_milli, 6000);
  tree.Decay(0, 3600);  // no time passed: nothing changes
  EXPECT_EQ(tree.queue(nlp).usage_average.gpu_milli, 6000);

  // With nothing allocated, the average halves each half-life.
  tree.Charge(nlp, Resources{8000, 0, 0, 0}, -1);
  tree.Decay(7200, 3600);
  EXPECT_EQ(tree.queue(nlp).usage_average.gpu_milli, 1500);
  // A zero half-life forgets the past at once.
  tree.Charge(nlp, Resources{2000, 0, 0, 0}, +1);
  tree.Decay(1, 0);
  EXPECT_EQ(tree.queue(nlp).usage_average.gpu_milli, 2000);
}

TEST(QueueTreeTest, CommonAncestorAndChildToward) {
  const QueueTree tree = Lab();
  const QueueId research = tree.Find("research");
  const QueueId nlp = tree.Find("research/nlp");
  const QueueId vision = tree.Find("research/vision");
  const QueueId alice = tree.Find("research/vision/alice");
  const QueueId bob = tree.Find("research/vision/bob");
  const QueueId production = tree.Find("production");

  EXPECT_EQ(tree.CommonAncestor(alice, bob), vision);
  EXPECT_EQ(tree.CommonAncestor(alice, nlp), research);
  EXPECT_EQ(tree.CommonAncestor(nlp, alice), research);
  EXPECT_EQ(tree.CommonAncestor(alice, production), tree.root());
  EXPECT_EQ(tree.CommonAncestor(vision, alice), vision);
  EXPECT_EQ(tree.CommonAncestor(nlp, nlp), nlp);

  EXPECT_EQ(tree.ChildToward(tree.root(), alice), research);
  EXPECT_EQ(tree.ChildToward(research, alice), vision);
  EXPECT_EQ(tree.ChildToward(vision, alice), alice);
  EXPECT_EQ(tree.ChildToward(research, nlp), nlp);
}

}  // namespace
}  // namespace tessera::model
