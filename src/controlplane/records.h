// What the control plane knows beyond the scheduler's model: who submitted a
// job, which run (attempt) of it is current and how each of its tasks is
// doing on its node; and each node's inventory, address and liveness.
//
// These records, together with the job's spec document, are what the store
// keeps; the scheduler's SchedulerState is rebuilt from them on recovery.
#pragma once

#include <compare>
#include <map>
#include <cstdint>
#include <string>
#include <vector>

#include "api/agent_protocol.h"
#include "controlplane/gpu_usage.h"
#include "model/job.h"

namespace tessera::controlplane {

// A job's state as the API shows it: pending, starting (placed, not every
// task reported running yet), running, succeeded, failed, cancelled.
std::string_view ApiState(model::JobState state, bool all_tasks_running);
// An array job's: running while any element runs, pending before, and then
// how it ended (model/job_table.h).
std::string_view ArrayApiState(const model::Job& parent);

// Host-process tasks without a workingDir start where the job was submitted
// from (X-Tessera-Workdir), as sbatch's do; a container starts in its image's.
void StartInSubmitDir(model::Job& job, const std::string& submit_dir);

enum class TaskState { kAssigned, kRunning, kExited };
std::string_view ToString(TaskState state);

// One task of a job's current run, where the scheduler placed it.
struct TaskRecord {
  std::int32_t group = 0;               // task group in the job
  std::int32_t index = 0;               // replica within the group
  std::string name;                     // "<group>-<index>", e.g. "worker-3"
  std::string node;
  std::vector<std::int32_t> gpus;       // local GPU indices on the node
  std::int32_t gpu_milli = 0;           // share of each of those GPUs (1000: whole)
  std::int64_t gpu_memory = 0;          // bytes held on each of those GPUs
  std::string mig_device;               // a MIG task's device, by its UUID ("MIG-..."); else empty
  std::int64_t cpu_milli = 0;
  std::int64_t memory = 0;
  TaskState state = TaskState::kAssigned;
  std::int32_t exit_code = 0;           // valid once kExited
  std::string message;                  // the agent's word on a failure
  std::string preparing;                // what the agent last said it prepares (an image pull); not persisted
  // The task's assignment as its agent receives it, serialized once: node
  // assignment sets are rebuilt on every change and a run's tasks never change.
  std::string assignment_json;
  TaskMeter meter;                      // idle-GPU accounting between reports (memory only)
};

struct JobRecord {
  std::string user;
  std::string queue;                    // its queue's path (survives queue edits)
  std::string spec;                     // the spec document it was submitted with
  std::string submit_dir;               // tasks without workingDir start here (X-Tessera-Workdir)
  std::int32_t attempt = 0;             // runs started so far; tasks belong to run `attempt`
  std::vector<TaskRecord> tasks;        // the current run's tasks; empty while pending
  // The run before this one, kept so that what its tasks printed while they
  // were being stopped (a checkpoint's last words) still reaches its log.
  std::vector<TaskRecord> previous_tasks;
  std::int32_t previous_attempt = 0;
  // The current run's binding is on disk: only then may agents see its tasks,
  // so that no task starts that a crash could make the server forget.
  bool dispatched = false;
  // The current run's MASTER_PORT, held on its rank 0's node (rendezvous_ports.h);
  // 0 once the run has left its nodes.
  std::int32_t master_port = 0;
  std::int64_t submit_ms = 0;
  std::int64_t scheduled_ms = 0;        // when the current run was placed
  std::int64_t checkpoint_ms = 0;       // when the current run last reported a checkpoint; 0: never
  double lost_gpu_seconds = 0;          // work its runs lost when stopped before they ended (lost_work.h)
  std::int64_t running_ms = 0;          // when all its tasks were reported running
  std::int64_t end_ms = 0;
  std::uint64_t end_commit = 0;         // the commit that holds its end: forgotten only once it is durable
  std::string message;                  // why it waits, or how it ended
  std::string wait_reason;              // while pending: the last cycle's reason ("capacity", ...)
  // Why its last run went back to the queue (preempted, failed and restarted,
  // its node lost): it leads the wait messages until the job runs again, so
  // that a requeued job still says what stopped it.
  std::string requeue_reason;
  double gpu_seconds = 0;               // GPU time its runs held, fractions by their share
  double idle_gpu_seconds = 0;          // ...of which the GPUs sat idle (gpu_usage.h)
  bool idle_warned = false;             // the idle policy warned about the current streak
  std::int32_t hung_attempt = 0;        // the run whose hang was declared (once per run)
  // An array element: its array job, whose spec it runs (its own `spec` is
  // empty), with which it is forgotten and as part of which it is accounted.
  model::JobId array_parent;
};

// GPU time of jobs that were forgotten after their retention, summed by
// queue, user and the hour they ended: accounting and the GPU-time counters
// still count it once the jobs themselves are gone.
// The store's kMeta key under which the next job id is kept once the job
// holding the highest id may have been forgotten.
inline constexpr const char* kNextJobIdKey = "next-job-id";
// The key each run's step secret is derived from (gang_env.h): random, made once, kept.
inline constexpr const char* kStepKeyKey = "step-key";

inline constexpr std::int64_t kMsPerHour = 3'600'000;
struct UsageKey {
  std::string queue;
  std::string user;
  std::int64_t hour = 0;  // ms since the epoch / 3,600,000
  auto operator<=>(const UsageKey&) const = default;
};
struct Usage {
  std::int64_t jobs = 0;
  double gpu_seconds = 0;
  double idle_gpu_seconds = 0;
};

// Who administers a queue's subtree and who may submit to it (docs/security.md).
struct QueueAccess {
  std::vector<std::string> admins;   // queue-admins of this subtree
  std::vector<std::string> members;  // users who may submit here (and below)
};

// A queue's login to a registry (docs/containers.md): handed to the agents
// that pull the images of the queue's jobs (and of the queues below it) from
// that registry, never shown through the API, events, logs or the audit.
struct RegistryCredential {
  std::string queue;     // its path
  std::string registry;  // "host[:port]", as in image references
  std::string username;
  std::string password;  // here only; the store keeps it sealed (auth/secret_box.h)
  std::string updated_by;
  std::int64_t updated_ms = 0;
};

// The scheduler's keys (model::ImageKey) of every reference of a node's cached images.
std::vector<std::uint64_t> ImageKeys(const std::vector<api::CachedImageReport>& images);

enum class NodeState { kReady, kLost };
std::string_view ToString(NodeState state);

struct NodeRecord {
  api::NodeInventory inventory;         // as the agent last registered it
  bool cordoned = false;
  NodeState state = NodeState::kReady;
  std::int64_t last_heartbeat_ms = 0;
  std::int64_t registered_ms = 0;
  std::int64_t revision = 0;            // bumped whenever the node's assignment set changes
  std::map<std::int32_t, std::int64_t> burst_memory;  // per local GPU, as last reported
  std::map<std::int32_t, double> gpu_utilization;     // percent per local GPU, from the last heartbeat with telemetry
  std::map<std::int32_t, std::string> unhealthy_gpus; // local GPUs the agent took out of service, and why (persisted)
  std::vector<api::CachedImageReport> images;          // its image cache, as last reported (not persisted)
};

}  // namespace tessera::controlplane
