// The control plane through its HTTP API, in one process: an agent's side is
// played by the test with the same client the agent uses.
#include "server/server.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "net/http_client.h"
#include "sched/scheduler.h"
#include "spec/job_yaml.h"
#include "store/sqlite_store.h"

namespace tessera::server {
namespace {

using ::testing::HasSubstr;
using nlohmann::json;

constexpr char kJob[] = R"(apiVersion: tessera/v1
kind: Job
metadata: {name: gang}
spec:
  tasks: [{name: worker, replicas: 2, resources: {gpus: 4}, command: [python3, train.py]}]
)";

json Inventory(const std::string& name, int gpus) {
  json g = json::array();
  for (int i = 0; i < gpus; ++i) g.push_back({{"index", i}, {"model", "H100"}, {"memory", 80LL << 30}, {"numa", i / 4}});
  return {{"name", name}, {"address", "10.0.0." + name.substr(1)}, {"cpuMilli", 64000}, {"memory", 512LL << 30}, {"gpus", g},
          {"provider", "test"}};
}

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("tessera-server-test-" + std::to_string(getpid()));
    std::filesystem::remove_all(dir_);
    Restart();
  }
  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }
  ServerOptions Options(std::chrono::milliseconds heartbeat_timeout = std::chrono::seconds(60)) const {
    ServerOptions options;
    options.data_dir = dir_.string();
    options.port = 0;
    options.plane.cycle_interval = std::chrono::milliseconds(1);
    options.plane.heartbeat_timeout = heartbeat_timeout;
    options.plane.initial_queues = {{"default", model::kUnlimited / 2, model::kUnlimited, 1.0}};
    options.plane.max_ended_jobs = max_ended_jobs_;
    options.plane.clock = clock_;
    return options;
  }
  void Restart(std::chrono::milliseconds heartbeat_timeout = std::chrono::seconds(60)) {
    server_.reset();
    auto server = Server::Start(Options(heartbeat_timeout));
    ASSERT_TRUE(server.ok()) << server.status().message();
    server_ = std::move(*server);
    client_ = std::make_unique<net::HttpClient>(net::Endpoint{"127.0.0.1", server_->port()});
  }
  json Call(const std::string& method, const std::string& target, const std::string& body = {}, int expect = 200,
            const std::string& type = "application/json") {
    auto r = client_->Send(method, target, body, type);
    EXPECT_TRUE(r.ok()) << r.status().message();
    if (!r.ok()) return {};
    EXPECT_EQ(r->status, expect) << method << " " << target << ": " << r->body;
    return r->body.empty() ? json() : json::parse(r->body);
  }
  // Polls a job until `state` or a deadline.
  json AwaitJob(int id, const std::string& state) {
    json job;
    for (int i = 0; i < 200; ++i) {
      job = Call("GET", "/v1/jobs/" + std::to_string(id));
      if (job.value("state", "") == state) return job;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ADD_FAILURE() << "job " << id << " never reached " << state << ": " << job.dump();
    return job;
  }

  // Waits until two more cycles have ended, so that one began after this
  // call: what it decided about the state as it is now is in the answers.
  void AwaitCycles() {
    const std::int64_t before = Call("GET", "/v1/cluster")["cycles"];
    for (int i = 0; i < 500; ++i) {
      if (Call("GET", "/v1/cluster")["cycles"].get<std::int64_t>() >= before + 2) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ADD_FAILURE() << "no scheduling cycle ran";
  }

  // A placed run reaches its agents once its binding is durable: a moment
  // after the job shows as starting.
  json AwaitAssignments(const std::string& node, std::size_t tasks) {
    json set;
    for (int i = 0; i < 200; ++i) {
      set = Call("GET", "/v1/nodes/" + node + "/assignments");
      if (set["tasks"].size() == tasks) return set;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ADD_FAILURE() << node << " never got " << tasks << " tasks: " << set.dump();
    return set;
  }

  std::filesystem::path dir_;
  std::size_t max_ended_jobs_ = 100'000;
  // The server's time, advanced by the tests (from the real time, so that stored times look like times).
  std::shared_ptr<ManualWallClock> clock_ = std::make_shared<ManualWallClock>(SystemWallClock().NowMs());
  std::unique_ptr<Server> server_;
  std::unique_ptr<net::HttpClient> client_;
};

TEST_F(ServerTest, AGangRunsToSuccessThroughTheAgentProtocol) {
  Call("POST", "/v1/nodes/n1/register", Inventory("n1", 4).dump());
  Call("POST", "/v1/nodes/n2/register", Inventory("n2", 4).dump());
  const json accepted = Call("POST", "/v1/jobs", kJob, 201, "application/yaml");
  const int id = accepted["jobs"][0]["id"];
  AwaitJob(id, "starting");
  // Each node is assigned one rank of the gang, with the rendezvous variables.
  std::map<std::string, json> tasks;
  for (const char* node : {"n1", "n2"}) {
    const json set = AwaitAssignments(node, 1);
    ASSERT_EQ(set["tasks"].size(), 1u) << set.dump();
    tasks[node] = set["tasks"][0];
    EXPECT_EQ(tasks[node]["env"]["MASTER_ADDR"], "10.0.0.1");
    EXPECT_EQ(tasks[node]["env"]["WORLD_SIZE"], "2");
    EXPECT_EQ(tasks[node]["gpus"].size(), 4u);
  }
  EXPECT_NE(tasks["n1"]["env"]["RANK"], tasks["n2"]["env"]["RANK"]);
  // Both report running, then exit 0.
  for (const char* state : {"running", "exited"}) {
    for (auto& [node, t] : tasks) {
      json report = {{"tasks", {{{"job", id}, {"attempt", t["attempt"]}, {"task", t["task"]}, {"state", state}, {"exitCode", 0}}}}};
      Call("POST", "/v1/nodes/" + node + "/status", report.dump());
    }
    if (std::string(state) == "running") {
      EXPECT_EQ(Call("GET", "/v1/jobs/" + std::to_string(id))["state"], "running");
    }
  }
  const json done = AwaitJob(id, "succeeded");
  EXPECT_GT(done["runningTime"].get<std::int64_t>(), 0);
  // The finished run leaves the nodes' assignment sets.
  EXPECT_TRUE(Call("GET", "/v1/nodes/n1/assignments")["tasks"].empty());
}

// The groups an agent reports are kept GPU by GPU: NVLink pairs 0+2 and 1+3,
// as NVML may find them, not the even split by index (0+1, 2+3).
TEST_F(ServerTest, AMigTaskHoldsADeviceOfItsProfileAndKeepsItAcrossARestart) {
  json inventory = Inventory("n1", 2);
  inventory["gpus"][0]["mig"] = json::array({{{"profile", "1g.10gb"}, {"uuid", "MIG-a"}}, {{"profile", "1g.10gb"}, {"uuid", "MIG-b"}}});
  Call("POST", "/v1/nodes/n1/register", inventory.dump());
  const auto submit = [&](const std::string& resources) {
    return Call("POST", "/v1/jobs", "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: m}\nspec: {tasks: [{name: m, command: [a], resources: " +
                resources + "}]}\n", 201, "application/yaml")["jobs"][0]["id"].get<int>();
  };
  const int first = submit("{mig: 1g.10gb}");
  EXPECT_EQ(AwaitJob(first, "starting")["tasks"][0]["migDevice"], "MIG-a");
  const json set = AwaitAssignments("n1", 1);
  EXPECT_EQ(set["tasks"][0]["migDevice"], "MIG-a");
  EXPECT_EQ(set["tasks"][0]["gpuSharing"], "mig");
  EXPECT_EQ(set["tasks"][0]["gpus"], json::array({0}));
  Restart();
  EXPECT_EQ(Call("GET", "/v1/jobs/" + std::to_string(first))["tasks"][0]["migDevice"], "MIG-a") << "the run keeps its device";
  // The second device goes to the next task, GPU 1 to a whole-GPU job; a third MIG task waits.
  const int second = submit("{mig: 1g.10gb}");
  EXPECT_EQ(AwaitJob(second, "starting")["tasks"][0]["migDevice"], "MIG-b");
  const int whole = submit("{gpus: 1}");
  EXPECT_EQ(AwaitJob(whole, "starting")["tasks"][0]["gpus"], json::array({1}));
  const json nodes = Call("GET", "/v1/nodes/n1");
  EXPECT_EQ(nodes["gpus"][0]["mig"][1]["used"], true) << nodes.dump();
  // Bad MIG input: a profile that is not one, and one no node has.
  inventory["name"] = "n2";
  inventory["gpus"][1]["mig"] = json::array({{{"profile", "1g10gb"}, {"uuid", "MIG-c"}}});
  EXPECT_THAT(Call("POST", "/v1/nodes/n2/register", inventory.dump(), 400)["error"].get<std::string>(),
              HasSubstr("gpus[1].mig[0].profile: '1g10gb' is not a MIG profile"));
  const json refused = Call("POST", "/v1/jobs", "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: m}\nspec: {tasks: [{name: m, command: [a], "
                            "resources: {mig: 3g.40gb}}]}\n", 422, "application/yaml");
  EXPECT_THAT(refused.dump(), HasSubstr("no node has a MIG device of profile 3g.40gb (the cluster's profiles: 1g.10gb)"));
  EXPECT_THAT(Call("POST", "/v1/jobs", "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: m}\nspec: {tasks: [{name: m, command: [a], "
                   "resources: {mig: 1g.10gb, gpus: 1}}]}\n", 400, "application/yaml").dump(),
              HasSubstr("gpus and mig exclude each other"));
}

// Placement prefers a node whose agent reported the job's image in its
// cache; the queue's registry login goes to the agent in the assignment.
TEST_F(ServerTest, AContainerJobPrefersTheNodeThatHoldsItsImageAndGetsItsQueuesLogin) {
  Call("POST", "/v1/nodes/n1/register", Inventory("n1", 4).dump());
  Call("POST", "/v1/nodes/n2/register", Inventory("n2", 4).dump());
  const json images = {{"images", {{{"references", {"127.0.0.1:5000/ml/train:v1"}}, {"digest", "sha256:" + std::string(64, 'a')}, {"sizeBytes", 1 << 20}}}}};
  Call("POST", "/v1/nodes/n2/status", images.dump());
  Call("PUT", "/v1/registry-credentials/127.0.0.1:5000/default", R"({"username": "robot", "password": "s3cret"})", 201);
  const auto submit = [&](const std::string& image) {
    return Call("POST", "/v1/jobs", "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: c}\nspec: {tasks: [{name: m, image: '" + image +
                "', resources: {gpus: 4}}]}\n", 201, "application/yaml")["jobs"][0]["id"].get<int>();
  };
  // Both nodes are empty: without the image n1 (the first) would be chosen.
  const int cached = submit("127.0.0.1:5000/ml/train:v1");
  EXPECT_EQ(AwaitJob(cached, "starting")["tasks"][0]["node"], "n2");
  const json set = AwaitAssignments("n2", 1);
  EXPECT_EQ(set["tasks"][0]["container"]["registryLogin"], json({{"username", "robot"}, {"password", "s3cret"}}));
  const int other = submit("ghcr.io/acme/other:1");
  EXPECT_EQ(AwaitJob(other, "starting")["tasks"][0]["node"], "n1");
  EXPECT_FALSE(AwaitAssignments("n1", 1)["tasks"][0]["container"].contains("registryLogin"));  // no login for ghcr.io
  EXPECT_EQ(Call("GET", "/v1/jobs/" + std::to_string(cached)).dump().find("s3cret"), std::string::npos);
}

TEST_F(ServerTest, TasksLandInsideTheNvlinkDomainsTheAgentFound) {
  json inventory = Inventory("n1", 4);
  for (int i = 0; i < 4; ++i) inventory["gpus"][i]["nvlinkDomain"] = i % 2;
  Call("POST", "/v1/nodes/n1/register", inventory.dump());
  Call("POST", "/v1/jobs", "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: pair}\nspec: {tasks: [{name: m, command: [a], resources: {gpus: 2}}]}\n",
       201, "application/yaml");
  const json set = AwaitAssignments("n1", 1);
  ASSERT_EQ(set["tasks"].size(), 1u);
  std::vector<int> gpus = set["tasks"][0]["gpus"];
  std::sort(gpus.begin(), gpus.end());
  EXPECT_EQ(gpus[1] - gpus[0], 2) << set.dump();  // {0, 2} or {1, 3}
}

// Nodes whose agents name one multi-node NVLink domain (an NVL72 rack) form
// it in the server: a gang that requires one lands inside it.
TEST_F(ServerTest, NodesNamingOneNvlinkGroupFormOneDomain) {
  for (const char* name : {"n1", "n2", "n3"}) {
    json inventory = Inventory(name, 4);
    if (std::string(name) != "n2") inventory["nvlinkGroup"] = "fabric-0f1e.1";
    Call("POST", std::string("/v1/nodes/") + name + "/register", inventory.dump());
  }
  const int id = Call("POST", "/v1/jobs",
                      "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: rack}\nspec: {topology: {level: nvlink-domain, mode: required}, "
                      "tasks: [{name: w, replicas: 2, command: [a], resources: {gpus: 4}}]}\n",
                      201, "application/yaml")["jobs"][0]["id"];
  AwaitJob(id, "starting");
  EXPECT_EQ(AwaitAssignments("n1", 1)["tasks"].size(), 1u);
  EXPECT_EQ(AwaitAssignments("n3", 1)["tasks"].size(), 1u);
  EXPECT_TRUE(Call("GET", "/v1/nodes/n2/assignments")["tasks"].empty());
  EXPECT_EQ(Call("GET", "/v1/nodes/n1")["nvlinkGroup"], "fabric-0f1e.1");
}

// The server and the simulator drive one scheduling core: the same jobs on the
// same nodes get the same placements from the server as from RunCycle called
// directly, as the simulator calls it.
TEST_F(ServerTest, TheServerPlacesJobsAsTheCoreDoesDirectly) {
  std::vector<model::NodeSpec> specs;
  for (const char* name : {"n1", "n2", "n3"}) {
    Call("POST", std::string("/v1/nodes/") + name + "/register", Inventory(name, 4).dump());
    model::NodeSpec spec;
    spec.name = name;
    spec.gpu_model = "H100";
    spec.gpus = 4;
    spec.gpu_memory = 80LL << 30;
    spec.cpu_milli = 64000;
    spec.memory = 512LL << 30;
    specs.push_back(spec);
  }
  std::string body;
  const char* shapes[] = {"{name: w, replicas: 2, resources: {gpus: 2}, command: [a]}",
                          "{name: w, resources: {gpus: 3}, command: [a]}",
                          "{name: w, resources: {gpus: 0.5, gpuMemory: 10Gi}, command: [a]}",
                          "{name: w, resources: {gpus: 1}, command: [a]}",
                          "{name: w, replicas: 2, resources: {gpus: 0.25, gpuMemory: 5Gi}, command: [a]}",
                          "{name: w, resources: {gpus: 4}, command: [a]}"};
  int n = 0;
  for (const char* shape : shapes) {
    body += "---\napiVersion: tessera/v1\nkind: Job\nmetadata: {name: j" + std::to_string(n++) + "}\nspec: {tasks: [" + shape + "]}\n";
  }
  Call("POST", "/v1/jobs", body, 201, "application/yaml");  // one body: one cycle sees them all

  sched::SchedulerState direct(*model::Cluster::Build(specs), *model::QueueTree::Build({{"default", model::kUnlimited / 2, model::kUnlimited, 1.0}}));
  auto jobs = spec::ParseJobYaml(body, "body", direct.cluster(), direct.queues());
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  for (model::Job& job : *jobs) direct.Submit(std::move(job), 0);
  auto scheduler = sched::Scheduler::Create({});
  sched::NullBinder binder;
  scheduler->RunCycle(direct, 0, binder);

  for (int id = 0; id < n; ++id) {
    const model::Job& expected = direct.job(model::JobId(id));
    const json job = AwaitJob(id, expected.state == model::JobState::kRunning ? "starting" : "pending");
    std::multiset<std::string> want, got;
    for (const model::TaskPlacement& p : expected.placements) {
      std::string where = direct.cluster().node(p.node).name;
      for (const model::GpuShare& g : p.gpus) where += ":" + std::to_string(direct.cluster().gpu(g.gpu).local_index) + "/" + std::to_string(g.milli);
      want.insert(where);
    }
    for (const json& t : job["tasks"]) {
      std::string where = t["node"];
      for (const json& g : t["gpus"]) where += ":" + std::to_string(g.get<int>()) + "/" + std::to_string(t["gpuMilli"].get<int>());
      got.insert(where);
    }
    EXPECT_EQ(got, want) << "job " << id;
  }
}

TEST_F(ServerTest, LongPollAnswersWhenTheNodeGetsWork) {
  const json reg = Call("POST", "/v1/nodes/n1/register", Inventory("n1", 4).dump());
  const std::int64_t revision = Call("GET", "/v1/nodes/n1/assignments")["revision"];
  std::thread submitter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    net::HttpClient other({"127.0.0.1", server_->port()});
    auto r = other.Send("POST", "/v1/jobs", "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: one}\nspec: {tasks: [{name: m, command: [true], resources: {gpus: 1}}]}\n", "application/yaml");
    EXPECT_TRUE(r.ok() && r->status == 201);
  });
  const auto start = std::chrono::steady_clock::now();
  const json set = Call("GET", "/v1/nodes/n1/assignments?after=" + std::to_string(revision) + "&wait=10");
  submitter.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  ASSERT_EQ(set["tasks"].size(), 1u);
  EXPECT_GT(set["revision"].get<std::int64_t>(), revision);
}

