#include "api/agent_protocol.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/json_reader.h"

namespace tessera::api {
namespace {

using ::testing::HasSubstr;

TEST(AgentProtocolTest, InventoryRoundTrips) {
  NodeInventory inv;
  inv.name = "n1";
  inv.leaf = "rack-2";
  inv.cpu_milli = 64000;
  inv.gpus = {{0, "GPU-a", "H100", 80LL << 30, 0, 0, true}, {1, "GPU-b", "H100", 80LL << 30, 1, 0, false}};
  auto back = NodeInventoryFromJson(ToJson(inv));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_TRUE(back->SameCapacity(inv));
  EXPECT_EQ(back->gpus[1].uuid, "GPU-b");
  EXPECT_FALSE(back->gpus[1].healthy);
  inv.gpus[1].nvlink_domain = 1;
  EXPECT_FALSE(back->SameCapacity(inv));

  inv.gpus[1].nvlink_domain = 0;
  inv.nvlink_group = "fabric-0f1e2d3c4b5a69788796a5b4c3d2e1f0.7";
  back = NodeInventoryFromJson(ToJson(inv));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->nvlink_group, inv.nvlink_group);
  EXPECT_TRUE(back->SameCapacity(inv));
  back->nvlink_group = "fabric-other.7";
  EXPECT_FALSE(back->SameCapacity(inv));  // moving to another rack-wide domain changes the topology
}

TEST(AgentProtocolTest, InventoryErrorsNameTheField) {
  auto bad = NodeInventoryFromJson(nlohmann::json::parse(R"({"name":"n","gpus":[{"index":0,"model":"H100","memory":1,"colour":"red"}]})"));
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("gpus[0].colour: unknown field"));
  auto mixed = NodeInventoryFromJson(nlohmann::json::parse(
      R"({"name":"n","gpus":[{"index":0,"model":"H100","memory":1},{"index":1,"model":"A100","memory":1}]})"));
  ASSERT_FALSE(mixed.ok());
  EXPECT_THAT(mixed.status().message(), HasSubstr("gpus[1].model: a node's GPUs must all be one model (H100)"));
}

