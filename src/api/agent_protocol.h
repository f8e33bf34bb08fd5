// The messages between the server and its agents, as JSON on the /v1 API
// (docs/api.md, api/openapi.yaml):
//
//   POST /v1/nodes/{name}/register   NodeInventory
//   GET  /v1/nodes/{name}/assignments?after=REV&wait=SECONDS
//        -> AssignmentSet: every task the node should run now (level-triggered:
//           the agent starts what is missing and stops what is no longer listed)
//   POST /v1/nodes/{name}/status     StatusReport: task transitions; also the heartbeat
//   POST /v1/nodes/{name}/logs?job=&attempt=&task=&stream=&offset=   raw log bytes
//
// A task is named by (job, attempt, task index): a restarted job has a new
// attempt, so a report about an old run can never be mistaken for the new one.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace tessera::api {

// A MIG device of a GPU in MIG mode (model/mig.h).
struct MigDeviceInventory {
  std::string profile;  // "1g.10gb"
  std::string uuid;     // "MIG-...", what CUDA_VISIBLE_DEVICES names it by
  bool operator==(const MigDeviceInventory&) const = default;
};

struct GpuInventory {
  std::int32_t index = 0;
  std::string uuid;
  std::string model;
  std::int64_t memory = 0;
  std::int32_t numa = 0;
  std::int32_t nvlink_domain = 0;
  bool healthy = true;
  std::vector<MigDeviceInventory> mig{};  // empty: the GPU is not in MIG mode
};

struct NodeInventory {
  std::string name;
  std::string address;   // empty: the server uses the address the agent connects from
  std::string leaf = "leaf-0";
  std::string spine = "spine-0";
  // The multi-node NVLink domain the node's GPUs belong to (an NVL72 rack):
  // nodes naming the same one form one domain. From NVML's GPU fabric
  // information, or the agent's --nvlink-group; empty: none.
  std::string nvlink_group;
  std::string provider;  // "NVML 550.54, 8 GPUs" or "fake GPUs (no NVIDIA driver found)"
  std::int64_t cpu_milli = 0;
  std::int64_t memory = 0;
  std::vector<GpuInventory> gpus;
  // How fractions may share its GPUs: "vgpu", "mps", "timeslice"; empty: exclusive.
  std::vector<std::string> gpu_sharing{"vgpu", "timeslice"};

  // Whether the scheduler's view (topology and capacity) differs.
  bool SameCapacity(const NodeInventory& other) const;
};

struct TaskKey {
  std::int64_t job = 0;
  std::int32_t attempt = 0;
  std::int32_t task = 0;
  auto operator<=>(const TaskKey&) const = default;
};

// The container a task runs in (model/task_container.h, as the agent needs it).
struct ContainerAssignment {
  struct Mount {
    std::string host_path, mount_path;
    bool read_only = true;
  };
  // The job's queue's login to the image's registry, when it has one: for
  // the pull only, never logged, never written to the node's disk but in
  // the pull's own authentication file.
  struct Login {
    std::string username, password;
  };
  // spec.network: isolated. The run's nodes (their addresses, rank 0's
  // first) join one overlay that only the run's containers are on; this
  // task's node is nodes[index]. vni names the overlay on the wire.
  struct Network {
    std::int64_t vni = 0;
    std::vector<std::string> nodes;
    std::int32_t index = 0;
  };
  std::string image;  // a canonical reference
  std::string pull_policy = "IfNotPresent";  // or "Always", "Never"
  std::vector<Mount> mounts;
  std::int64_t shm_bytes = 0;  // 0: the runtime's default
  std::int64_t uid = -1, gid = -1;  // -1: the image's user
  bool allow_root = false;  // the job's queue lets a container run as uid 0
  std::optional<Login> login;
  std::optional<Network> network;  // absent: the host's network
};