TEST_F(ServerTest, JobsSubmittedBeforeAnyNodeWaitThenRun) {
  const int id = Call("POST", "/v1/jobs", kJob, 201, "application/yaml")["jobs"][0]["id"];
  AwaitCycles();
  EXPECT_EQ(Call("GET", "/v1/jobs/" + std::to_string(id))["state"], "pending");
  Call("POST", "/v1/nodes/n1/register", Inventory("n1", 4).dump());
  Call("POST", "/v1/nodes/n2/register", Inventory("n2", 4).dump());
  AwaitJob(id, "starting");
}

TEST_F(ServerTest, BadInputGetsPreciseErrorsAndLeavesNothingBehind) {
  Call("POST", "/v1/nodes/n1/register", Inventory("n1", 4).dump());
  json e = Call("POST", "/v1/jobs", "{\"apiVersion\": ", 400);
  EXPECT_THAT(e["error"].get<std::string>(), HasSubstr("malformed JSON"));
  e = Call("POST", "/v1/jobs", "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: x}\nspec: {tasks: [{name: m, command: [a], resources: {gpus: 9}}]}\n", 422, "application/yaml");
  EXPECT_THAT(e["error"].get<std::string>(), HasSubstr("9 GPUs per task, but the largest node has 4"));
  e = Call("POST", "/v1/jobs", "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: x}\nspec: {tasks: [{name: m, command: [a], colour: red}]}\n", 400, "application/yaml");
  EXPECT_THAT(e["error"].get<std::string>(), HasSubstr("unknown field 'colour'"));
  // A JSON body is read without positions (spec/json_document.h); its errors still name the line.
  e = Call("POST", "/v1/jobs", "{\"apiVersion\": \"tessera/v1\", \"kind\": \"Job\", \"metadata\": {\"name\": \"x\"},\n"
                               " \"spec\": {\"tasks\": [{\"name\": \"m\", \"command\": [\"a\"], \"colour\": \"red\"}]}}", 400);
  EXPECT_THAT(e["error"].get<std::string>(), HasSubstr("body:2:53: spec.tasks[0].colour: unknown field 'colour'"));
  e = Call("POST", "/v1/jobs", "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: Bad_Name}\nspec: {tasks: [{name: m, command: [a]}]}\n", 400, "application/yaml");
  EXPECT_THAT(e["error"].get<std::string>(), HasSubstr("metadata.name"));
  e = Call("POST", "/v1/jobs", "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: nocmd}\nspec: {tasks: [{name: m}]}\n", 400, "application/yaml");
  EXPECT_THAT(e["error"].get<std::string>(), HasSubstr("spec.tasks[0].command: required"));
  // A two-job body with one bad job accepts neither.
  e = Call("POST", "/v1/jobs", "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: a}\nspec: {tasks: [{name: m, command: [a]}]}\n---\napiVersion: tessera/v1\nkind: Job\nmetadata: {name: b}\nspec: {tasks: [{name: m, command: [a], resources: {gpus: -1}}]}\n", 400, "application/yaml");
  EXPECT_TRUE(Call("GET", "/v1/jobs")["jobs"].empty());
  e = Call("POST", "/v1/jobs", std::string(3 << 20, 'x'), 413, "application/yaml");
  EXPECT_THAT(e["error"].get<std::string>(), HasSubstr("exceeds the limit"));
  e = Call("GET", "/v1/jobs/77", {}, 404);
  EXPECT_THAT(e["error"].get<std::string>(), HasSubstr("no job 77"));
  e = Call("GET", "/v1/events?wait=nan", {}, 400);
  EXPECT_THAT(e["error"].get<std::string>(), HasSubstr("wait: 'nan' is not a number of seconds"));
  e = Call("GET", "/v1/jobs?limit=x", {}, 400);
  EXPECT_THAT(e["error"].get<std::string>(), HasSubstr("limit: 'x' is not a non-negative integer"));
  e = Call("PUT", "/v1/queues/huge", "{\"guaranteed\": 1e30}", 400);
  EXPECT_THAT(e["error"].get<std::string>(), HasSubstr("guaranteed: must be between 0 and 1e9 GPUs"));
  e = Call("GET", "/v1/jobs?state=sleeping", {}, 400);
  EXPECT_THAT(e["error"].get<std::string>(), HasSubstr("'sleeping' is not one of"));
  e = Call("POST", "/v1/nodes/n2/register", Inventory("n1", 4).dump(), 400);
  EXPECT_THAT(e["error"].get<std::string>(), HasSubstr("does not match the path's node 'n2'"));
  e = Call("PUT", "/v1/queues/research", "{\"guaranteed\": 4, \"colour\": 1}", 400);
  EXPECT_THAT(e["error"].get<std::string>(), HasSubstr("colour: unknown field"));
}

