#include "spec/json_document.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "spec/cluster_yaml.h"
#include "spec/job_yaml.h"

namespace tessera::spec {
namespace {

using ::testing::HasSubstr;

class JsonDocumentTest : public ::testing::Test {
 protected:
  // The jobs in `text`, read by the JSON reader (fast) or by the YAML reader.
  Result<std::vector<model::Job>> Parse(const std::string& text, bool yaml) {
    Result<std::vector<YamlValue>> documents = LoadJobDocuments(text, "j.json", /*positions=*/yaml);
    if (!documents.ok()) return documents.status();
    return ParseJobDocuments(*documents, "j.json", cluster_, queues_);
  }
  model::Cluster cluster_ = *model::Cluster::Build(model::GenerateNodes(*ParseClusterShape("4 nodes x 8 GPUs, 2 nodes per leaf")));
  model::QueueTree queues_ = *model::QueueTree::Build({{"default", 8'000, 16'000, 1.0}, {"research", 8'000, model::kUnlimited, 2.0}});
};

TEST_F(JsonDocumentTest, ReadsTheSameJobAsTheYamlReader) {
  const std::string text = R"json( {"apiVersion": "tessera/v1", "kind": "Job",
    "metadata": {"name": "train", "queue": "research"},
    "spec": {"priority": 7, "preemptible": false, "walltime": "1h30m",
      "tasks": [{"name": "worker", "replicas": 2, "command": ["python", "-c", "print(\"a\\tb\")"],
                 "env": {"LR": "0.50", "NAME": "caf\u00e9"},
                 "resources": {"gpus": 0.50, "gpuMemory": "40Gi", "cpus": "500m", "memory": "4Gi"}},
                {"name": "ps", "resources": {"gpus": "250m", "gpuMemory": "10Gi"}}],
      "topology": {"level": "leaf", "mode": "required"}, "restart": {"maxRestarts": 3}}} )json";
  const Result<std::vector<model::Job>> json = Parse(text, false);
  const Result<std::vector<model::Job>> yaml = Parse(text, true);
  ASSERT_TRUE(json.ok()) << json.status().message();
  ASSERT_TRUE(yaml.ok()) << yaml.status().message();
  ASSERT_EQ(json->size(), 1u);
  const model::Job& a = (*json)[0];
  const model::Job& b = (*yaml)[0];
  EXPECT_EQ(a.groups[0].env.at("NAME"), "caf\xc3\xa9");
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.queue, b.queue);
  EXPECT_EQ(a.priority, 7);
  EXPECT_EQ(a.preemptible, b.preemptible);
  EXPECT_EQ(a.walltime, 5400);
  EXPECT_EQ(a.max_restarts, b.max_restarts);
  EXPECT_EQ(a.topology.level, b.topology.level);
  EXPECT_EQ(a.topology.required, b.topology.required);
  ASSERT_EQ(a.groups.size(), 2u);
  ASSERT_EQ(b.groups.size(), 2u);
  for (std::size_t g = 0; g < 2; ++g) {
    EXPECT_EQ(a.groups[g].name, b.groups[g].name);
    EXPECT_EQ(a.groups[g].replicas, b.groups[g].replicas);
    EXPECT_EQ(a.groups[g].command, b.groups[g].command);
    EXPECT_EQ(a.groups[g].env, b.groups[g].env);
    EXPECT_EQ(a.groups[g].request.gpu_milli, b.groups[g].request.gpu_milli);
    EXPECT_EQ(a.groups[g].request.gpu_memory, b.groups[g].request.gpu_memory);
    EXPECT_EQ(a.groups[g].request.cpu_milli, b.groups[g].request.cpu_milli);
    EXPECT_EQ(a.groups[g].request.memory, b.groups[g].request.memory);
  }
  EXPECT_EQ(a.groups[0].command[2], "print(\"a\\tb\")");
  EXPECT_EQ(a.groups[0].request.gpu_milli, 500);
  EXPECT_EQ(a.groups[1].request.gpu_milli, 250);
}

TEST_F(JsonDocumentTest, AQuotedNumberIsStillAString) {
  const std::string text = R"({"apiVersion": "tessera/v1", "kind": "Job", "metadata": {"name": "a"},
    "spec": {"priority": "5", "tasks": [{"name": "w", "command": ["true"]}]}})";
  const Result<std::vector<model::Job>> json = Parse(text, false);
  ASSERT_FALSE(json.ok());
  EXPECT_EQ(json.status().message(), "j.json: spec.priority: expected an integer, got the string '5'");
  const Result<std::vector<model::Job>> yaml = Parse(text, true);
  ASSERT_FALSE(yaml.ok());
  EXPECT_EQ(yaml.status().message(), "j.json:2:26: spec.priority: expected an integer, got the string '5'");
}

