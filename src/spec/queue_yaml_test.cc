#include "spec/queue_yaml.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace tessera::spec {
namespace {

using ::testing::HasSubstr;

TEST(QueueYamlTest, ParsesQueuesWithDefaults) {
  const Result<std::vector<model::QueueSpec>> specs = ParseQueueYaml(R"(apiVersion: tessera/v1
kind: QueueTree
metadata: {name: lab}
spec:
  queues:
    - {name: research,       guaranteed: 64, limit: 128, weight: 2}
    - {name: research/nlp,   guaranteed: 32}
    - {name: research/nlp/alice, guaranteed: 0.5, limit: "2500m"}
    - {name: production,     guaranteed: 64, requireImage: true, allowRootContainers: true}
)",
                                                                     "q.yaml");
  ASSERT_TRUE(specs.ok()) << specs.status().message();
  ASSERT_EQ(specs->size(), 4u);
  EXPECT_EQ((*specs)[0].path, "research");
  EXPECT_EQ((*specs)[0].guaranteed_milli, 64'000);
  EXPECT_EQ((*specs)[0].limit_milli, 128'000);
  EXPECT_DOUBLE_EQ((*specs)[0].weight, 2.0);
  EXPECT_EQ((*specs)[1].limit_milli, model::kUnlimited);
  EXPECT_DOUBLE_EQ((*specs)[1].weight, 1.0);
  EXPECT_EQ((*specs)[2].guaranteed_milli, 500);
  EXPECT_EQ((*specs)[2].limit_milli, 2500);
  EXPECT_FALSE((*specs)[0].require_image || (*specs)[0].allow_root_containers);  // off unless set
  EXPECT_TRUE((*specs)[3].require_image && (*specs)[3].allow_root_containers);

  const Result<model::QueueTree> tree = model::QueueTree::Build(*specs);
  ASSERT_TRUE(tree.ok()) << tree.status().message();
  EXPECT_TRUE(tree->Find("research/nlp/alice").valid());
  EXPECT_EQ(tree->queue(tree->root()).guaranteed_milli, 128'000);
}

struct BadQueues {
  const char* name;
  const char* yaml;
  std::vector<const char*> expect;
};

class QueueYamlErrorTest : public ::testing::TestWithParam<BadQueues> {};

TEST_P(QueueYamlErrorTest, NamesLineFieldAndReason) {
  const Result<std::vector<model::QueueSpec>> specs = ParseQueueYaml(GetParam().yaml, "q.yaml");
  ASSERT_FALSE(specs.ok());
  EXPECT_EQ(specs.status().code(), StatusCode::kInvalidArgument);
  for (const char* part : GetParam().expect) EXPECT_THAT(specs.status().message(), HasSubstr(part));
}

#define QUEUE_HEADER "apiVersion: tessera/v1\nkind: QueueTree\nspec:\n  queues:\n"

INSTANTIATE_TEST_SUITE_P(
    Cases, QueueYamlErrorTest,
    ::testing::Values(
        BadQueues{"Malformed", QUEUE_HEADER "    - {name: a, guaranteed: 1\n", {"q.yaml:6:1: malformed YAML: did not find expected ',' or '}' (while parsing a flow mapping)"}},
        BadQueues{"UnknownField", QUEUE_HEADER "    - {name: a, guarantee: 1}\n",
                  {"q.yaml:5:17: spec.queues[0].guarantee: unknown field 'guarantee'; allowed: name, guaranteed, "
                   "limit, weight"}},
        BadQueues{"UnknownSpecField", "apiVersion: tessera/v1\nkind: QueueTree\nspec:\n  queue: []\n",
                  {"q.yaml:4:3: spec.queue: unknown field 'queue'; allowed: queues"}},
        BadQueues{"WrongType", QUEUE_HEADER "    - {name: a, weight: heavy}\n",
                  {"q.yaml:5:25: spec.queues[0].weight: expected a number, got 'heavy'"}},
        BadQueues{"BadGuarantee", QUEUE_HEADER "    - {name: a, guaranteed: lots}\n",
                  {"q.yaml:5:29: spec.queues[0].guaranteed: 'lots' is not a quantity"}},
        BadQueues{"LimitBelowGuarantee", QUEUE_HEADER "    - name: a\n      guaranteed: 8\n      limit: 4\n",
                  {"q.yaml:7:14: spec.queues[0].limit: the limit (4 GPUs) is below the guarantee (8 GPUs)"}},
        BadQueues{"ZeroWeight", QUEUE_HEADER "    - {name: a, weight: 0}\n",
                  {"q.yaml:5:25: spec.queues[0].weight: must be positive"}},
        BadQueues{"BadName", QUEUE_HEADER "    - {name: Research/NLP}\n",
                  {"q.yaml:5:14: spec.queues[0].name: 'Research/NLP' is not a valid queue name"}},
        BadQueues{"EmptySegment", QUEUE_HEADER "    - {name: research//nlp}\n",
                  {"q.yaml:5:14: spec.queues[0].name:", "not a valid queue name"}},
        BadQueues{"Duplicate", QUEUE_HEADER "    - {name: a}\n    - {name: a}\n",
                  {"q.yaml:6:14: spec.queues[1].name: queue 'a' is defined twice (first at q.yaml:5:14)"}},
        BadQueues{"MissingName", QUEUE_HEADER "    - {guaranteed: 1}\n",
                  {"q.yaml:5:7: spec.queues[0].name: required field is missing"}},
        BadQueues{"ChildrenOverParent",
                  QUEUE_HEADER "    - {name: research, guaranteed: 16}\n    - {name: research/nlp, guaranteed: 12}\n"
                               "    - {name: research/cv, guaranteed: 8}\n",
                  {"q.yaml:5:14: spec.queues[0]: queue 'research': its children are guaranteed 20 GPUs, more than "
                   "its own guarantee of 16"}},
        BadQueues{"Empty", QUEUE_HEADER "    []\n", {"q.yaml:5:5: spec.queues: a QueueTree needs at least one queue"}},
        BadQueues{"NotAList", QUEUE_HEADER "    research: 1\n", {"q.yaml:5:5: spec.queues: expected a list, got a mapping"}},
        BadQueues{"WrongKind", "apiVersion: tessera/v1\nkind: Cluster\nspec: {}\n",
                  {"q.yaml:2:7: kind: expected a QueueTree document, got kind 'Cluster'"}},
        BadQueues{"WrongApiVersion", "apiVersion: tessera/v2\nkind: QueueTree\nspec: {}\n",
                  {"q.yaml:1:13: apiVersion: expected 'tessera/v1', got 'tessera/v2'"}},
        BadQueues{"NoDocument", "# nothing here\n", {"q.yaml: no QueueTree document found"}}),
    [](const ::testing::TestParamInfo<BadQueues>& param) { return std::string(param.param.name); });

}  // namespace
}  // namespace tessera::spec