TEST_F(ServerTest, AcceptedJobsAndRunsSurviveARestart) {
  Call("POST", "/v1/nodes/n1/register", Inventory("n1", 4).dump());
  Call("POST", "/v1/nodes/n2/register", Inventory("n2", 4).dump());
  const int gang = Call("POST", "/v1/jobs", kJob, 201, "application/yaml")["jobs"][0]["id"];
  AwaitJob(gang, "starting");
  const json before = AwaitAssignments("n1", 1)["tasks"];
  // Submitted while the gang holds every GPU: must wait, and survive.
  const int waiting = Call("POST", "/v1/jobs", "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: later}\nspec: {tasks: [{name: m, command: [a], resources: {gpus: 2}}]}\n", 201, "application/yaml")["jobs"][0]["id"];
  Call("PUT", "/v1/queues/research", "{\"guaranteed\": 2}", 201);
  Restart();
  EXPECT_EQ(Call("GET", "/v1/jobs/" + std::to_string(gang))["state"], "starting");
  EXPECT_EQ(Call("GET", "/v1/jobs/" + std::to_string(waiting))["state"], "pending");
  // The same run (attempt) is assigned again, so a surviving agent keeps its process.
  const json after = AwaitAssignments("n1", 1)["tasks"];
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0]["attempt"], before[0]["attempt"]);
  EXPECT_EQ(after[0]["env"], before[0]["env"]);
  bool research = false;
  const json queues = Call("GET", "/v1/queues");
  for (const json& q : queues["queues"]) research = research || q["name"] == "research";
  EXPECT_TRUE(research);
  // Deleting every queue survives a restart: the initial queues seed a new state only.
  Call("DELETE", "/v1/queues/research", {}, 204);
  Restart();
  bool still = false;
  const json after_delete = Call("GET", "/v1/queues");
  for (const json& q : after_delete["queues"]) still = still || q["name"] == "research";
  EXPECT_FALSE(still);
  // New ids continue after the old ones.
  const int next = Call("POST", "/v1/jobs", "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: n}\nspec: {tasks: [{name: m, command: [a]}]}\n", 201, "application/yaml")["jobs"][0]["id"];
  EXPECT_EQ(next, waiting + 1);
}

