#include "controlplane/record_codecs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/json_reader.h"
#include "store/state_store.h"

namespace tessera::controlplane {
namespace {

using ::testing::HasSubstr;
using nlohmann::json;

model::Job TwoWorkers() {
  model::Job job;
  job.name = "ddp";
  job.priority = 5;
  job.restarts = 1;
  job.max_restarts = 3;
  job.attained_gpu_seconds = 120.5;
  job.not_before = 1'700'000'123;
  job.state = model::JobState::kRunning;
  model::TaskGroup group;
  group.name = "worker";
  group.replicas = 2;
  group.request.gpu_milli = 4000;
  job.groups.push_back(group);
  return job;
}

JobRecord RunningRecord() {
  JobRecord r;
  r.user = "alice";
  r.queue = "research/nlp";
  r.submit_dir = "/home/alice";
  r.attempt = 2;
  r.hung_attempt = 2;
  r.submit_ms = 1'700'000'000'000;
  r.scheduled_ms = 1'700'000'100'000;
  r.running_ms = 1'700'000'101'000;
  r.message = "placed";
  r.gpu_seconds = 99.25;
  r.idle_gpu_seconds = 3.5;
  for (int i = 0; i < 2; ++i) {
    TaskRecord t;
    t.group = 0;
    t.index = i;
    t.name = "worker-" + std::to_string(i);
    t.node = "n" + std::to_string(i + 1);
    t.gpus = {0, 1, 2, 3};
    t.gpu_milli = 1000;
    t.gpu_memory = 80LL << 30;
    t.cpu_milli = 8000;
    t.memory = 64LL << 30;
    t.state = i == 0 ? TaskState::kRunning : TaskState::kExited;
    t.exit_code = i == 0 ? 0 : 137;
    r.tasks.push_back(t);
  }
  return r;
}

std::string StoredJobText() {
  return api::Dump(JobDocument(model::JobId(7), TwoWorkers(), RunningRecord()));
}

// The stored job with one field replaced (or, with a null value, removed).
std::string WithField(const std::string& key, const json& value) {
  json j = json::parse(StoredJobText());
  if (value.is_null()) {
    j.erase(key);
  } else {
    j[key] = value;
  }
  return j.dump();
}

TEST(RecordCodecsTest, AJobRecordComesBackAsItWasWritten) {
  const Result<StoredJob> back = DecodeJob(store::NumericKey(7), StoredJobText());
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->id, model::JobId(7));
  EXPECT_EQ(back->state, model::JobState::kRunning);
  EXPECT_EQ(back->restarts, 1);
  EXPECT_DOUBLE_EQ(back->attained_gpu_seconds, 120.5);
  EXPECT_EQ(back->restart_after_ms, 1'700'000'123'000);
  const JobRecord expected = RunningRecord();
  const JobRecord& r = back->record;
  EXPECT_EQ(r.user, expected.user);
  EXPECT_EQ(r.queue, expected.queue);
  EXPECT_EQ(r.submit_dir, expected.submit_dir);
  EXPECT_EQ(r.attempt, 2);
  EXPECT_EQ(r.hung_attempt, 2);
  EXPECT_EQ(r.submit_ms, expected.submit_ms);
  EXPECT_EQ(r.scheduled_ms, expected.scheduled_ms);
  EXPECT_EQ(r.running_ms, expected.running_ms);
  EXPECT_EQ(r.message, "placed");
  EXPECT_DOUBLE_EQ(r.gpu_seconds, 99.25);
  EXPECT_DOUBLE_EQ(r.idle_gpu_seconds, 3.5);
  ASSERT_EQ(r.tasks.size(), 2u);
  EXPECT_EQ(r.tasks[1].name, "worker-1");
  EXPECT_EQ(r.tasks[1].node, "n2");
  EXPECT_EQ(r.tasks[1].gpus, (std::vector<std::int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(r.tasks[1].gpu_memory, 80LL << 30);
  EXPECT_EQ(r.tasks[1].state, TaskState::kExited);
  EXPECT_EQ(r.tasks[1].exit_code, 137);
  EXPECT_EQ(r.tasks[0].state, TaskState::kRunning);
}

TEST(RecordCodecsTest, AnArrayAndItsElementsComeBackAndDamageToThemIsNamed) {
  model::Job parent = TwoWorkers();
  parent.id = model::JobId(7);
  parent.array = std::make_shared<const model::JobArray>(*model::ParseArrayRange("0-9%2"));
  parent.is_array_parent = true;
  parent.array_progress[model::JobState::kRunning] = 2;
  JobRecord idle = RunningRecord();
  idle.tasks.clear();  // an array has no tasks of its own, even while it runs
  const json array = JobDocument(parent.id, parent, idle);
  EXPECT_EQ(array["array"]["counts"]["pending"], 8);
  EXPECT_EQ(array["state"], "running");
  const Result<StoredJob> back = DecodeJob(store::NumericKey(7), array.dump());
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_FALSE(back->array_parent.valid());

  const model::Job element = model::ArrayElement(parent, 3);
  const std::string key = store::NumericKey(11);
  const json stored = JobDocument(element.id, element, RunningRecord());
  const Result<StoredJob> again = DecodeJob(key, stored.dump());
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->array_parent, model::JobId(7));
  EXPECT_EQ(again->array_index, 3);

  const auto refused = [&](json j) {
    const Result<StoredJob> r = DecodeJob(key, j.dump());
    return r.ok() ? std::string("ok") : r.status().message();
  };
  json j = stored;
  j.erase("arrayIndex");
  EXPECT_EQ(refused(j), "arrayIndex: an array element names both its array job and its index");
  j = stored;
  j["arrayJobId"] = 11;
  EXPECT_THAT(refused(j), HasSubstr("arrayJobId: must be between 0 and 10"));
  j = stored;
  j["arrayIndex"] = -1;
  EXPECT_THAT(refused(j), HasSubstr("arrayIndex: must be between 0 and 9999999"));
  j = array;
  j["array"] = 5;
  EXPECT_EQ(DecodeJob(store::NumericKey(7), j.dump()).status().message(), "array: expected an object");
}

TEST(RecordCodecsTest, ADamagedJobRecordIsRefusedWithItsFieldAndReason) {
  const std::string key = store::NumericKey(7);
  const auto refused = [&](const std::string& k, const std::string& value) {
    const Result<StoredJob> r = DecodeJob(k, value);
    EXPECT_FALSE(r.ok()) << value;
    return r.ok() ? std::string() : r.status().message();
  };
  // The three the issue found: a key that is not an id, one that parsed as 0, a field of the wrong type.
  EXPECT_THAT(refused("abc", StoredJobText()), HasSubstr("key: not a job id"));
  EXPECT_THAT(refused("0000000000000000000x", StoredJobText()), HasSubstr("key: not a job id"));
  EXPECT_THAT(refused(store::NumericKey(1LL << 40), StoredJobText()), HasSubstr("key: not a job id"));
  EXPECT_THAT(refused(key, WithField("gpus", "x")), HasSubstr("gpus: expected a number, got \"x\""));
  // Truncated, not an object, an unknown or missing field, an id that is not the key's.
  const std::string text = StoredJobText();
  EXPECT_THAT(refused(key, text.substr(0, text.size() / 2)), HasSubstr("value: malformed JSON"));
  EXPECT_THAT(refused(key, "[1,2]"), HasSubstr("value: expected a JSON object"));
  EXPECT_THAT(refused(key, WithField("colour", "red")), HasSubstr("colour: unknown field"));
  EXPECT_THAT(refused(key, WithField("state", nullptr)), HasSubstr("state: required field is missing"));
  EXPECT_THAT(refused(key, WithField("state", "paused")), HasSubstr("state: 'paused' is not pending"));
  EXPECT_THAT(refused(store::NumericKey(8), text), HasSubstr("id: 7 differs from the record's key"));
  EXPECT_THAT(refused(key, WithField("attempt", -1)), HasSubstr("attempt: must be between 0"));
  // Inside a task.
  json j = json::parse(text);
  j["tasks"][1]["gpus"] = json::array({0, 99});
  EXPECT_THAT(refused(key, j.dump()), HasSubstr("tasks[1].gpus[1]: expected an integer between 0 and 63"));
  j = json::parse(text);
  j["tasks"][0]["state"] = "zombie";
  EXPECT_THAT(refused(key, j.dump()), HasSubstr("tasks[0].state: 'zombie' is not assigned"));
  j = json::parse(text);
  j["tasks"] = json::array();
  EXPECT_THAT(refused(key, j.dump()), HasSubstr("tasks: a running job has none"));
}

TEST(RecordCodecsTest, NodesAndQueuesComeBackAndTheirKeysMustMatch) {
  NodeRecord node;
  node.inventory.name = "n1";
  node.inventory.address = "10.0.0.1";
  node.inventory.cpu_milli = 64000;
  node.inventory.memory = 512LL << 30;
  for (int i = 0; i < 2; ++i) {
    api::GpuInventory gpu;
    gpu.index = i;
    gpu.model = "H100";
    gpu.memory = 80LL << 30;
    node.inventory.gpus.push_back(gpu);
  }
  node.cordoned = true;
  node.state = NodeState::kLost;
  node.registered_ms = 42;
  node.unhealthy_gpus[1] = "Xid 79";
  const Result<NodeRecord> back = DecodeNode("n1", EncodeNode(node));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_TRUE(back->cordoned);
  EXPECT_EQ(back->state, NodeState::kLost);
  EXPECT_EQ(back->registered_ms, 42);
  EXPECT_EQ(back->inventory.gpus.size(), 2u);
  EXPECT_EQ(back->unhealthy_gpus.at(1), "Xid 79");
  EXPECT_THAT(DecodeNode("n2", EncodeNode(node)).status().message(), HasSubstr("inventory.name: 'n1' differs from the record's key"));
  node.unhealthy_gpus[7] = "gone";
  EXPECT_THAT(DecodeNode("n1", EncodeNode(node)).status().message(), HasSubstr("unhealthyGpus.7: not a GPU index of this node"));

  const model::QueueSpec queue{"research/nlp", 8000, 16000, 2.0, 4000, true, false};
  const Result<StoredQueue> q = DecodeQueue("research/nlp", EncodeQueue(queue, {{"bob"}, {"alice", "carol"}}));
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_EQ(q->spec.guaranteed_milli, 8000);
  EXPECT_EQ(q->spec.limit_milli, 16000);
  EXPECT_DOUBLE_EQ(q->spec.weight, 2.0);
  EXPECT_EQ(q->spec.user_limit_milli, 4000);
  EXPECT_TRUE(q->spec.require_image);
  EXPECT_FALSE(q->spec.allow_root_containers);
  EXPECT_EQ(q->access.members, (std::vector<std::string>{"alice", "carol"}));
  json bad = json::parse(EncodeQueue(queue, {}));
  bad["weight"] = 0;
  EXPECT_THAT(DecodeQueue("research/nlp", bad.dump()).status().message(), HasSubstr("weight: must be above 0"));
}

TEST(RecordCodecsTest, UsageAndTheNextIdComeBackOrAreRefused) {
  const UsageKey key{"default", "alice", 472'000};
  const auto [stored_key, value] = EncodeUsage(key, {3, 7200.5, 100});
  const Result<std::pair<UsageKey, Usage>> back = DecodeUsage(stored_key, value);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->first, key);
  EXPECT_EQ(back->second.jobs, 3);
  EXPECT_DOUBLE_EQ(back->second.gpu_seconds, 7200.5);
  EXPECT_THAT(DecodeUsage("[1,\"default\",\"alice\"]", value).status().message(), HasSubstr("key: differs"));

  EXPECT_EQ(*DecodeNextJobId("1234"), 1234);
  EXPECT_FALSE(DecodeNextJobId("").ok());
  EXPECT_FALSE(DecodeNextJobId("12a").ok());
  EXPECT_FALSE(DecodeNextJobId("99999999999").ok());
}

}  // namespace
}  // namespace tessera::controlplane