struct Assignment {
  TaskKey key;
  std::string job_name;
  std::string task_name;                       // "worker-3"
  std::vector<std::string> command;
  std::map<std::string, std::string> env;     // rendezvous and TESSERA_* variables included
  std::string working_dir;                     // empty: the agent chooses
  std::vector<std::int32_t> gpus;              // local indices
  std::int32_t gpu_milli = 0;
  std::int64_t gpu_memory = 0;
  std::int64_t cpu_milli = 0;
  std::int64_t memory = 0;
  // A fraction's sharing mode ("vgpu", "mps", "timeslice", "mig") and burst
  // allowance; with "mig", the MIG device's UUID.
  std::string gpu_sharing;
  std::int64_t gpu_memory_burst = 0;
  std::string mig_device;
  // The job's checkpoint contract: the signal that asks it to checkpoint and
  // give back what it holds (0: none), and how long it has before it is stopped.
  std::int32_t checkpoint_signal = 0;
  std::int64_t checkpoint_grace_ms = 30'000;
  // An interactive session (`tessera run -it`): the task runs on a terminal
  // the agent holds for `tessera attach`, and ends once nobody used it for
  // this long. 0: a batch task.
  std::int64_t interactive_idle_ms = 0;
  // A container task: runs from this image (docs/containers.md); an empty
  // image: a host process.
  ContainerAssignment container;
};

struct AssignmentSet {
  std::int64_t revision = 0;
  // The epoch of the leader that sent it (ha/leader_election.h; 0 without
  // an election). An agent drops a set from an epoch older than one it saw.
  std::int64_t epoch = 0;
  std::vector<Assignment> tasks;
};

struct TaskReport {
  TaskKey key;
  bool exited = false;      // false: running (or preparing, below)
  std::int32_t exit_code = 0;
  std::string message;      // why it failed to start or how it ended
  // The agent lost the task through no fault of the job (it restarted while
  // the task ran): the run is requeued without using up a restart.
  bool lost = false;
  // Milliseconds since the task last showed progress: touched its
  // TESSERA_PROGRESS_FILE, or started (-1: not known, an exited task).
  std::int64_t progress_age_ms = -1;
  // Milliseconds since the task last reported a checkpoint by touching its
  // TESSERA_CHECKPOINT_FILE (-1: not in this run, or an exited task).
  std::int64_t checkpoint_age_ms = -1;
  // Not started yet: the agent prepares it (pulls its image), and message
  // says how far ("pulling ... : 3 blobs"). Never with exited.
  bool preparing = false;
};

// One GPU's telemetry as of the report (the server's idle-GPU accounting).
struct GpuTelemetry {
  std::int32_t index = 0;
  double utilization = 0;  // percent
  std::int64_t memory_used = 0;
};

// A GPU the agent has taken out of service (node/health/gpu_health.h), and why.
struct GpuOutageReport {
  std::int32_t index = 0;
  std::string reason;
};

// A GPU fault as the agent saw it, with its class: "application", "reset",
// "hardware", "unknown" ("ignore"-class faults are not sent).
struct GpuFaultReport {
  std::int32_t index = 0;
  std::string kind;         // "xid", "ecc-double-bit"
  std::int64_t code = 0;    // the Xid
  std::string detail;
  std::string fault_class;
};

// An image in the node's cache (node/image/image_store.h).
struct CachedImageReport {
  std::vector<std::string> references;  // canonical; empty: superseded, kept while a task uses it
  std::string digest;
  std::int64_t size_bytes = 0;
};

struct StatusReport {
  std::vector<TaskReport> tasks;
  std::vector<GpuTelemetry> gpus;
  // Level-triggered: every GPU out of service now (a GPU not listed is in service).
  std::vector<GpuOutageReport> unhealthy_gpus;
  // Edge-triggered: faults since the last report the server took.
  std::vector<GpuFaultReport> faults;
  // Memory that vGPU tasks hold past their caps, per local GPU index (only GPUs with a burst).
  std::map<std::int32_t, std::int64_t> burst_memory;
  // Level-triggered: the node's image cache; absent on a node that cannot run containers.
  std::optional<std::vector<CachedImageReport>> images;
};

nlohmann::json ToJson(const NodeInventory& inventory);
nlohmann::json ToJson(const Assignment& assignment);
nlohmann::json ToJson(const AssignmentSet& set);
nlohmann::json ToJson(const StatusReport& report);
Result<NodeInventory> NodeInventoryFromJson(const nlohmann::json& value);
Result<AssignmentSet> AssignmentSetFromJson(const nlohmann::json& value);
Result<StatusReport> StatusReportFromJson(const nlohmann::json& value);

}  // namespace tessera::api
