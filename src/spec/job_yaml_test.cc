#include "spec/job_yaml.h"

#include <csignal>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "spec/cluster_yaml.h"
#include "spec/queue_yaml.h"

namespace tessera::spec {
namespace {

using ::testing::HasSubstr;
using model::TopologyLevel;

// Two leaves of four 8 x H100 nodes, plus a leaf of two 4 x A100 (40Gi) nodes.
model::Cluster TestCluster() {
  std::vector<model::NodeSpec> nodes = model::GenerateNodes(*ParseClusterShape("8 nodes x 8 GPUs, 4 nodes per leaf"));
  for (const char* name : {"a100-0", "a100-1"}) {
    model::NodeSpec node;
    node.name = name;
    node.gpu_model = "A100";
    node.gpus = 4;
    node.gpu_memory = 40 * kGiB;
    node.cpu_milli = 64'000;
    node.memory = 512 * kGiB;
    node.leaf = "leaf-a100";
    node.spine = "spine-00";
    nodes.push_back(node);
  }
  return *model::Cluster::Build(nodes);
}

model::QueueTree TestQueues() {
  return *model::QueueTree::Build({
      {"default", 8'000, 16'000, 1.0},
      {"production", 16'000, model::kUnlimited, 1.0},
      {"research", 40'000, model::kUnlimited, 2.0},
      {"research/nlp", 32'000, model::kUnlimited, 1.0},
  });
}

class JobYamlTest : public ::testing::Test {
 protected:
  Result<std::vector<model::Job>> Parse(const std::string& yaml) {
    return ParseJobYaml(yaml, "j.yaml", cluster_, queues_);
  }
  model::Cluster cluster_ = TestCluster();
  model::QueueTree queues_ = TestQueues();
};

TEST_F(JobYamlTest, ParsesEveryField) {
  const Result<std::vector<model::Job>> jobs = Parse(R"(apiVersion: tessera/v1
kind: Job
metadata: {name: llama-finetune, queue: research/nlp}
spec:
  priority: 100
  preemptible: true
  walltime: 6h
  tasks:
    - name: worker
      replicas: 4
      minReplicas: 3
      resources: {gpus: 8, cpus: 64, memory: 512Gi, gpuModel: H100, gpuMemory: 80Gi}
      command: [torchrun, --nproc-per-node=8, train.py]
    - name: param-server
      onePerNode: true
      resources: {cpus: 16, memory: 64Gi}
  topology: {level: leaf, mode: required}
  checkpoint: {interval: 30m}
  restart: {maxRestarts: 5}
  dependsOn: [{job: data-prep, when: succeeded}, {job: tokenizer, when: ended}, {job: eval, when: failed}, {jobId: 12}]
  singleton: true
)");
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  ASSERT_EQ(jobs->size(), 1u);
  const model::Job& job = (*jobs)[0];
  EXPECT_EQ(job.name, "llama-finetune");
  EXPECT_EQ(job.queue, queues_.Find("research/nlp"));
  EXPECT_FALSE(job.id.valid());
  EXPECT_EQ(job.priority, 100);
  EXPECT_TRUE(job.preemptible);
  EXPECT_EQ(job.walltime, 6 * 3600);
  ASSERT_EQ(job.groups.size(), 2u);
  const model::TaskGroup& worker = job.groups[0];
  EXPECT_EQ(worker.name, "worker");
  EXPECT_EQ(worker.replicas, 4);
  EXPECT_EQ(worker.min_replicas, 3);
  EXPECT_EQ(worker.request.gpu_milli, 8000);
  EXPECT_EQ(worker.request.cpu_milli, 64'000);
  EXPECT_EQ(worker.request.memory, 512 * kGiB);
  EXPECT_EQ(worker.request.gpu_memory, 80 * kGiB);
  EXPECT_EQ(worker.request.gpu_model, "H100");
  EXPECT_EQ(worker.command, (std::vector<std::string>{"torchrun", "--nproc-per-node=8", "train.py"}));
  EXPECT_EQ(job.groups[1].request.gpu_milli, 0);
  EXPECT_EQ(job.groups[1].replicas, 1);
  EXPECT_TRUE(job.groups[1].one_per_node);
  EXPECT_EQ(job.topology.level, TopologyLevel::kLeaf);
  EXPECT_TRUE(job.topology.required);
  EXPECT_EQ(job.checkpoint_interval, 1800);
  EXPECT_EQ(job.max_restarts, 5);
  ASSERT_EQ(job.depends_on.size(), 4u);
  EXPECT_EQ(job.depends_on[3].job_id, model::JobId(12));
  EXPECT_TRUE(job.depends_on[3].job_name.empty());
  EXPECT_EQ(job.depends_on[2].when, model::Dependency::When::kFailed);
  EXPECT_TRUE(job.singleton);
  EXPECT_FALSE(worker.one_per_node);
  EXPECT_EQ(job.depends_on[0].job_name, "data-prep");
  EXPECT_EQ(job.depends_on[0].when, model::Dependency::When::kSucceeded);
  EXPECT_EQ(job.depends_on[1].when, model::Dependency::When::kEnded);
  EXPECT_EQ(job.state, model::JobState::kPending);
}

TEST_F(JobYamlTest, AppliesDefaults) {
  const Result<std::vector<model::Job>> jobs = Parse(R"(apiVersion: tessera/v1
kind: Job
metadata: {name: small}
spec:
  tasks:
    - name: main
      replicas: 3
      resources: {gpus: 1}
  topology: {level: node}
)");
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  const model::Job& job = (*jobs)[0];
  EXPECT_EQ(job.queue, queues_.Find("default"));
  EXPECT_EQ(job.priority, 0);
  EXPECT_TRUE(job.preemptible);
  EXPECT_EQ(job.walltime, 0);
  EXPECT_EQ(job.checkpoint_interval, 0);
  EXPECT_EQ(job.max_restarts, 0);
  EXPECT_EQ(job.groups[0].min_replicas, 3);  // minReplicas defaults to replicas: a full gang
  EXPECT_TRUE(job.groups[0].command.empty());
  EXPECT_EQ(job.topology.level, TopologyLevel::kNode);
  EXPECT_FALSE(job.topology.required);  // mode defaults to preferred
}

TEST_F(JobYamlTest, ReadsGpusAsNumbersOrStringsAndSeveralDocuments) {
  const Result<std::vector<model::Job>> jobs = Parse(R"(---
apiVersion: tessera/v1
kind: Job
metadata: {name: whole}
spec: {tasks: [{name: m, resources: {gpus: 8}}]}
---
apiVersion: tessera/v1
kind: Job
metadata: {name: quarter}
spec: {tasks: [{name: m, resources: {gpus: 0.25, gpuMemory: 20Gi}}]}
---
# an empty document is skipped
---
apiVersion: tessera/v1
kind: Job
metadata: {name: milli}
spec: {tasks: [{name: m, resources: {gpus: "250m", gpuMemory: 10Gi, gpuModel: A100}}]}
---
apiVersion: tessera/v1
kind: Job
metadata: {name: cpu-only}
spec: {tasks: [{name: m, resources: {cpus: 500m, memory: 1Gi}}]}
)");
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  ASSERT_EQ(jobs->size(), 4u);
  EXPECT_EQ((*jobs)[0].groups[0].request.gpu_milli, 8000);
  EXPECT_EQ((*jobs)[1].groups[0].request.gpu_milli, 250);
  EXPECT_EQ((*jobs)[1].groups[0].request.gpu_memory, 20 * kGiB);
  EXPECT_TRUE((*jobs)[1].groups[0].request.fractional());
  EXPECT_EQ((*jobs)[1].groups[0].request.sharing, model::GpuSharing::kVgpu) << "a fraction is a vGPU unless it asks";
  EXPECT_EQ((*jobs)[2].name, "milli");
  EXPECT_EQ((*jobs)[2].groups[0].request.gpu_milli, 250);
  EXPECT_EQ((*jobs)[3].groups[0].request.cpu_milli, 500);
  EXPECT_EQ((*jobs)[3].groups[0].request.gpu_milli, 0);
}

TEST_F(JobYamlTest, ReadsTaskEnvironmentAndKeepsEachDocument) {
  std::vector<std::string> documents;
  const auto jobs = ParseJobYaml(R"(apiVersion: tessera/v1
kind: Job
metadata: {name: a}
spec:
  tasks: [{name: main, command: [env], env: {NCCL_DEBUG: INFO, LR: "0.1"}}]
---
apiVersion: tessera/v1
kind: Job
metadata: {name: b}
spec: {tasks: [{name: main}]}
)", "j.yaml", cluster_, queues_, {.documents = &documents});
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  EXPECT_EQ(jobs->at(0).groups[0].env.at("NCCL_DEBUG"), "INFO");
  EXPECT_EQ(jobs->at(0).groups[0].env.at("LR"), "0.1");
  ASSERT_EQ(documents.size(), 2u);
  EXPECT_THAT(documents[0], HasSubstr("name: a"));
  EXPECT_THAT(documents[1], HasSubstr("name: b"));
  EXPECT_THAT(documents[1], ::testing::Not(HasSubstr("name: a")));
  // Each stored document parses back on its own to the same job.
  const auto again = Parse(documents[0]);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->at(0).groups[0].env, jobs->at(0).groups[0].env);
}

TEST_F(JobYamlTest, ReadsTheContainerOfATask) {
  const auto jobs = Parse(R"(apiVersion: tessera/v1
kind: Job
metadata: {name: train}
spec:
  tasks:
    - name: trainer
      image: localhost:5000/ml/llama:2.1
      imagePullPolicy: Always
      mounts:
        - {hostPath: /datasets/c4, mountPath: /data}
        - {hostPath: /scratch, mountPath: /scratch, readOnly: false}
      shmSize: 16Gi
      user: "1000:100"
    - {name: eval, image: busybox, user: "1000"}
    - {name: host, command: [hostname]}
)");
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  const model::TaskContainer& c = jobs->at(0).groups[0].container;
  EXPECT_EQ(c.image, "localhost:5000/ml/llama:2.1");
  EXPECT_EQ(c.pull_policy, model::PullPolicy::kAlways);
  ASSERT_EQ(c.mounts.size(), 2u);
  EXPECT_EQ(c.mounts[0].host_path, "/datasets/c4");
  EXPECT_TRUE(c.mounts[0].read_only);  // unless asked
  EXPECT_FALSE(c.mounts[1].read_only);
  EXPECT_EQ(c.shm_bytes, 16 * kGiB);
  EXPECT_EQ(c.uid, 1000u);
  EXPECT_EQ(c.gid, 100u);
  const model::TaskContainer& eval = jobs->at(0).groups[1].container;
  EXPECT_EQ(eval.image, "docker.io/library/busybox:latest");  // canonical
  EXPECT_EQ(eval.pull_policy, model::PullPolicy::kIfNotPresent);
  EXPECT_EQ(eval.gid, 1000u);  // a uid alone is its own group
  EXPECT_FALSE(jobs->at(0).groups[2].container.enabled());
  EXPECT_FALSE(jobs->at(0).isolated_network);  // the host's network unless asked
  EXPECT_EQ(jobs->at(0).groups[0].request.image, model::ImageKey("localhost:5000/ml/llama:2.1"));
  EXPECT_EQ(jobs->at(0).groups[2].request.image, 0u);  // a host process
}

TEST_F(JobYamlTest, AnIsolatedNetworkHoldsContainersOnly) {
  const std::string head = "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: n}\nspec:\n  network: ";
  const auto isolated = Parse(head + "isolated\n  tasks: [{name: a, image: busybox}, {name: b, image: busybox}]\n");
  ASSERT_TRUE(isolated.ok()) << isolated.status().message();
  EXPECT_TRUE(isolated->at(0).isolated_network);
  const auto host_task = Parse(head + "isolated\n  tasks: [{name: a, image: busybox}, {name: prep, command: [true]}]\n");
  ASSERT_FALSE(host_task.ok());
  EXPECT_THAT(host_task.status().message(), HasSubstr("spec.network: an isolated network holds containers only: task prep has no image"));
  const auto unknown = Parse(head + "bridged\n  tasks: [{name: a, image: busybox}]\n");
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.status().message(), HasSubstr("'bridged' is not one of: host, isolated"));
}

TEST_F(JobYamlTest, ReadsGpuSharingBurstsAndTheCheckpointContract) {
  const auto jobs = Parse(R"(apiVersion: tessera/v1
kind: Job
metadata: {name: notebook}
spec:
  checkpoint: {signal: SIGUSR1, gracePeriod: 2m}
  tasks:
    - name: main
      resources: {gpus: 0.5, gpuMemory: 20Gi, gpuSharing: vgpu, gpuMemoryBurst: 8Gi}
    - name: side
      resources: {gpus: 0.25, gpuMemory: 4Gi, gpuSharing: timeslice}
)");
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  const model::Job& job = jobs->at(0);
  EXPECT_EQ(job.groups[0].request.sharing, model::GpuSharing::kVgpu);
  EXPECT_EQ(job.groups[0].request.gpu_memory_burst, 8 * kGiB);
  EXPECT_EQ(job.groups[1].request.sharing, model::GpuSharing::kTimeSlice);
  EXPECT_EQ(job.checkpoint_signal, SIGUSR1);
  EXPECT_EQ(job.checkpoint_grace, 120);
  EXPECT_EQ(job.checkpoint_interval, 0) << "a contract without an interval";
}

TEST_F(JobYamlTest, ReadsHangDetection) {
  const auto jobs = Parse(R"(apiVersion: tessera/v1
kind: Job
metadata: {name: train}
spec:
  hangDetection: {progressTimeout: 10m, gpuIdleTimeout: 30m, action: restart}
  tasks: [{name: w}]
)");
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  EXPECT_EQ(jobs->at(0).progress_timeout, 600);
  EXPECT_EQ(jobs->at(0).gpu_idle_timeout, 1800);
  EXPECT_TRUE(jobs->at(0).restart_when_hung);
  const auto backoff = Parse("apiVersion: tessera/v1\nkind: Job\nmetadata: {name: b}\nspec: {restart: {maxRestarts: 3, backoff: 30s, maxBackoff: 5m}, tasks: [{name: w}]}\n");
  ASSERT_TRUE(backoff.ok()) << backoff.status().message();
  EXPECT_EQ(backoff->at(0).restart_backoff, 30);
  EXPECT_EQ(backoff->at(0).max_restart_backoff, 300);
  const auto reported = Parse("apiVersion: tessera/v1\nkind: Job\nmetadata: {name: a}\nspec: {hangDetection: {gpuIdleTimeout: 5m}, tasks: [{name: w}]}\n");
  ASSERT_TRUE(reported.ok()) << reported.status().message();
  EXPECT_FALSE(reported->at(0).restart_when_hung) << "report is the default action";
}

TEST_F(JobYamlTest, ReadsAnArrayAndASweep) {
  const auto array = Parse("apiVersion: tessera/v1\nkind: Job\nmetadata: {name: a}\nspec: {array: \"0-99%10\", tasks: [{name: w}]}\n");
  ASSERT_TRUE(array.ok()) << array.status().message();
  const model::Job& job = array->at(0);
  ASSERT_TRUE(job.is_array_parent);
  EXPECT_EQ(job.array->size(), 100);
  EXPECT_EQ(job.array->max_running, 10);
  EXPECT_TRUE(job.array->sweep.empty());

  const auto sweep = Parse(R"(apiVersion: tessera/v1
kind: Job
metadata: {name: s}
spec:
  sweep:
    lr: [0.1, 0.01, 0.001]
    batch: {from: 32, to: 128, step: 32}
    model: [small, large]
  array: "%4"
  tasks: [{name: w}]
)");
  ASSERT_TRUE(sweep.ok()) << sweep.status().message();
  const model::JobArray& s = *sweep->at(0).array;
  EXPECT_EQ(s.size(), 3 * 4 * 2);
  EXPECT_EQ(s.max_running, 4);
  ASSERT_EQ(s.sweep.size(), 3u);
  EXPECT_EQ(s.sweep[1].values, (std::vector<std::string>{"32", "64", "96", "128"}));
  EXPECT_EQ(s.SweepValues(23), (std::vector<std::pair<std::string, std::string>>{{"lr", "0.001"}, {"batch", "128"}, {"model", "large"}}));
}

TEST_F(JobYamlTest, BadArraysAndSweepsNameTheirField) {
  const auto error = [&](const std::string& spec) {
    const auto jobs = Parse("apiVersion: tessera/v1\nkind: Job\nmetadata: {name: a}\nspec:\n" + spec + "  tasks: [{name: w}]\n");
    return jobs.ok() ? std::string("ok") : jobs.status().message();
  };
  EXPECT_EQ(error("  array: 9-3\n"), "j.yaml:5:10: spec.array: range 9-3 runs backwards: write 3-9");
  EXPECT_EQ(error("  array: \"%4\"\n"),
            "j.yaml:5:10: spec.array: '%4' names no indices: write e.g. 0-99, 1,3,5-9 or 0-15:4, and %N to run at most N at a time");
  EXPECT_EQ(error("  array: 0-200000\n"), "j.yaml:5:10: spec.array: '0-200000' holds 200001 indices; an array holds at most 100000");
  EXPECT_EQ(error("  sweep: {lr: [0.1]}\n  array: 0-3\n"),
            "j.yaml:6:10: spec.array: the indices come from the sweep: write only a limit, such as %4; got '0-3'");
  EXPECT_EQ(error("  sweep: {}\n"), "j.yaml:5:10: spec.sweep: name at least one parameter, e.g. {lr: [0.1, 0.01]}");
  EXPECT_EQ(error("  sweep: {lr: []}\n"), "j.yaml:5:15: spec.sweep.lr: a parameter needs at least one value");
  EXPECT_EQ(error("  sweep: {lr: 0.1}\n"), "j.yaml:5:15: spec.sweep.lr: expected a list of values or a range {from, to, step}, got '0.1'");
  EXPECT_EQ(error("  sweep: {1x: [1]}\n"),
            "j.yaml:5:15: spec.sweep.1x: '1x' is not a parameter name: letters, digits and '_', not starting with a digit");
  EXPECT_EQ(error("  sweep: {lr: [1], LR: [2]}\n"), "j.yaml:5:24: spec.sweep.LR: 'lr' and 'LR' would both be TESSERA_SWEEP_LR");
  EXPECT_EQ(error("  sweep: {b: {from: 9, to: 3}}\n"), "j.yaml:5:28: spec.sweep.b.to: to (3) is below from (9)");
  EXPECT_EQ(error("  sweep: {b: {from: 1, to: 3, step: 0}}\n"), "j.yaml:5:37: spec.sweep.b.step: must be at least 1, got 0");
  EXPECT_EQ(error("  sweep: {b: {from: 0, to: 999999}}\n"), "j.yaml:5:14: spec.sweep.b: holds 1000000 values; a parameter holds at most 100000");
  EXPECT_EQ(error("  sweep: {a: {from: 1, to: 1000}, b: {from: 1, to: 1000}}\n"),
            "j.yaml:5:10: spec.sweep: 1000 x 1000 = 1000000 combinations; a sweep holds at most 100000");
}

TEST_F(JobYamlTest, BadEnvironmentNameIsRejected) {
  const auto jobs = Parse("apiVersion: tessera/v1\nkind: Job\nmetadata: {name: a}\nspec:\n  tasks: [{name: m, env: {\"A=B\": x}}]\n");
  ASSERT_FALSE(jobs.ok());
  EXPECT_THAT(jobs.status().message(), HasSubstr("'A=B' is not a valid environment variable name"));
}

TEST_F(JobYamlTest, RecoveryModeKeepsJobsTheClusterCannotRunNow) {
  const std::string text = "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: big}\nspec:\n  tasks: [{name: m, resources: {gpus: 16}}]\n";
  EXPECT_FALSE(Parse(text).ok());
  const auto kept = ParseJobYaml(text, "store", cluster_, queues_, {.check_feasible = false});
  ASSERT_TRUE(kept.ok()) << kept.status().message();
  EXPECT_EQ(kept->at(0).groups[0].request.gpu_milli, 16000);
}

TEST_F(JobYamlTest, AnEmptyFileIsAnError) {
  const Result<std::vector<model::Job>> jobs = Parse("# nothing\n");
  ASSERT_FALSE(jobs.ok());
  EXPECT_THAT(jobs.status().message(), HasSubstr("j.yaml: no Job documents found"));
}

// Every bad input names the source, line and column, the field path and the reason.
struct BadJob {
  const char* name;
  std::string yaml;
  std::vector<const char*> expect;
  StatusCode code = StatusCode::kInvalidArgument;
};

class JobYamlErrorTest : public JobYamlTest, public ::testing::WithParamInterface<BadJob> {};

TEST_P(JobYamlErrorTest, NamesLineFieldAndReason) {
  const Result<std::vector<model::Job>> jobs = Parse(GetParam().yaml);
  ASSERT_FALSE(jobs.ok());
  EXPECT_EQ(jobs.status().code(), GetParam().code) << jobs.status().message();
  for (const char* part : GetParam().expect) EXPECT_THAT(jobs.status().message(), HasSubstr(part));
}

// Lines 1-6; the task's fields follow on line 7, indented by six spaces.
const std::string kHead =
    "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: train, queue: research/nlp}\nspec:\n  tasks:\n"
    "    - name: worker\n";
// A whole, valid job on lines 1-4.
const std::string kJobA = "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: a}\nspec: {tasks: [{name: w}]}\n";

INSTANTIATE_TEST_SUITE_P(
    Cases, JobYamlErrorTest,
    ::testing::Values(
        // Syntax.
        BadJob{"MalformedYaml", kHead + "      resources: {gpus: 8\n", {"j.yaml:8:1: malformed YAML: did not find expected ',' or '}' (while parsing a flow mapping)"}},
        BadJob{"DuplicateKey", kHead + "      replicas: 1\n      replicas: 2\n",
               {"j.yaml:8:7: spec.tasks[0].replicas: field 'replicas' is written twice (first at j.yaml:7:7)"}},
        // Unknown fields at every depth.
        BadJob{"UnknownTopField", kJobA + "status: {}\n",
               {"j.yaml:5:1: status: unknown field 'status'; allowed: apiVersion, kind, metadata, spec"}},
        // Containers.
        BadJob{"BadImageReference", kHead + "      image: \"Busybox:latest\"\n", {"j.yaml:7:14: spec.tasks[0].image: "}},
        BadJob{"UnknownPullPolicy", kHead + "      image: busybox\n      imagePullPolicy: Sometimes\n",
               {"j.yaml:8:24: spec.tasks[0].imagePullPolicy: 'Sometimes' is not one of: IfNotPresent, Always, Never"}},
        BadJob{"PullPolicyWithoutImage", kHead + "      imagePullPolicy: Always\n",
               {"j.yaml:7:24: spec.tasks[0].imagePullPolicy: imagePullPolicy applies to a container, but the task names no image"}},
        BadJob{"MountWithoutImage", kHead + "      mounts: [{hostPath: /d, mountPath: /d}]\n",
               {"spec.tasks[0].mounts: mounts applies to a container"}},
        BadJob{"RelativeMount", kHead + "      image: busybox\n      mounts: [{hostPath: data, mountPath: /data}]\n",
               {"spec.tasks[0].mounts[0].hostPath: must be an absolute path, got 'data'"}},
        BadJob{"MountTwice", kHead + "      image: busybox\n      mounts: [{hostPath: /a, mountPath: /d}, {hostPath: /b, mountPath: /d}]\n",
               {"spec.tasks[0].mounts[1].mountPath: '/d' is mounted twice in this task"}},
        BadJob{"MountOverRoot", kHead + "      image: busybox\n      mounts: [{hostPath: /a, mountPath: /}]\n",
               {"spec.tasks[0].mounts[0].mountPath: cannot mount over the container's root"}},
        BadJob{"UnknownMountField", kHead + "      image: busybox\n      mounts: [{hostPath: /a, mountPath: /b, rw: true}]\n",
               {"unknown field 'rw'; allowed: hostPath, mountPath, readOnly"}},
        BadJob{"UserByName", kHead + "      image: busybox\n      user: alice\n",
               {"j.yaml:8:13: spec.tasks[0].user: 'alice' is not UID or UID:GID (numbers, as in \"1000:1000\")"}},
        BadJob{"ZeroShm", kHead + "      image: busybox\n      shmSize: 0\n", {"spec.tasks[0].shmSize: must be positive"}},
        BadJob{"UnknownMetadataField",
               "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: a, team: x}\nspec: {tasks: [{name: w}]}\n",
               {"j.yaml:3:21: metadata.team: unknown field 'team'; allowed: name, queue"}},
        BadJob{"UnknownSpecField", kHead + "  priorty: 5\n",
               {"j.yaml:7:3: spec.priorty: unknown field 'priorty'; allowed: priority, preemptible, walltime, tasks, "
                "topology, checkpoint, restart, dependsOn, hangDetection, singleton"}},
        BadJob{"HangDetectionWithoutATimeout", kHead + "  hangDetection: {action: restart}\n",
               {"spec.hangDetection: name a progressTimeout, a gpuIdleTimeout, or both"}},
        BadJob{"HangDetectionBadAction", kHead + "  hangDetection: {progressTimeout: 10m, action: reboot}\n",
               {"spec.hangDetection.action: 'reboot' is not one of: report, restart"}},
        BadJob{"UnknownTaskField", kHead + "      replica: 2\n",
               {"j.yaml:7:7: spec.tasks[0].replica: unknown field 'replica'; allowed: name, replicas, minReplicas, "
                "resources, command"}},
        BadJob{"UnknownResourceField", kHead + "      resources: {gpu: 8}\n",
               {"j.yaml:7:19: spec.tasks[0].resources.gpu: unknown field 'gpu'; allowed: gpus, gpuMemory, cpus, "
                "memory, gpuModel"}},
        BadJob{"UnknownTopologyField", kHead + "  topology: {level: leaf, strict: true}\n",
               {"j.yaml:7:27: spec.topology.strict: unknown field 'strict'; allowed: level, mode"}},
        BadJob{"UnknownDependencyField", kHead + "  dependsOn: [{name: prep}]\n",
               {"j.yaml:7:16: spec.dependsOn[0].name: unknown field 'name'; allowed: job, jobId, when"}},
        // Wrong types.
        BadJob{"IntegerGotWord", kHead + "      replicas: abc\n",
               {"j.yaml:7:17: spec.tasks[0].replicas: expected an integer, got 'abc'"}},
        BadJob{"IntegerGotString", kHead + "      replicas: \"2\"\n",
               {"j.yaml:7:17: spec.tasks[0].replicas: expected an integer, got the string '2'"}},
        BadJob{"IntegerGotList", kHead + "      replicas: [2]\n",
               {"j.yaml:7:17: spec.tasks[0].replicas: expected an integer, got a list"}},
        BadJob{"BoolGotWord", kHead + "  preemptible: maybe\n",
               {"j.yaml:7:16: spec.preemptible: expected true or false, got 'maybe'"}},
        BadJob{"CommandNotList", kHead + "      command: python train.py\n",
               {"j.yaml:7:16: spec.tasks[0].command: expected a list of strings, got 'python train.py'"}},
        BadJob{"CommandItemNotString", kHead + "      command: [python, {x: 1}]\n",
               {"j.yaml:7:25: spec.tasks[0].command[1]: expected a string, got a mapping"}},
        BadJob{"TasksNotList", "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: a}\nspec:\n  tasks: {name: w}\n",
               {"j.yaml:5:10: spec.tasks: expected a list, got a mapping"}},
        BadJob{"SpecNotMapping", "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: a}\nspec: [1]\n",
               {"j.yaml:4:7: spec: expected a mapping, got a list"}},
        BadJob{"NullValue", kHead + "  walltime:\n",
               {"j.yaml:7:3: spec.walltime: expected a duration (e.g. 6h, 90m or 1h30m), got nothing"}},
        BadJob{"BadWalltime", kHead + "  walltime: 6 hours\n", {"j.yaml:7:13: spec.walltime: '6 hours' is not a duration"}},
        BadJob{"ZeroWalltime", kHead + "  walltime: 0s\n", {"j.yaml:7:13: spec.walltime: must be longer than zero"}},
        BadJob{"BadMemory", kHead + "      resources: {memory: 512GB}\n",
               {"j.yaml:7:27: spec.tasks[0].resources.memory: '512GB' is not a memory size"}},
        BadJob{"NegativeGpus", kHead + "      resources: {gpus: -1}\n",
               {"j.yaml:7:25: spec.tasks[0].resources.gpus: '-1' is not a quantity"}},
        BadJob{"PriorityOutOfRange", kHead + "  priority: 99999999999\n",
               {"j.yaml:7:13: spec.priority: must be between -2147483648 and 2147483647, got 99999999999"}},
        // Names.
        BadJob{"BadJobName", "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: Llama_Train}\nspec: {tasks: [{name: w}]}\n",
               {"j.yaml:3:18: metadata.name: 'Llama_Train' is not a valid name: use lowercase letters, digits, '-' "
                "and '.', at most 63 characters, starting and ending with a letter or digit"}},
        BadJob{"LongJobName",
               "apiVersion: tessera/v1\nkind: Job\nmetadata:\n  name: " + std::string(64, 'a') +
                   "\nspec: {tasks: [{name: w}]}\n",
               {"j.yaml:4:9: metadata.name:", "at most 63 characters"}},
        BadJob{"BadTaskName",
               "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: a}\nspec:\n  tasks:\n    - name: -worker\n",
               {"j.yaml:6:13: spec.tasks[0].name: '-worker' is not a valid name"}},
        BadJob{"MissingName", "apiVersion: tessera/v1\nkind: Job\nmetadata: {queue: default}\nspec: {tasks: [{name: w}]}\n",
               {"j.yaml:3:11: metadata.name: required field is missing"}},
        BadJob{"MissingMetadata", "apiVersion: tessera/v1\nkind: Job\nspec: {tasks: [{name: w}]}\n",
               {"j.yaml:1:1: metadata: required field is missing"}},
        BadJob{"MissingTaskName", "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: a}\nspec:\n  tasks:\n    - replicas: 2\n",
               {"j.yaml:6:7: spec.tasks[0].name: required field is missing"}},
        // Queues.
        BadJob{"UnknownQueue",
               "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: a, queue: research/cv}\nspec: {tasks: [{name: w}]}\n",
               {"j.yaml:3:28: metadata.queue: unknown queue 'research/cv'; known queues: default, production, "
                "research, research/nlp"},
               StatusCode::kNotFound},
        BadJob{"RootIsNoQueue",
               "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: a, queue: \"\"}\nspec: {tasks: [{name: w}]}\n",
               {"j.yaml:3:28: metadata.queue: expected a string, got an empty string"}},
        // Tasks.
        BadJob{"TasksEmpty", "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: a}\nspec:\n  tasks: []\n",
               {"j.yaml:5:10: spec.tasks: a job needs at least one task"}},
        BadJob{"TasksMissing", "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: a}\nspec: {priority: 1}\n",
               {"j.yaml:4:7: spec.tasks: required field is missing"}},
        BadJob{"ZeroReplicas", kHead + "      replicas: 0\n",
               {"j.yaml:7:17: spec.tasks[0].replicas: must be between 1 and 2147483647, got 0"}},
        BadJob{"MinReplicasAboveReplicas", kHead + "      replicas: 2\n      minReplicas: 3\n",
               {"j.yaml:8:20: spec.tasks[0].minReplicas: must not exceed replicas (2), got 3"}},
        BadJob{"DuplicateTaskNames", kHead + "    - name: worker\n",
               {"j.yaml:7:13: spec.tasks[1].name: task name 'worker' is used twice in this job (first at j.yaml:6:13)"}},
        // GPU rules.
        BadJob{"FractionAboveOne", kHead + "      resources: {gpus: 1.5, gpuMemory: 10Gi}\n",
               {"j.yaml:7:25: spec.tasks[0].resources.gpus: 1.5 GPUs: above one GPU, ask for whole GPUs"}},
        BadJob{"GpuMemoryWithoutGpus", kHead + "      resources: {cpus: 1, gpuMemory: 10Gi}\n",
               {"j.yaml:7:39: spec.tasks[0].resources.gpuMemory: gpuMemory is memory on a GPU, but gpus is 0"}},
        // Topology, checkpoint, restart, dependencies.
        BadJob{"BadTopologyLevel", kHead + "  topology: {level: rack}\n",
               {"j.yaml:7:21: spec.topology.level: 'rack' is not one of: nvlink-domain, node, leaf, spine, cluster"}},
        BadJob{"BadTopologyMode", kHead + "  topology: {level: leaf, mode: strict}\n",
               {"j.yaml:7:33: spec.topology.mode: 'strict' is not one of: required, preferred"}},
        BadJob{"TopologyWithoutLevel", kHead + "  topology: {mode: required}\n",
               {"j.yaml:7:13: spec.topology.level: required field is missing"}},
        BadJob{"EmptyCheckpoint", kHead + "  checkpoint: {}\n",
               {"j.yaml:7:15: spec.checkpoint: name an interval, a signal, or both"}},
        BadJob{"UnknownCheckpointSignal", kHead + "  checkpoint: {signal: SIGKILL}\n",
               {"j.yaml:7:24: spec.checkpoint.signal: 'SIGKILL' is not one of: SIGUSR1, SIGUSR2, SIGTERM, SIGINT, SIGHUP"}},
        BadJob{"NegativeRestarts", kHead + "  restart: {maxRestarts: -1}\n",
               {"j.yaml:7:26: spec.restart.maxRestarts: must be between 0 and 2147483647, got -1"}},
        BadJob{"DependsOnItself", kHead + "  dependsOn: [{job: train}]\n",
               {"j.yaml:7:21: spec.dependsOn[0].job: a job cannot depend on itself"}},
        BadJob{"BadDependencyWhen", kHead + "  dependsOn: [{job: prep, when: crashed}]\n",
               {"j.yaml:7:33: spec.dependsOn[0].when: 'crashed' is not one of: succeeded, ended, failed"}},
        BadJob{"DependencyByNameAndId", kHead + "  dependsOn: [{job: prep, jobId: 3}]\n",
               {"spec.dependsOn[0]: name the job by job (its name) or by jobId, one of them"}},
        BadJob{"SingletonNotABool", kHead + "  singleton: yes\n", {"spec.singleton: expected true or false, got 'yes'"}},
        BadJob{"DependencyCycle",
               "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: a}\n"
               "spec: {tasks: [{name: w}], dependsOn: [{job: b}]}\n---\n"
               "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: b}\n"
               "spec: {tasks: [{name: w}], dependsOn: [{job: a}]}\n",
               {"j.yaml:4:39: spec.dependsOn: jobs depend on each other in a cycle: 'a' -> 'b' -> 'a'"}},
        // Documents.
        BadJob{"WrongApiVersion",
               "apiVersion: tessera/v2\nkind: Job\nmetadata: {name: a}\nspec: {tasks: [{name: w}]}\n",
               {"j.yaml:1:13: apiVersion: expected 'tessera/v1', got 'tessera/v2'"}},
        BadJob{"WrongKind", "apiVersion: tessera/v1\nkind: Jobs\nmetadata: {name: a}\nspec: {tasks: [{name: w}]}\n",
               {"j.yaml:2:7: kind: expected a Job document, got kind 'Jobs'"}},
        BadJob{"OtherKindInMultiDocument", kJobA + "---\napiVersion: tessera/v1\nkind: Cluster\nspec: {}\n",
               {"j.yaml:7:7: kind: expected a Job document, got kind 'Cluster'"}},
        BadJob{"DuplicateJobNames", kJobA + "---\n" + kJobA,
               {"j.yaml:8:18: metadata.name: job 'a' is defined twice in this file (first at j.yaml:3:18)"}},
        // Feasibility against the cluster and the queues.
        BadJob{"NineGpusOnEightGpuNodes", kHead + "      resources: {gpus: 9}\n",
               {"j.yaml:7:25: job train: spec.tasks[0].resources.gpus: 9 GPUs per task, but the largest node has 8"},
               StatusCode::kInfeasible},
        BadJob{"SharingAWholeGpu", kHead + "      resources: {gpus: 1, gpuSharing: timeslice}\n",
               {"j.yaml:7:40: spec.tasks[0].resources.gpuSharing: gpuSharing applies to a fraction of a GPU"}},
        BadJob{"UnknownSharingMode", kHead + "      resources: {gpus: 0.5, gpuMemory: 1Gi, gpuSharing: mig}\n",
               {"j.yaml:7:58: spec.tasks[0].resources.gpuSharing: unknown GPU sharing mode 'mig' (vgpu, mps or "
                "timeslice)"}},
        BadJob{"BurstWithoutVgpu",
               kHead + "      resources: {gpus: 0.5, gpuMemory: 1Gi, gpuSharing: timeslice, gpuMemoryBurst: 1Gi}\n",
               {"spec.tasks[0].resources.gpuMemoryBurst: a memory burst is for a fraction of a GPU shared as vgpu"}},
        BadJob{"BurstWithoutACheckpointSignal", kHead + "      resources: {gpus: 0.5, gpuMemory: 1Gi, gpuMemoryBurst: 1Gi}\n",
               {"j.yaml:7:62: spec.tasks[0].resources.gpuMemoryBurst: a burst must be given back on request: declare "
                "spec.checkpoint.signal"}},
        BadJob{"NoNodeOffersMps", kHead + "      resources: {gpus: 0.5, gpuMemory: 1Gi, gpuSharing: mps}\n",
               {"job train: spec.tasks[0].resources.gpuSharing: no node shares GPUs as mps"},
               StatusCode::kInfeasible},
        BadJob{"FractionWantsMoreMemoryThanTheGpuHas", kHead + "      resources: {gpus: 0.5, gpuMemory: 100Gi}\n",
               {"j.yaml:7:41: job train: spec.tasks[0].resources.gpuMemory: asks 100Gi per GPU, but the largest GPU "
                "has 80Gi"},
               StatusCode::kInfeasible},
        BadJob{"UnknownGpuModel", kHead + "      resources: {gpus: 1, gpuModel: V100}\n",
               {"j.yaml:7:38: job train: spec.tasks[0].resources.gpuModel: no node has GPU model 'V100' (this "
                "cluster has H100, A100)"},
               StatusCode::kInfeasible},
        BadJob{"RequiredLeafSmallerThanGang",
               kHead + "      replicas: 5\n      resources: {gpus: 8}\n  topology: {level: leaf, mode: required}\n",
               {"j.yaml:9:13: job train: spec.topology: the gang needs 40 GPUs inside one leaf, but the largest leaf "
                "has 32 GPUs"},
               StatusCode::kInfeasible},
        BadJob{"RequiredNodeSmallerThanGang",
               kHead + "      replicas: 2\n      resources: {gpus: 8}\n  topology: {level: node, mode: required}\n",
               {"j.yaml:9:13: job train: spec.topology: the gang needs 16 GPUs inside one node, but the largest node "
                "has 8 GPUs"},
               StatusCode::kInfeasible},
        BadJob{"GangLargerThanCluster", kHead + "      replicas: 11\n      resources: {gpus: 8}\n",
               {"j.yaml:7:17: job train: spec.tasks[0].replicas: the gang needs 11 such tasks at once, but the whole "
                "cluster holds only 8"},
               StatusCode::kInfeasible},
        BadJob{"OverQueueLimit",
               "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: big}\nspec:\n  tasks:\n"
               "    - {name: w, replicas: 3, resources: {gpus: 8}}\n",
               {"j.yaml:3:11: job big: metadata.queue: queue 'default' is limited to 16 GPUs, but the gang needs 24"},
               StatusCode::kInfeasible},
        BadJob{"NonPreemptibleOverGuarantee",
               "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: serve, queue: production}\nspec:\n"
               "  preemptible: false\n  tasks:\n    - {name: w, replicas: 3, resources: {gpus: 8}}\n",
               {"j.yaml:5:16: job serve: spec.preemptible: a non-preemptible job must fit in its queue's guarantee"},
               StatusCode::kInfeasible}),
    [](const ::testing::TestParamInfo<BadJob>& param) { return std::string(param.param.name); });

// --- the example files ---------------------------------------------------------

std::string ReadExample(const std::string& name) {
  const char* root = std::getenv("TESSERA_SOURCE_DIR");
  EXPECT_NE(root, nullptr) << "TESSERA_SOURCE_DIR is not set (run the test through ctest)";
  std::ifstream in(std::string(root ? root : ".") + "/examples/" + name);
  EXPECT_TRUE(in.good()) << name;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ExamplesTest, ExampleFilesParseAgainstEachOther) {
  const std::string root = std::getenv("TESSERA_SOURCE_DIR") ? std::getenv("TESSERA_SOURCE_DIR") : ".";
  const Result<model::Cluster> cluster = LoadCluster(root + "/examples/cluster.yaml");
  ASSERT_TRUE(cluster.ok()) << cluster.status().message();
  EXPECT_EQ(cluster->nodes().size(), 20u);
  EXPECT_EQ(cluster->capacity().gpu_milli, 144'000);
  EXPECT_EQ(cluster->GroupCount(TopologyLevel::kLeaf), 5);
  EXPECT_EQ(cluster->GroupCount(TopologyLevel::kSpine), 3);
  EXPECT_TRUE(cluster->FindModel("A100").valid());

  const Result<std::vector<model::QueueSpec>> queue_specs = ParseQueueYaml(ReadExample("queues.yaml"), "queues.yaml");
  ASSERT_TRUE(queue_specs.ok()) << queue_specs.status().message();
  const Result<model::QueueTree> queues = model::QueueTree::Build(*queue_specs);
  ASSERT_TRUE(queues.ok()) << queues.status().message();
  EXPECT_EQ(queues->queue(queues->Find("research")).weight, 2.0);
  EXPECT_EQ(queues->queue(queues->Find("default")).limit_milli, 32'000);

  const Result<std::vector<model::Job>> jobs = ParseJobYaml(ReadExample("jobs.yaml"), "jobs.yaml", *cluster, *queues);
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  EXPECT_GE(jobs->size(), 6u);
  EXPECT_LE(jobs->size(), 10u);
  bool leaf_gang = false, fractional = false, a100 = false, non_preemptible = false, depends = false;
  for (const model::Job& job : *jobs) {
    leaf_gang = leaf_gang || (job.topology.required && job.topology.level == TopologyLevel::kLeaf);
    fractional = fractional || job.groups[0].request.fractional();
    a100 = a100 || job.groups[0].request.gpu_model == "A100";
    non_preemptible = non_preemptible || !job.preemptible;
    depends = depends || !job.depends_on.empty();
  }
  EXPECT_TRUE(leaf_gang && fractional && a100 && non_preemptible && depends);
}

}  // namespace
// Found by tests/fuzz: yaml-cpp 0.7 loops forever on a ',' in a document
// whose top is not a mapping; libyaml refuses it first (spec/yaml_syntax.h).
TEST_F(JobYamlTest, ACommaAfterATopLevelNodeIsMalformedNotAHang) {
  for (const char* text : {",", "\"q\",", "[1],2", "{\"a\": 1},", "# a\n!p _\n! Ae a\n!p e_']\n,", "#\rj: o\n ,", "#\xc2\x85j: o\n ,"}) {
    const Result<std::vector<model::Job>> jobs = Parse(text);
    ASSERT_FALSE(jobs.ok()) << text;
    EXPECT_NE(jobs.status().message().find("j.yaml:"), std::string::npos) << jobs.status().message();
  }
  const Result<std::vector<model::Job>> scalar = Parse("just text");
  ASSERT_FALSE(scalar.ok());
  EXPECT_EQ(scalar.status().message(), "j.yaml:1:1: expected a mapping (apiVersion, kind, ...) at the top of the document, got a scalar");
}

}  // namespace tessera::spec