TEST_F(JsonDocumentTest, ErrorsNameTheFieldPath) {
  const Result<std::vector<model::Job>> json = Parse(
      R"({"apiVersion": "tessera/v1", "kind": "Job", "metadata": {"name": "a"},
          "spec": {"tasks": [{"name": "w", "resources": {"gpu": 1}}]}})",
      false);
  ASSERT_FALSE(json.ok());
  EXPECT_THAT(json.status().message(), HasSubstr("j.json: spec.tasks[0].resources.gpu: unknown field 'gpu'; allowed: "));
  const Result<std::vector<model::Job>> null_field = Parse(
      R"({"apiVersion": "tessera/v1", "kind": "Job", "metadata": {"name": "a"}, "spec": {"walltime": null, "tasks": []}})", false);
  ASSERT_FALSE(null_field.ok());
  EXPECT_THAT(null_field.status().message(), HasSubstr("spec.walltime: expected a duration"));
}

// Both readers reject the same bodies with the same message, but for the position.
TEST_F(JsonDocumentTest, RejectsWhatTheYamlReaderRejectsWithTheSameReason) {
  const std::string head = R"({"apiVersion": "tessera/v1", "kind": "Job", "metadata": {"name": "a"}, )";
  for (const std::string spec : {R"("spec": {"walltime": null, "tasks": [{"name": "w", "command": ["x"]}]}})",
                                 R"("spec": {"priority": 1.5, "tasks": [{"name": "w", "command": ["x"]}]}})",
                                 R"("spec": {"preemptible": "true", "tasks": [{"name": "w", "command": ["x"]}]}})",
                                 R"("spec": {"tasks": [{"name": "w", "command": "x"}]}})",
                                 R"("spec": {"tasks": [{"name": "w", "command": ["x"], "resources": {"gpus": []}}]}})",
                                 R"("spec": {"tasks": {}}})", R"("spec": []})", R"("status": {}, "spec": {"tasks": []}})"}) {
    const Result<std::vector<model::Job>> json = Parse(head + spec, false);
    const Result<std::vector<model::Job>> yaml = Parse(head + spec, true);
    ASSERT_FALSE(json.ok()) << spec;
    ASSERT_FALSE(yaml.ok()) << spec;
    std::string located = yaml.status().message();  // "j.json:1:NN: reason" -> "j.json: reason"
    located.erase(6, located.find(": ") - 6);
    EXPECT_EQ(json.status().message(), located) << spec;
  }
}

TEST_F(JsonDocumentTest, LeavesEverythingButOneWellFormedObjectToTheYamlReader) {
  for (const char* text : {"apiVersion: tessera/v1", "{\"a\": 1", "{\"a\": 1, \"a\": 2}", "{\"a\": {\"b\": 1, \"b\": 1}}", "[{}]",
                           "5", "\"text\"", "{} x", "{}{}", "", "  ", "{\"a\": [1,]}"}) {
    EXPECT_FALSE(ReadJsonObject(text, "j.json").has_value()) << text;
  }
  const std::optional<YamlValue> nested = ReadJsonObject(R"( {"a": [1, {"b": [true, null, 2.5e3]}], "c": {}} )", "j.json");
  ASSERT_TRUE(nested.has_value());
  const YAML::Node& root = nested->node();
  ASSERT_TRUE(root.IsMap());
  EXPECT_EQ(root["a"][0].Scalar(), "1");
  EXPECT_EQ(root["a"][1]["b"][0].Scalar(), "true");
  EXPECT_TRUE(root["a"][1]["b"][1].IsNull());
  EXPECT_EQ(root["a"][1]["b"][2].Scalar(), "2.5e3");
  EXPECT_TRUE(root["c"].IsMap());
  EXPECT_EQ(root["c"].size(), 0u);
}

}  // namespace
}  // namespace tessera::spec
