#include "controlplane/array_env.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tessera::controlplane {
namespace {

using ::testing::IsEmpty;

TEST(ArrayEnvTest, AnElementLearnsItsIndexItsArrayAndItsSweepValues) {
  model::Job parent;
  parent.id = model::JobId(12);
  model::JobArray array;
  array.indices = {0, 1, 2, 3, 4, 5};
  array.sweep = {{"lr", {"0.1", "0.01"}}, {"batch", {"32", "64", "128"}}};
  parent.array = std::make_shared<const model::JobArray>(array);
  parent.is_array_parent = true;
  EXPECT_THAT(ArrayEnvironment(parent), IsEmpty());

  const model::Job element = model::ArrayElement(parent, 4);
  EXPECT_EQ(element.id, model::JobId(17));
  const auto env = ArrayEnvironment(element);
  EXPECT_EQ(env.at("TESSERA_ARRAY_JOB_ID"), "12");
  EXPECT_EQ(env.at("TESSERA_ARRAY_INDEX"), "4");
  EXPECT_EQ(env.at("TESSERA_ARRAY_COUNT"), "6");
  EXPECT_EQ(env.at("TESSERA_ARRAY_MIN"), "0");
  EXPECT_EQ(env.at("TESSERA_ARRAY_MAX"), "5");
  EXPECT_EQ(env.at("TESSERA_ARRAY_STEP"), "1");
  EXPECT_EQ(env.at("TESSERA_SWEEP_LR"), "0.01");
  EXPECT_EQ(env.at("TESSERA_SWEEP_BATCH"), "64");
}

TEST(ArrayEnvTest, AnArrayWithoutSweepHasNoSweepVariables) {
  model::Job parent;
  parent.id = model::JobId(3);
  parent.array = std::make_shared<const model::JobArray>(*model::ParseArrayRange("10,20%1"));
  parent.is_array_parent = true;
  const auto env = ArrayEnvironment(model::ArrayElement(parent, 1));
  EXPECT_EQ(env.at("TESSERA_ARRAY_INDEX"), "20");
  EXPECT_EQ(env.at("TESSERA_ARRAY_MIN"), "10");
  EXPECT_EQ(env.at("TESSERA_ARRAY_MAX"), "20");
  EXPECT_EQ(env.at("TESSERA_ARRAY_STEP"), "10");
  EXPECT_EQ(env.size(), 6u);
  EXPECT_EQ(model::ParseArrayRange("0-15:4")->Step(), 4);
  EXPECT_EQ(model::ParseArrayRange("1,3,5-9")->Step(), 1);
  EXPECT_EQ(model::ParseArrayRange("7")->Step(), 1);
}

}  // namespace
}  // namespace tessera::controlplane