// A queue deleted once it held only ended jobs: they stay, after a restart too.
TEST_F(ServerTest, AnEndedJobOfADeletedQueueSurvivesARestart) {
  Call("PUT", "/v1/queues/research", "{\"guaranteed\": 2}", 201);
  const int id = Call("POST", "/v1/jobs", "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: r, queue: research}\nspec: {tasks: [{name: m, command: [a]}]}\n", 201, "application/yaml")["jobs"][0]["id"];
  Call("DELETE", "/v1/jobs/" + std::to_string(id));
  Call("DELETE", "/v1/queues/research", {}, 204);
  Restart();
  const json job = Call("GET", "/v1/jobs/" + std::to_string(id));
  EXPECT_EQ(job["state"], "cancelled");
  EXPECT_EQ(job["queue"], "research");
}

// A damaged record never crashes the server nor is misread: the start stops
// naming it, --check-store lists every one, and --quarantine-damaged sets
// them aside and starts with the rest.
TEST_F(ServerTest, ADamagedRecordStopsTheStartByNameOrIsSetAside) {
  Call("POST", "/v1/nodes/n1/register", Inventory("n1", 4).dump());
  Call("POST", "/v1/nodes/n2/register", Inventory("n2", 4).dump());
  const int gang = Call("POST", "/v1/jobs", kJob, 201, "application/yaml")["jobs"][0]["id"];
  AwaitJob(gang, "starting");
  const std::string small = "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: small}\nspec: {tasks: [{name: m, command: [a], resources: {gpus: 1}}]}\n";
  const int typo = Call("POST", "/v1/jobs", small, 201, "application/yaml")["jobs"][0]["id"];
  const int kept = Call("POST", "/v1/jobs", small, 201, "application/yaml")["jobs"][0]["id"];
  server_.reset();
  {
    // As the issue damaged it: the gang's key becomes "abc", one job's "gpus" a string.
    auto db = store::SqliteStore::Open((dir_ / "state.db").string());
    ASSERT_TRUE(db.ok()) << db.status().message();
    std::map<std::string, std::string> jobs;
    const Result<std::vector<store::Entry>> listed = (*db)->List(store::Collection::kJobs);
    ASSERT_TRUE(listed.ok());
    for (const store::Entry& e : *listed) jobs[e.key] = e.value;
    json bad = json::parse(jobs.at(store::NumericKey(typo)));
    bad["gpus"] = "x";
    ASSERT_TRUE((*db)->Apply({store::Mutation::Delete(store::Collection::kJobs, store::NumericKey(gang)),
                              store::Mutation::Put(store::Collection::kJobs, "abc", jobs.at(store::NumericKey(gang))),
                              store::Mutation::Put(store::Collection::kJobs, store::NumericKey(typo), bad.dump())})
                    .ok());
  }
  const auto refused = Server::Start(Options());
  ASSERT_FALSE(refused.ok());
  // The first in key order: job ids sort before "abc".
  EXPECT_THAT(refused.status().message(),
              HasSubstr("holds a damaged record: jobs/" + store::NumericKey(typo) + ": gpus: expected a number, got \"x\""));

  const Result<StoreCheck> check = Server::CheckStore(Options());
  ASSERT_TRUE(check.ok()) << check.status().message();
  EXPECT_THAT(check->damaged, ::testing::UnorderedElementsAre(
                                  HasSubstr("jobs/abc: key: not a job id"),
                                  "jobs/" + store::NumericKey(typo) + ": gpus: expected a number, got \"x\"",
                                  "job-specs/" + store::NumericKey(typo) + ": its job record is damaged"));
  EXPECT_GT(check->records, 6u);
  EXPECT_FALSE(Server::Start(Options()).ok()) << "a check changes nothing";

  ServerOptions quarantine = Options();
  quarantine.plane.quarantine_damaged = true;
  auto started = Server::Start(quarantine);
  ASSERT_TRUE(started.ok()) << started.status().message();
  server_ = std::move(*started);
  client_ = std::make_unique<net::HttpClient>(net::Endpoint{"127.0.0.1", server_->port()});
  const json listed = Call("GET", "/v1/jobs");
  ASSERT_EQ(listed["jobs"].size(), 1u) << listed.dump();
  EXPECT_EQ(listed["jobs"][0]["id"], kept);
  // The damaged ids stay taken, and the quarantine is reported as events.
  const int next = Call("POST", "/v1/jobs", small, 201, "application/yaml")["jobs"][0]["id"];
  EXPECT_GT(next, kept);
  int quarantined = 0;
  const json events = Call("GET", "/v1/events?since=0");
  for (const json& e : events["events"]) quarantined += e["type"] == "RecordQuarantined" ? 1 : 0;
  EXPECT_EQ(quarantined, 3);
  server_.reset();
  {
    auto db = store::SqliteStore::Open((dir_ / "state.db").string());
    ASSERT_TRUE(db.ok());
    std::map<std::string, json> aside;
    const Result<std::vector<store::Entry>> entries = (*db)->List(store::Collection::kQuarantine);
    ASSERT_TRUE(entries.ok());
    for (const store::Entry& e : *entries) aside[e.key] = json::parse(e.value);
    ASSERT_EQ(aside.size(), 3u);
    EXPECT_EQ(aside.at("jobs/abc")["collection"], "jobs");
    EXPECT_THAT(aside.at("jobs/abc")["reason"].get<std::string>(), HasSubstr("key: not a job id"));
    EXPECT_EQ(json::parse(aside.at("jobs/" + store::NumericKey(typo))["value"].get<std::string>())["gpus"], "x");
  }
  // Set aside, the damage no longer stops a plain start.
  Restart();
  EXPECT_EQ(Call("GET", "/v1/jobs")["jobs"].size(), 2u);
}