TEST(AgentProtocolTest, AssignmentsAndReportsRoundTrip) {
  AssignmentSet set;
  set.revision = 7;
  Assignment a;
  a.key = {12, 2, 3};
  a.command = {"python3", "train.py"};
  a.env = {{"RANK", "3"}};
  a.gpus = {4, 5};
  a.gpu_milli = 1000;
  a.container.image = "127.0.0.1:5000/ml/train:v1";
  a.container.pull_policy = "Always";
  a.container.mounts = {{"/datasets/c4", "/data", true}, {"/scratch", "/scratch", false}};
  a.container.shm_bytes = 1 << 30;
  a.container.uid = 1000;
  a.container.gid = 100;
  a.container.allow_root = true;
  a.container.login = ContainerAssignment::Login{"robot", "s3cret"};
  a.container.network = ContainerAssignment::Network{4242, {"10.0.0.1", "10.0.0.2"}, 1};
  set.tasks.push_back(a);
  Assignment host;
  host.key = {13, 1, 0};
  host.command = {"true"};
  set.tasks.push_back(host);
  auto back = AssignmentSetFromJson(ToJson(set));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->revision, 7);
  EXPECT_EQ(back->tasks[0].key, (TaskKey{12, 2, 3}));
  EXPECT_EQ(back->tasks[0].env.at("RANK"), "3");
  EXPECT_EQ(back->tasks[0].gpus, (std::vector<std::int32_t>{4, 5}));
  const ContainerAssignment& c = back->tasks[0].container;
  EXPECT_EQ(c.image, "127.0.0.1:5000/ml/train:v1");
  EXPECT_EQ(c.pull_policy, "Always");
  ASSERT_EQ(c.mounts.size(), 2u);
  EXPECT_EQ(c.mounts[0].mount_path, "/data");
  EXPECT_TRUE(c.mounts[0].read_only);
  EXPECT_FALSE(c.mounts[1].read_only);
  EXPECT_EQ(c.shm_bytes, 1 << 30);
  EXPECT_EQ(c.uid, 1000);
  EXPECT_EQ(c.gid, 100);
  EXPECT_TRUE(c.allow_root);
  ASSERT_TRUE(c.login.has_value());
  EXPECT_EQ(c.login->username, "robot");
  EXPECT_EQ(c.login->password, "s3cret");
  ASSERT_TRUE(c.network.has_value());
  EXPECT_EQ(c.network->vni, 4242);
  EXPECT_EQ(c.network->nodes, (std::vector<std::string>{"10.0.0.1", "10.0.0.2"}));
  EXPECT_EQ(c.network->index, 1);
  EXPECT_TRUE(back->tasks[1].container.image.empty());  // a host process
  EXPECT_EQ(back->tasks[1].container.uid, -1);
  EXPECT_FALSE(back->tasks[1].container.login.has_value());
  const auto task_with = [](const char* container) {
    return nlohmann::json::parse(std::string(R"({"revision":1,"tasks":[{"job":1,"attempt":1,"task":0,"command":[],"container":)") + container + "}]}");
  };
  auto bad_policy = AssignmentSetFromJson(task_with(R"({"image":"busybox","pullPolicy":"Sometimes"})"));
  ASSERT_FALSE(bad_policy.ok());
  EXPECT_THAT(bad_policy.status().message(), HasSubstr("tasks[0].container.pullPolicy: 'Sometimes' is not one of"));
  auto relative = AssignmentSetFromJson(task_with(R"({"image":"busybox","mounts":[{"hostPath":"data","mountPath":"/data"}]})"));
  ASSERT_FALSE(relative.ok());
  EXPECT_THAT(relative.status().message(), HasSubstr("mounts[0].hostPath: must be an absolute path"));
  auto no_password = AssignmentSetFromJson(task_with(R"({"image":"busybox","registryLogin":{"username":"robot"}})"));
  ASSERT_FALSE(no_password.ok());
  EXPECT_THAT(no_password.status().message(), HasSubstr("container.registryLogin"));
  auto outside = AssignmentSetFromJson(task_with(R"({"image":"busybox","network":{"vni":7,"nodes":["10.0.0.1"],"index":1}})"));
  ASSERT_FALSE(outside.ok());
  EXPECT_THAT(outside.status().message(), HasSubstr("container.network.index"));

  StatusReport report;
  report.tasks.push_back({{12, 2, 3}, true, 137, "killed"});
  report.tasks.push_back({{13, 1, 0}, false, 0, "", false, 2'000, 45'000});
  TaskReport pulling;
  pulling.key = {14, 1, 0};
  pulling.message = "pulling 127.0.0.1:5000/ml/train:v1: 2 blobs";
  pulling.preparing = true;
  report.tasks.push_back(pulling);
  report.unhealthy_gpus.push_back({2, "Xid 79: GPU has fallen off the bus (hardware)"});
  report.images = std::vector<CachedImageReport>{{{"127.0.0.1:5000/ml/train:v1"}, "sha256:ab", 1 << 20}};
  report.faults.push_back({2, "xid", 79, "Xid 79: GPU has fallen off the bus", "hardware"});
  auto r = StatusReportFromJson(ToJson(report));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->tasks[0].exited);
  EXPECT_EQ(r->tasks[0].exit_code, 137);
  EXPECT_EQ(r->tasks[0].checkpoint_age_ms, -1);
  EXPECT_EQ(r->tasks[1].progress_age_ms, 2'000);
  EXPECT_EQ(r->tasks[1].checkpoint_age_ms, 45'000);
  EXPECT_FALSE(r->tasks[1].preparing);
  EXPECT_TRUE(r->tasks[2].preparing);
  EXPECT_FALSE(r->tasks[2].exited);
  EXPECT_EQ(r->tasks[2].message, "pulling 127.0.0.1:5000/ml/train:v1: 2 blobs");
  ASSERT_TRUE(r->images.has_value());
  ASSERT_EQ(r->images->size(), 1u);
  EXPECT_EQ(r->images->at(0).references.at(0), "127.0.0.1:5000/ml/train:v1");
  EXPECT_EQ(r->images->at(0).size_bytes, 1 << 20);
  EXPECT_FALSE(StatusReportFromJson(nlohmann::json::parse(R"({"tasks":[]})"))->images.has_value());  // a node without containers
  ASSERT_EQ(r->unhealthy_gpus.size(), 1u);
  EXPECT_EQ(r->unhealthy_gpus[0].index, 2);
  ASSERT_EQ(r->faults.size(), 1u);
  EXPECT_EQ(r->faults[0].code, 79);
  EXPECT_EQ(r->faults[0].fault_class, "hardware");
  auto no_reason = StatusReportFromJson(nlohmann::json::parse(R"({"tasks":[],"unhealthyGpus":[{"index":1}]})"));
  ASSERT_FALSE(no_reason.ok());
  EXPECT_THAT(no_reason.status().message(), HasSubstr("unhealthyGpus[0].reason"));
  auto bad = StatusReportFromJson(nlohmann::json::parse(R"({"tasks":[{"job":1,"attempt":1,"task":0,"state":"dancing"}]})"));
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("tasks[0].state: 'dancing' is not one of: running, preparing, exited"));
}

TEST(JsonReaderTest, MalformedJsonSaysWhere) {
  auto bad = ParseJsonBody("{\"a\": }");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("malformed JSON: parse error at line 1, column 7"));
}

// Found by tests/fuzz: a number too large for a double threw out_of_range,
// which nothing caught, and a single request stopped the server.
TEST(JsonReaderTest, ANumberTooLargeIsMalformedNotACrash) {
  auto huge = ParseJsonBody("6e3333332");
  ASSERT_FALSE(huge.ok());
  EXPECT_THAT(huge.status().message(), HasSubstr("number overflow"));
}

TEST(JsonReaderTest, DumpReplacesBytesThatAreNotUtf8) {
  const std::string text = Dump(nlohmann::json{{"user", std::string("a\xff\x84" "b")}});
  EXPECT_EQ(text, "{\"user\":\"a\xef\xbf\xbd\xef\xbf\xbd" "b\"}");
}

}  // namespace
}  // namespace tessera::api