// Retention: past --max-ended-jobs the oldest ended jobs are forgotten, in
// memory and on disk; their GPU time stays in accounting and their ids are
// never handed out again, across a restart too.
TEST_F(ServerTest, EndedJobsAreForgottenOldestFirstAndTheirUsageAndIdsRemain) {
  max_ended_jobs_ = 1;
  Restart();
  Call("POST", "/v1/nodes/n1/register", Inventory("n1", 4).dump());
  const auto submit = [&](const std::string& name, int gpus, const std::string& extra = "") -> int {
    return Call("POST", "/v1/jobs", "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: " + name + "}\nspec: {" + extra +
                "tasks: [{name: m, command: [a], resources: {gpus: " + std::to_string(gpus) + "}}]}\n", 201, "application/yaml")["jobs"][0]["id"];
  };
  // `ran` holds 4 GPUs for a moment of telemetry, then succeeds.
  const int ran = submit("ran", 4);
  AwaitJob(ran, "starting");
  const json task = AwaitAssignments("n1", 1)["tasks"][0];
  const auto report = [&](const std::string& state) {
    json gpus = json::array();
    for (const json& g : task["gpus"]) gpus.push_back({{"index", g}, {"utilization", 90.0}, {"memoryUsed", 0}});
    const json r = {{"tasks", {{{"job", ran}, {"attempt", task["attempt"]}, {"task", task["task"]}, {"state", state}, {"exitCode", 0}}}},
                    {"gpus", gpus}};
    Call("POST", "/v1/nodes/n1/status", r.dump());
  };
  report("running");
  clock_->Advance(std::chrono::seconds(30));
  report("running");
  report("exited");
  const double gpu_seconds = AwaitJob(ran, "succeeded")["gpuSeconds"];
  ASSERT_GT(gpu_seconds, 0);
  // Three that wait on the cordoned node. `first` ends before `last` but is
  // kept: `waiter` waits for it by name. `last`, the highest id, is forgotten.
  Call("POST", "/v1/nodes/n1/cordon");
  const int waiter = submit("waiter", 4, "dependsOn: [{job: first, when: ended}], ");
  const int first = submit("first", 4);
  const int last = submit("last", 4);
  Call("DELETE", "/v1/jobs/" + std::to_string(first));
  Call("DELETE", "/v1/jobs/" + std::to_string(last));
  for (int i = 0; i < 200 && client_->Send("GET", "/v1/jobs/" + std::to_string(last), "", "")->status != 404; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (int pass = 0; pass < 2; ++pass) {
    SCOPED_TRACE(pass == 0 ? "before the restart" : "after the restart");
    const json gone = Call("GET", "/v1/jobs/" + std::to_string(ran), {}, 404);
    EXPECT_THAT(gone["error"].get<std::string>(), HasSubstr("ended jobs are forgotten"));
    Call("GET", "/v1/jobs/" + std::to_string(last), {}, 404);
    EXPECT_EQ(Call("GET", "/v1/jobs/" + std::to_string(first))["state"], "cancelled");
    std::set<int> listed;
    const json list = Call("GET", "/v1/jobs");
    for (const json& j : list["jobs"]) listed.insert(j["id"].get<int>());
    EXPECT_EQ(listed, (std::set<int>{first, waiter})) << list.dump();
    const json rows = Call("GET", "/v1/accounting?by=user")["rows"];
    ASSERT_EQ(rows.size(), 1u) << rows.dump();
    EXPECT_EQ(rows[0]["jobs"], 1);
    EXPECT_NEAR(rows[0]["gpuHours"].get<double>(), gpu_seconds / 3600, 1e-9);
    if (pass == 0) Restart();
  }
  // The GPU-time counter still counts the forgotten job's time.
  const std::string metrics = client_->Send("GET", "/metrics", "", "")->body;
  const std::string series = "tessera_gpu_allocated_seconds_total{queue=\"default\",user=\"anonymous\"} ";
  const std::size_t at = metrics.find(series);
  ASSERT_NE(at, std::string::npos) << metrics;
  EXPECT_NEAR(std::stod(metrics.substr(at + series.size())), gpu_seconds, 1e-6);
  EXPECT_EQ(submit("next", 1), last + 1);
  // A running job keeps what it waited for: it may be requeued and wait again.
  Call("POST", "/v1/nodes/n1/uncordon");
  AwaitJob(waiter, "starting");
  const int x1 = submit("x1", 4), x2 = submit("x2", 4);
  Call("DELETE", "/v1/jobs/" + std::to_string(x1));
  Call("DELETE", "/v1/jobs/" + std::to_string(x2));
  for (int i = 0; i < 200 && client_->Send("GET", "/v1/jobs/" + std::to_string(x2), "", "")->status != 404; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  Call("GET", "/v1/jobs/" + std::to_string(x1), {}, 404);
  EXPECT_EQ(Call("GET", "/v1/jobs/" + std::to_string(first))["state"], "cancelled");
}

TEST_F(ServerTest, ALostNodeRequeuesTheWholeGang) {
  Call("POST", "/v1/nodes/n1/register", Inventory("n1", 4).dump());
  Call("POST", "/v1/nodes/n2/register", Inventory("n2", 4).dump());
  Call("POST", "/v1/nodes/n3/register", Inventory("n3", 4).dump());
  const int id = Call("POST", "/v1/jobs", kJob, 201, "application/yaml")["jobs"][0]["id"];
  json job = AwaitJob(id, "starting");
  std::set<std::string> first;
  for (const json& t : job["tasks"]) first.insert(t["node"]);
  // Keep every node but one alive; the silent one is lost after the
  // timeout (60 s): 40 s pass, the others report, 30 s more pass.
  const std::string silent = *first.begin();
  std::set<std::string> alive = {"n1", "n2", "n3"};
  alive.erase(silent);
  clock_->Advance(std::chrono::seconds(40));
  for (const std::string& n : alive) Call("POST", "/v1/nodes/" + n + "/status", "{\"tasks\": []}");
  clock_->Advance(std::chrono::seconds(30));
  for (int i = 0; i < 100; ++i) {
    job = Call("GET", "/v1/jobs/" + std::to_string(id));
    if (job["attempt"] == 2 && job["state"] == "starting") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(job["attempt"], 2) << job.dump();
  for (const json& t : job["tasks"]) EXPECT_NE(t["node"], silent);
  json lost = Call("GET", "/v1/nodes/" + silent);
  EXPECT_EQ(lost["state"], "lost");
  // The restart was the cluster's fault, not the job's.
  EXPECT_EQ(job["restarts"], 0);
}

TEST_F(ServerTest, CancelStopsARunningJobAndFreesItsGpus) {
  Call("POST", "/v1/nodes/n1/register", Inventory("n1", 4).dump());
  const int id = Call("POST", "/v1/jobs", "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: c}\nspec: {tasks: [{name: m, command: [sleep, '100'], resources: {gpus: 4}}]}\n", 201, "application/yaml")["jobs"][0]["id"];
  AwaitJob(id, "starting");
  AwaitAssignments("n1", 1);
  const json cancelled = Call("DELETE", "/v1/jobs/" + std::to_string(id));
  EXPECT_EQ(cancelled["state"], "cancelled");
  EXPECT_TRUE(Call("GET", "/v1/nodes/n1/assignments")["tasks"].empty());
  EXPECT_EQ(Call("GET", "/v1/cluster")["allocatedGpus"], 0.0);
  const json again = Call("DELETE", "/v1/jobs/" + std::to_string(id), {}, 409);
  EXPECT_THAT(again["error"].get<std::string>(), HasSubstr("already ended (cancelled)"));
}

// Runs whose rank 0 shares a node get MASTER_PORTs of their own; a port
// comes back when its run ends, and a restart keeps the ports runs hold.
TEST_F(ServerTest, RunsSharingTheirFirstNodeGetTheirOwnMasterPort) {
  Call("POST", "/v1/nodes/n1/register", Inventory("n1", 4).dump());
  const auto submit = [&](const std::string& name) -> int {
    return Call("POST", "/v1/jobs", "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: " + name +
                "}\nspec: {tasks: [{name: m, command: [sleep, '100'], resources: {gpus: 1}}]}\n", 201, "application/yaml")["jobs"][0]["id"];
  };
  // Each job's port, as its task's environment and the API show it.
  const auto ports = [&](std::size_t tasks) {
    std::map<int, std::string> by_job;
    const json set = AwaitAssignments("n1", tasks);
    for (const json& t : set["tasks"]) {
      const std::string port = t["env"]["MASTER_PORT"];
      by_job[t["job"].get<int>()] = port;
      EXPECT_EQ(std::to_string(Call("GET", "/v1/jobs/" + std::to_string(t["job"].get<int>()))["masterPort"].get<int>()), port);
    }
    return by_job;
  };
  const int a = submit("a");
  const int b = submit("b");
  auto held = ports(2);
  EXPECT_EQ(held[a], "29500");
  EXPECT_EQ(held[b], "29501");

  Restart();
  const int c = submit("c");
  held = ports(3);
  EXPECT_EQ(held[c], "29502");  // the recovered runs still hold theirs

  Call("DELETE", "/v1/jobs/" + std::to_string(a));
  EXPECT_FALSE(Call("GET", "/v1/jobs/" + std::to_string(a)).contains("masterPort"));
  const int d = submit("d");
  held = ports(3);
  EXPECT_EQ(held[d], "29500");  // a's, given back when it ended
  EXPECT_EQ(held[b], "29501");
}

// A checkpoint reported through the API (POST /v1/jobs/{id}/checkpoint, by
// whoever may cancel the job) counts as one the task reported: a drain then
// loses only the work since. A job with no running run has none to report.
TEST_F(ServerTest, ACheckpointReportedThroughTheApiBoundsWhatADrainLoses) {
  Call("POST", "/v1/nodes/n1/register", Inventory("n1", 2).dump());
  const auto submit = [&](int gpus) -> int {
    return Call("POST", "/v1/jobs", "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: train}\nspec: {tasks: [{name: m, command: [sleep, '1000'], "
                "resources: {gpus: " + std::to_string(gpus) + "}}]}\n", 201, "application/yaml")["jobs"][0]["id"];
  };
  const int job = submit(1);
  const int too_big = submit(2);  // waits: one of the two GPUs is taken
  AwaitJob(job, "starting");
  const json error = Call("POST", "/v1/jobs/" + std::to_string(job) + "/checkpoint", {}, 409);
  EXPECT_THAT(error["error"].get<std::string>(), HasSubstr("has no running run"));
  Call("POST", "/v1/jobs/" + std::to_string(too_big) + "/checkpoint", {}, 409);
  Call("POST", "/v1/nodes/n1/status", json{{"tasks", {{{"job", job}, {"attempt", 1}, {"task", 0}, {"state", "running"}}}}}.dump());
  AwaitJob(job, "running");
  clock_->Advance(std::chrono::minutes(10));
  const json reported = Call("POST", "/v1/jobs/" + std::to_string(job) + "/checkpoint");
  EXPECT_EQ(reported["lastCheckpointTime"].get<std::int64_t>(), clock_->NowMs());
  clock_->Advance(std::chrono::seconds(3));
  Call("POST", "/v1/nodes/n1/drain");
  const json drained = AwaitJob(job, "pending");
  // Its one GPU for the 3 s since the checkpoint, not the 10 minutes it ran.
  EXPECT_NEAR(drained["lostGpuSeconds"].get<double>(), 3.0, 1.0);
}

// A checkpoint a task reports (it touches TESSERA_CHECKPOINT_FILE; its agent
// passes the age on) is what preemption weighs: of two low-priority jobs,
// the one that checkpointed a moment ago goes, not the one that started
// later but never checkpointed. The checkpoint survives a restart.
TEST_F(ServerTest, PreemptionTakesTheJobWhoseLastCheckpointLosesLeast) {
  Call("POST", "/v1/nodes/n1/register", Inventory("n1", 2).dump());
  const auto submit = [&](const std::string& name, int priority) -> int {
    return Call("POST", "/v1/jobs", "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: " + name + "}\nspec: {priority: " +
                std::to_string(priority) + ", tasks: [{name: m, command: [sleep, '1000'], resources: {gpus: 1}}]}\n",
                201, "application/yaml")["jobs"][0]["id"];
  };
  const auto report = [&](int id, std::int64_t checkpoint_age_ms) {
    json task = {{"job", id}, {"attempt", 1}, {"task", 0}, {"state", "running"}};
    if (checkpoint_age_ms >= 0) task["checkpointAgeMs"] = checkpoint_age_ms;
    Call("POST", "/v1/nodes/n1/status", json{{"tasks", {task}}}.dump());
  };
  const int old = submit("old", 0);
  AwaitJob(old, "starting");
  report(old, -1);
  clock_->Advance(std::chrono::minutes(10));
  const int young = submit("young", 0);
  AwaitJob(young, "starting");
  report(young, -1);
  clock_->Advance(std::chrono::minutes(1));
  report(old, 5'000);  // written 5 s ago: 11 minutes of work are safe
  report(old, 5'100);  // the same checkpoint a heartbeat later
  const std::int64_t written = clock_->NowMs() - 5'000;
  EXPECT_NEAR(Call("GET", "/v1/jobs/" + std::to_string(old))["lastCheckpointTime"].get<std::int64_t>(), written, 1'000);
  EXPECT_FALSE(Call("GET", "/v1/jobs/" + std::to_string(young)).contains("lastCheckpointTime"));

  Restart();
  EXPECT_NEAR(Call("GET", "/v1/jobs/" + std::to_string(old))["lastCheckpointTime"].get<std::int64_t>(), written, 1'000);
  const int urgent = submit("urgent", 100);
  AwaitJob(urgent, "starting");
  const json preempted = AwaitJob(old, "pending");
  const std::string why = "preempted by job " + std::to_string(urgent);
  EXPECT_THAT(preempted["message"].get<std::string>(), testing::StartsWith(why));
  EXPECT_EQ(preempted["requeueReason"], why);
  // Later cycles say why it waits after what stopped it, never instead of it.
  AwaitCycles();
  EXPECT_THAT(Call("GET", "/v1/jobs/" + std::to_string(old))["message"].get<std::string>(), testing::StartsWith(why + "; waiting: "));
  // What it lost: its one GPU for the 5 s since the checkpoint (and the
  // milliseconds the test took since), in the job and in the metrics.
  EXPECT_NEAR(preempted["lostGpuSeconds"].get<double>(), 5.0, 1.0);
  const auto metrics = client_->Send("GET", "/metrics");
  ASSERT_TRUE(metrics.ok());
  const std::string line = "tessera_lost_gpu_seconds_total{reason=\"preempted\"} ";
  const std::size_t at = metrics->body.find(line);
  ASSERT_NE(at, std::string::npos) << metrics->body;
  EXPECT_NEAR(std::stod(metrics->body.substr(at + line.size())), 5.0, 1.0);
  // The young job runs on (after the restart it is starting until its agent reports again).
  EXPECT_EQ(Call("GET", "/v1/jobs/" + std::to_string(young))["state"], "starting");
  std::set<int> on_node;
  const json set = AwaitAssignments("n1", 2);
  for (const json& t : set["tasks"]) on_node.insert(t["job"].get<int>());
  EXPECT_EQ(on_node, (std::set<int>{young, urgent}));
}

// The default job order learns what finished jobs ran for (sched/plugins/
// gittins_order.h), and a restarted server still knows it: after ten 1-GPU
// jobs that each ran a minute, a job that has run an hour is evicted for a
// fresh one, which is likely to be done soon.
TEST_F(ServerTest, TheLearnedJobOrderKnowsWhatFinishedJobsRanForAcrossARestart) {
  Call("POST", "/v1/nodes/n1/register", Inventory("n1", 1).dump());
  const auto submit = [&](const std::string& name) -> int {
    return Call("POST", "/v1/jobs", "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: " + name +
                "}\nspec: {tasks: [{name: m, command: [sleep, '1000'], resources: {gpus: 1}}]}\n", 201, "application/yaml")["jobs"][0]["id"];
  };
  const auto report = [&](int id, const char* state) {
    json task = {{"job", id}, {"attempt", 1}, {"task", 0}, {"state", state}, {"exitCode", 0}};
    Call("POST", "/v1/nodes/n1/status", json{{"tasks", {task}}}.dump());
  };
  const auto start = [&](int id) {
    AwaitJob(id, "starting");
    AwaitAssignments("n1", 1);
    report(id, "running");
  };
  for (int i = 0; i < 10; ++i) {
    const int id = submit("short-" + std::to_string(i));
    start(id);
    clock_->Advance(std::chrono::minutes(1));
    report(id, "exited");
    AwaitJob(id, "succeeded");
  }
  Restart();
  const int long_run = submit("long");
  start(long_run);
  clock_->Advance(std::chrono::hours(1));
  const int fresh = submit("fresh");
  AwaitJob(fresh, "starting");
  EXPECT_THAT(AwaitJob(long_run, "pending")["message"].get<std::string>(),
              testing::StartsWith("preempted by job " + std::to_string(fresh)));
}

TEST_F(ServerTest, AFailedTaskRestartsTheGangWithinItsBudget) {
  Call("POST", "/v1/nodes/n1/register", Inventory("n1", 4).dump());
  const int id = Call("POST", "/v1/jobs", "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: f}\nspec: {restart: {maxRestarts: 1}, tasks: [{name: m, command: [x], resources: {gpus: 1}}]}\n", 201, "application/yaml")["jobs"][0]["id"];
  for (int attempt = 1; attempt <= 2; ++attempt) {
    json job = json::object();
    for (int i = 0; i < 200 && !(job.value("attempt", 0) == attempt && job.value("state", "") == "starting"); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      job = Call("GET", "/v1/jobs/" + std::to_string(id));
    }
    ASSERT_EQ(job["attempt"], attempt);
    AwaitAssignments("n1", 1);  // reports count only for a dispatched run
    const json report = {{"tasks", {{{"job", id}, {"attempt", attempt}, {"task", 0}, {"state", "exited"}, {"exitCode", 3}, {"message", "boom"}}}}};
    Call("POST", "/v1/nodes/n1/status", report.dump());
  }
  const json job = AwaitJob(id, "failed");
  EXPECT_THAT(job["message"].get<std::string>(), HasSubstr("exited with code 3: boom"));
  EXPECT_EQ(job["restarts"], 1);
}

// The dashboard's views: one cell per GPU grouped by leaf, who holds each
// GPU, and the utilization history.
TEST_F(ServerTest, TheGpuMapShowsEachGpusCellAndTheJobHoldingIt) {
  json a = Inventory("n1", 4), b = Inventory("n2", 2);
  a["leaf"] = "leaf-10";
  b["leaf"] = "leaf-2";
  Call("POST", "/v1/nodes/n1/register", a.dump());
  Call("POST", "/v1/nodes/n2/register", b.dump());
  const int id = Call("POST", "/v1/jobs", "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: m}\nspec: {tasks: [{name: m, command: [x], resources: {gpus: 2}}]}\n", 201, "application/yaml")["jobs"][0]["id"];
  const json job = AwaitJob(id, "starting");
  const std::string node = job["tasks"][0]["node"];
  AwaitAssignments(node, 1);
  // Telemetry: the job's first GPU busy, its second idle.
  const std::vector<int> held = job["tasks"][0]["gpus"];
  const json report = {{"tasks", json::array()},
                       {"gpus", {{{"index", held[0]}, {"utilization", 80.0}, {"memoryUsed", 0}},
                                 {{"index", held[1]}, {"utilization", 0.0}, {"memoryUsed", 0}}}}};
  Call("POST", "/v1/nodes/" + node + "/status", report.dump());

  const json map = Call("GET", "/v1/cluster/gpus");
  ASSERT_EQ(map["nodes"].size(), 2u);
  EXPECT_EQ(map["nodes"][0]["leaf"], "leaf-2");  // by leaf, in natural order, not by joining order
  EXPECT_EQ(map["legend"]["I"], "idle");
  EXPECT_EQ(map["counts"]["allocated"], 1);
  EXPECT_EQ(map["counts"]["idle"], 1);
  EXPECT_EQ(map["counts"]["free"], 4);
  for (const json& n : map["nodes"]) {
    if (n["name"] != node) continue;
    const std::string cells = n["gpus"];
    EXPECT_EQ(cells[static_cast<std::size_t>(held[0])], 'A') << cells;
    EXPECT_EQ(cells[static_cast<std::size_t>(held[1])], 'I') << cells;
  }
  const json detail = Call("GET", "/v1/nodes/" + node);
  const json& gpu = detail["gpus"][static_cast<std::size_t>(held[1])];
  EXPECT_EQ(gpu["cell"], "idle");
  EXPECT_EQ(gpu["utilization"], 0.0);
  EXPECT_EQ(gpu["jobs"], json::array({id}));

  const json light = Call("GET", "/v1/nodes?gpus=false");  // the list's light form
  EXPECT_FALSE(light["nodes"][0].contains("gpus"));
  EXPECT_EQ(light["nodes"][0]["gpuCount"], 4);
  Call("GET", "/v1/nodes?gpus=maybe", {}, 400);

  const std::string other = node == "n1" ? "n2" : "n1";  // the node without the job: all its GPUs free
  Call("POST", "/v1/nodes/" + other + "/cordon");
  EXPECT_EQ(Call("GET", "/v1/cluster/gpus")["counts"]["cordoned"], other == "n1" ? 4 : 2);

  // The housekeeping thread samples the cluster at once, then once per interval.
  json history;
  for (int i = 0; i < 100 && (history = Call("GET", "/v1/cluster/history"))["samples"].empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_FALSE(history["samples"].empty());
  EXPECT_EQ(history["samples"][0]["gpus"], 6.0);
  EXPECT_EQ(history["intervalMs"], 10'000);
  Call("GET", "/v1/cluster/history?since=x", {}, 400);
  Call("GET", "/v1/jobs?order=sideways", {}, 400);
  EXPECT_EQ(Call("GET", "/v1/jobs?order=newest&limit=1")["jobs"][0]["id"], id);
}

// A GPU the agent takes out of service: no new work there, the run on it
// requeued without using up a restart, and the GPU back when the agent says so.
TEST_F(ServerTest, AnUnhealthyGpuRequeuesItsRunAndLeavesTheCapacity) {
  Call("POST", "/v1/nodes/n1/register", Inventory("n1", 4).dump());
  const int id = Call("POST", "/v1/jobs", "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: g}\nspec: {tasks: [{name: m, command: [x], resources: {gpus: 2}}]}\n", 201, "application/yaml")["jobs"][0]["id"];
  json job = AwaitJob(id, "starting");
  AwaitAssignments("n1", 1);
  const int bad = job["tasks"][0]["gpus"][0];
  const json report = {{"tasks", json::array()},
                       {"unhealthyGpus", {{{"index", bad}, {"reason", "Xid 48: double-bit ECC error (reset)"}}}},
                       {"faults", {{{"index", bad}, {"kind", "xid"}, {"code", 48}, {"detail", "Xid 48: double-bit ECC error"}, {"class", "reset"}}}}};
  Call("POST", "/v1/nodes/n1/status", report.dump());
  for (int i = 0; i < 200 && !(job["attempt"] == 2 && job["state"] == "starting"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    job = Call("GET", "/v1/jobs/" + std::to_string(id));
  }
  ASSERT_EQ(job["attempt"], 2) << job.dump();
  EXPECT_EQ(job["restarts"], 0);  // the cluster's fault, not the job's
  EXPECT_THAT(job["tasks"][0]["gpus"], ::testing::Not(::testing::Contains(bad)));
  const json map = Call("GET", "/v1/cluster/gpus");
  EXPECT_EQ(map["counts"]["unhealthy"], 1);
  EXPECT_EQ(map["nodes"][0]["gpus"].get<std::string>()[static_cast<std::size_t>(bad)], 'U');
  EXPECT_EQ(Call("GET", "/v1/nodes/n1")["gpus"][static_cast<std::size_t>(bad)]["outOfService"], "Xid 48: double-bit ECC error (reset)");
  std::string types;
  const json node_events = Call("GET", "/v1/events?since=0&kind=node");  // GPU events are the node's
  for (const json& e : node_events["events"]) types += e["type"].get<std::string>() + " ";
  EXPECT_THAT(types, HasSubstr("NodeRegistered GpuFault GpuUnhealthy"));
  // The same report again changes nothing; a report without it brings it back.
  Call("POST", "/v1/nodes/n1/status", json({{"tasks", json::array()}, {"unhealthyGpus", report["unhealthyGpus"]}}).dump());
  EXPECT_EQ(Call("GET", "/v1/jobs/" + std::to_string(id))["attempt"], 2);
  Call("POST", "/v1/nodes/n1/status", R"({"tasks": []})");
  EXPECT_EQ(Call("GET", "/v1/cluster/gpus")["counts"]["unhealthy"], 0);
  // It survives a restart of the server.
  Call("POST", "/v1/nodes/n1/status", report.dump());
  Restart();
  const json after = Call("GET", "/v1/cluster/gpus");
  EXPECT_EQ(after["counts"]["unhealthy"], 1) << after.dump();
}

// A restart's backoff holds across a restart of the server.
TEST_F(ServerTest, ARestartBackoffSurvivesAServerRestart) {
  Call("POST", "/v1/nodes/n1/register", Inventory("n1", 4).dump());
  const int id = Call("POST", "/v1/jobs", "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: b}\nspec: {restart: {maxRestarts: 2, backoff: 1h}, tasks: [{name: m, command: [x], resources: {gpus: 1}}]}\n", 201, "application/yaml")["jobs"][0]["id"];
  AwaitJob(id, "starting");
  AwaitAssignments("n1", 1);
  Call("POST", "/v1/nodes/n1/status", json({{"tasks", {{{"job", id}, {"attempt", 1}, {"task", 0}, {"state", "exited"}, {"exitCode", 1}}}}}).dump());
  json job = AwaitJob(id, "pending");
  ASSERT_TRUE(job.contains("restartAfter")) << job.dump();
  const std::int64_t after = job["restartAfter"];
  EXPECT_GT(after, clock_->NowMs() + 3500'000);
  Restart();
  Call("POST", "/v1/nodes/n1/register", Inventory("n1", 4).dump());
  AwaitCycles();
  job = Call("GET", "/v1/jobs/" + std::to_string(id));
  EXPECT_EQ(job["state"], "pending");
  EXPECT_EQ(job["restartAfter"], after);
  EXPECT_THAT(job["message"].get<std::string>(), HasSubstr("restart backoff"));
  // Once the hour has passed, it runs again (on n1, which its agent,
  // silent for that hour, registers again).
  clock_->Advance(std::chrono::hours(1) + std::chrono::seconds(2));
  Call("POST", "/v1/nodes/n1/register", Inventory("n1", 4).dump());
  EXPECT_EQ(AwaitJob(id, "starting")["attempt"], 2);
}

// A job array through the API: one job with counts, elements named
// "ID[INDEX]" that start lazily within the limit, each cancelled alone or
// with the array, all of it surviving restarts.
TEST_F(ServerTest, AnArrayRunsItsElementsWithinItsLimitAndSurvivesARestart) {
  Call("POST", "/v1/nodes/n1/register", Inventory("n1", 4).dump());
  const int id = Call("POST", "/v1/jobs", "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: arr}\nspec: {array: '0-9%3', tasks: [{name: m, command: [a], resources: {gpus: 1}}]}\n", 201, "application/yaml")["jobs"][0]["id"];
  const std::string array = "/v1/jobs/" + std::to_string(id);
  const json set = AwaitAssignments("n1", 3);
  std::set<std::string> indices;
  for (const json& t : set["tasks"]) {
    indices.insert(t["env"]["TESSERA_ARRAY_INDEX"].get<std::string>());
    EXPECT_EQ(t["env"]["TESSERA_ARRAY_JOB_ID"], std::to_string(id));
    EXPECT_EQ(t["env"]["TESSERA_ARRAY_COUNT"], "10");
  }
  EXPECT_EQ(indices, (std::set<std::string>{"0", "1", "2"}));
  // One job to list, with its counts; its elements on request.
  const json listed = Call("GET", "/v1/jobs")["jobs"];
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0]["state"], "running");
  EXPECT_EQ(listed[0]["array"]["counts"], (json{{"pending", 7}, {"running", 3}, {"succeeded", 0}, {"failed", 0}, {"cancelled", 0}}));
  EXPECT_EQ(listed[0]["array"]["limit"], 3);
  EXPECT_EQ(Call("GET", "/v1/jobs?array=" + std::to_string(id))["jobs"].size(), 3u);
  EXPECT_EQ(Call("GET", "/v1/jobs?expand=true")["jobs"].size(), 4u);
  const json element = Call("GET", array + "[1]");
  EXPECT_EQ(element["arrayJobId"], id);
  EXPECT_EQ(element["arrayIndex"], 1);
  EXPECT_EQ(element["id"], id + 2);
  EXPECT_THAT(element["spec"].get<std::string>(), HasSubstr("0-9%3"));
  EXPECT_THAT(Call("GET", array + "[9]")["message"].get<std::string>(), HasSubstr("not started yet"));
  EXPECT_THAT(Call("GET", array + "[10]", {}, 404)["error"].get<std::string>(), HasSubstr("array " + std::to_string(id) + " has no index 10 (its indices: 0-9)"));
  EXPECT_THAT(Call("GET", array + "[x]", {}, 400)["error"].get<std::string>(), HasSubstr("is not a job id (12) or an array element (12[3])"));

  // Element 0 succeeds; 1 is cancelled running; 9 is cancelled before it starts.
  const json report = {{"tasks", {{{"job", id + 1}, {"attempt", 1}, {"task", 0}, {"state", "exited"}, {"exitCode", 0}}}}};
  Call("POST", "/v1/nodes/n1/status", report.dump());
  EXPECT_EQ(Call("DELETE", array + "[1]")["state"], "cancelled");
  EXPECT_EQ(Call("DELETE", array + "[9]")["state"], "cancelled");
  AwaitAssignments("n1", 3);  // 2, 3 and 4 now
  AwaitCycles();
  json counts = Call("GET", array)["array"]["counts"];
  EXPECT_EQ(counts, (json{{"pending", 4}, {"running", 3}, {"succeeded", 1}, {"failed", 0}, {"cancelled", 2}}));

  Restart();
  EXPECT_EQ(Call("GET", array)["array"]["counts"], counts);
  EXPECT_EQ(Call("GET", array + "[9]")["state"], "cancelled");
  const json again = AwaitAssignments("n1", 3)["tasks"];
  for (const json& t : again) EXPECT_EQ(t["attempt"], 1) << "the same runs go on";

  // The whole array: its running elements stop, the rest never start.
  EXPECT_EQ(Call("DELETE", array)["state"], "cancelled");
  EXPECT_TRUE(Call("GET", "/v1/nodes/n1/assignments")["tasks"].empty());
  counts = Call("GET", array)["array"]["counts"];
  EXPECT_EQ(counts, (json{{"pending", 0}, {"running", 0}, {"succeeded", 1}, {"failed", 0}, {"cancelled", 9}}));
  Restart();
  EXPECT_EQ(Call("GET", array)["state"], "cancelled");
  EXPECT_EQ(Call("GET", array)["array"]["counts"], counts);
  // Ids go on after the ones the array kept for its elements.
  const int next = Call("POST", "/v1/jobs", "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: n}\nspec: {tasks: [{name: m, command: [a]}]}\n", 201, "application/yaml")["jobs"][0]["id"];
  EXPECT_EQ(next, id + 11);
}

TEST_F(ServerTest, AnArrayEndsWithItsLastElementIsAccountedAsOneJobAndIsForgottenWithThem) {
  max_ended_jobs_ = 1;
  Restart();
  Call("POST", "/v1/nodes/n1/register", Inventory("n1", 4).dump());
  const int id = Call("POST", "/v1/jobs", "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: arr}\nspec: {sweep: {lr: [a, b]}, tasks: [{name: m, command: [a], resources: {gpus: 1}}]}\n", 201, "application/yaml")["jobs"][0]["id"];
  const json set = AwaitAssignments("n1", 2);
  for (const json& t : set["tasks"]) {
    const std::string lr = t["env"]["TESSERA_SWEEP_LR"];
    EXPECT_EQ(lr, t["env"]["TESSERA_ARRAY_INDEX"] == "0" ? "a" : "b");
  }
  EXPECT_EQ(Call("GET", "/v1/jobs/" + std::to_string(id) + "[1]")["parameters"], (json{{"lr", "b"}}));
  // Both elements run for 30 s of telemetry; element 0 succeeds, element 1 fails.
  const auto report = [&](const std::string& state) {
    json tasks = json::array();
    for (const json& t : set["tasks"]) {
      tasks.push_back({{"job", t["job"]}, {"attempt", t["attempt"]}, {"task", t["task"]}, {"state", state},
                       {"exitCode", t["env"]["TESSERA_ARRAY_INDEX"] == "0" ? 0 : 1}});
    }
    const json gpus = {{{"index", 0}, {"utilization", 90.0}, {"memoryUsed", 0}}, {{"index", 1}, {"utilization", 90.0}, {"memoryUsed", 0}}};
    Call("POST", "/v1/nodes/n1/status", json{{"tasks", tasks}, {"gpus", gpus}}.dump());
  };
  report("running");
  clock_->Advance(std::chrono::seconds(30));
  report("running");
  report("exited");
  const json array = AwaitJob(id, "failed");  // one failed: the array failed
  EXPECT_EQ(array["message"], "its elements ended: 1 succeeded, 1 failed");
  bool failed = false;
  const json events = Call("GET", "/v1/events?job=" + std::to_string(id));
  for (const json& e : events["events"]) failed = failed || e["type"] == "JobFailed";
  EXPECT_TRUE(failed) << events.dump();
  double gpu_seconds = 0;
  const json elements = Call("GET", "/v1/jobs?array=" + std::to_string(id));
  for (const json& element : elements["jobs"]) gpu_seconds += element["gpuSeconds"].get<double>();
  EXPECT_GT(gpu_seconds, 0);
  EXPECT_DOUBLE_EQ(Call("GET", "/v1/jobs/" + std::to_string(id))["gpuSeconds"].get<double>(), gpu_seconds) << "an array's GPU time is its elements'";
  const auto accounted = [&] {
    const json rows = Call("GET", "/v1/accounting?by=user")["rows"];
    EXPECT_EQ(rows.size(), 1u) << rows.dump();
    return rows.empty() ? json() : rows[0];
  };
  const json before = accounted();
  EXPECT_EQ(before["jobs"], 1) << "an array is one job";
  EXPECT_NEAR(before["gpuHours"].get<double>(), gpu_seconds / 3600, 1e-9);
  // Two more ended jobs: past the one kept, the array goes, its elements with it.
  for (const char* name : {"x", "y"}) {
    const int other = Call("POST", "/v1/jobs", std::string("apiVersion: tessera/v1\nkind: Job\nmetadata: {name: ") + name + "}\nspec: {tasks: [{name: m, command: [a]}]}\n", 201, "application/yaml")["jobs"][0]["id"];
    Call("DELETE", "/v1/jobs/" + std::to_string(other));
  }
  for (int i = 0; i < 200 && client_->Send("GET", "/v1/jobs/" + std::to_string(id), "", "")->status != 404; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  Call("GET", "/v1/jobs/" + std::to_string(id), {}, 404);
  Call("GET", "/v1/jobs/" + std::to_string(id + 2), {}, 404);
  const json after = accounted();
  EXPECT_EQ(after["jobs"], 1);
  EXPECT_NEAR(after["gpuHours"].get<double>(), gpu_seconds / 3600, 1e-9);
}

}  // namespace
}  // namespace tessera::server
