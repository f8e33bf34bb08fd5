// A job: a gang of task groups that starts whole or not at all, with what each
// task needs, where in the topology the gang must sit, and how it is ordered,
// preempted and restarted. Also the job's runtime state as the scheduler sees
// it (pending / running / ended, and where its tasks are placed).
#pragma once

#include <cstdint>
#include <array>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/strong_id.h"
#include "model/job_array.h"
#include "model/placement.h"
#include "model/resources.h"
#include "model/task_container.h"
#include "model/topology.h"

namespace tessera::model {

struct Gpu;

struct JobTag;
struct QueueTag;
using JobId = StrongId<JobTag>;
using QueueId = StrongId<QueueTag>;

// What one task asks for. gpu_milli is a multiple of 1000 (whole GPUs) or below
// 1000 (a fraction of one GPU). For whole GPUs gpu_memory is the least memory
// each GPU must have; for a fraction it is the memory the task holds on its GPU,
// or, when 0, the fraction's share of whichever GPU it lands on (MemoryOn).
struct TaskRequest {
  std::int64_t gpu_milli = 0;
  std::int64_t gpu_memory = 0;
  std::int64_t cpu_milli = 0;
  std::int64_t memory = 0;
  std::string gpu_model;  // accepted GPU models, '|'-separated ("H100|H200"); empty: any
  std::uint64_t models = 0;  // gpu_model resolved: bit m accepts GpuModelId m; 0: any
  // For a fraction: how it shares its GPU, and how far past gpu_memory it may
  // burst into memory nobody holds (vgpu only; docs/gpu-sharing.md).
  GpuSharing sharing = GpuSharing::kVgpu;
  std::int64_t gpu_memory_burst = 0;
  // With sharing kMig: the profile of the one MIG device it asks for
  // (model/mig.h); gpu_milli and gpu_memory are then the profile's.
  std::string mig_profile;
  // The ImageKey of the image its task runs from (task_container.h); 0: a
  // host process. Nodes that hold the image are preferred, never required.
  std::uint64_t image = 0;

  bool Accepts(GpuModelId model) const { return models == 0 || (models >> model.value() & 1); }

  bool fractional() const { return gpu_milli > 0 && gpu_milli < 1000; }
  // The memory a fraction holds on a GPU of `gpu_bytes`: gpu_memory, or with
  // none asked its proportional share (0.5 of an 80 GiB GPU: 40 GiB).
  std::int64_t MemoryOn(std::int64_t gpu_bytes) const {
    return fractional() && gpu_memory == 0 ? gpu_bytes * gpu_milli / 1000 : gpu_memory;
  }
  std::int32_t whole_gpus() const { return static_cast<std::int32_t>(gpu_milli / 1000); }
  // For a fraction: whether it fits on the GPU now, and the share it would
  // hold there (a MIG task: the GPU's first free device of its profile).
  bool FitsOn(const Gpu& gpu) const;
  GpuShare ShareOn(GpuId id, const Gpu& gpu) const;
};

struct TaskGroup {
  std::string name;
  std::int32_t replicas = 1;
  std::int32_t min_replicas = 1;  // the gang starts once this many of the group are placed
  TaskRequest request;
  std::vector<std::string> command;
  std::map<std::string, std::string> env;  // added to the task's environment
  std::string working_dir;                 // where the task starts; empty: the agent's work dir (or the image's)
  TaskContainer container;                 // the image it runs from; none: a host process
  // Each task of the group on a node of its own (no two on one node), as a
  // Slurm allocation holds one task per node: placement treats the group's
  // tasks as mutually exclusive on a node.
  bool one_per_node = false;
};

struct Dependency {
  // After the other job succeeded, ended in any way, or ended without
  // succeeding (failed or cancelled: Slurm's afternotok).
  enum class When { kSucceeded, kEnded, kFailed };
  Dependency() = default;
  Dependency(std::string name, When w) : job_name(std::move(name)), when(w) {}
  Dependency(JobId id, When w) : when(w), job_id(id) {}
  std::string job_name;  // empty when the job is named by id
  When when = When::kSucceeded;
  // The job by id instead of by name (sbatch's --dependency=afterok:ID,
  // where a name may belong to several jobs).
  JobId job_id;
};

// The signals a job may name as its checkpoint signal, by name ("SIGUSR1").
inline constexpr const char* kCheckpointSignalNames = "SIGUSR1, SIGUSR2, SIGTERM, SIGINT, SIGHUP";
std::optional<std::int32_t> ParseCheckpointSignal(std::string_view name);

enum class JobState { kPending, kRunning, kSucceeded, kFailed, kCancelled };
std::string_view ToString(JobState state);

// An array job's elements so far (model/job_array.h). Elements come into
// being when they start, or when one is cancelled before it started; `next`
// is the position the next one to start is looked for from: every position
// below it has its element.
struct ArrayProgress {
  std::array<std::int32_t, 5> by_state{};  // elements in each JobState

  std::int32_t next = 0;
  std::int32_t& operator[](JobState s) { return by_state[static_cast<std::size_t>(s)]; }
  std::int32_t operator[](JobState s) const { return by_state[static_cast<std::size_t>(s)]; }
  std::int32_t created() const;
  std::int32_t active() const { return (*this)[JobState::kPending] + (*this)[JobState::kRunning]; }
};

// What a set of task placements holds in total.
Resources SumPlacements(const std::vector<TaskPlacement>& placements);

// The fields the scheduler reads for every pending job in every cycle come
// first, in the record's first two cache lines (the struct is aligned to
// them): a cycle visits thousands of pending jobs, and with those fields
// spread over the whole record each visit cost several cache misses.
struct alignas(64) Job {
  // Read every cycle; spec and runtime state.
  JobId id;
  QueueId queue;
  std::int32_t priority = 0;
  JobState state = JobState::kPending;
  Time submit_time = 0;
  Time not_before = 0;   // a restarted job waits for its backoff until then
  Seconds walltime = 0;  // the user's estimate; 0 when not given

 private:
  // MinRequest().gpu_milli and ShapeFingerprint(), once Remember()ed.
  std::int64_t min_gpu_milli_ = 0;
  std::uint64_t shape_ = 0;
  bool remembered_ = false;

 public:
  bool preemptible = true;

 private:
  // Where the JobTable keeps the job in its pending or running set (-1: in
  // none). Here, in the padding after `preemptible`: anywhere before it
  // would push `preemptible` out of the first cache line, anywhere after it
  // would grow every job by a cache line.
  std::int32_t set_position_ = -1;
  friend class JobTable;

 public:
  std::vector<Dependency> depends_on;
  // Starts only once no earlier job of the same name and user is pending or
  // running (Slurm's --dependency=singleton).
  bool singleton = false;
  // An array job (model/job_array.h): it spawns elements instead of running.
  // Here, in the padding after `singleton`, because a cycle asks it of every
  // pending job; what it reads next (`array`) is further on.
  bool is_array_parent = false;
  std::string never_reason;  // set once the job is known never to fit

  // Spec.
  std::string name;
  std::string user;  // who submitted it; queues' user limits bind per user
  Seconds checkpoint_interval = 0;  // 0 when the job does not checkpoint
  // The checkpoint contract: the signal that asks the job to checkpoint (and
  // give back burst memory) before it is stopped; 0: none, it is just stopped.
  std::int32_t checkpoint_signal = 0;
  Seconds checkpoint_grace = 30;    // how long it has after the signal
  // Hang detection (spec.hangDetection, docs/fault-tolerance.md): a run is
  // hung when a task has not touched its progress file for progress_timeout,
  // or all its GPUs sat idle for gpu_idle_timeout; 0 turns either check off.
  // Then it is reported, and with restart_when_hung also failed and restarted.
  Seconds progress_timeout = 0;
  Seconds gpu_idle_timeout = 0;
  bool restart_when_hung = false;
  // An interactive session (spec.interactive, `tessera run -it`): its task
  // runs on a terminal for `tessera attach` and ends after this long unused;
  // 0: a batch job.
  Seconds interactive_idle_timeout = 0;
  // spec.network (docs/containers.md): the host's network (what NCCL and
  // RDMA need), or a network of the job's own that only its tasks reach.
  bool isolated_network = false;
  // The true run time, known only in simulation. Only plugins registered as
  // oracles (docs/simulator.md) may read it; every other policy sees walltime.
  Seconds oracle_duration = 0;
  TopologyConstraint topology;
  std::vector<TaskGroup> groups;
  std::int32_t max_restarts = 0;
  // Restart backoff (spec.restart): the n-th restart waits backoff * 2^(n-1),
  // at most max_restart_backoff; 0: restart at once.
  Seconds restart_backoff = 0;
  Seconds max_restart_backoff = 600;
  // Arrays: the parent and its elements share `array`; an element names its
  // parent and its index, and the parent counts its elements.
  std::shared_ptr<const JobArray> array;
  JobId array_parent;
  std::int32_t array_index = -1;
  ArrayProgress array_progress;

  // Runtime state.
  Time start_time = 0;
  Time last_checkpoint = 0;  // when its last checkpoint was written (start time if none)
  std::int32_t restarts = 0;
  std::vector<TaskPlacement> placements;
  Resources held;            // the sum of `placements`
  double attained_gpu_seconds = 0;  // GPU-seconds run before the current run

  // Totals over every replica of every group, and over the minimum gang.
  Resources TotalRequest() const;
  Resources MinRequest() const;
  // MinRequest().gpu_milli and ShapeFingerprint(), remembered when the job
  // enters the job table (Remember): its groups and topology do not change
  // after that, and the scheduler reads both for every pending job every
  // cycle, where walking the groups cost a cache miss a job. A job never
  // added is computed; a copy of an added job carries them until it is
  // added again, so change a copy's groups only to submit it anew.
  std::int64_t MinGpuMilli() const { return remembered_ ? min_gpu_milli_ : MinRequest().gpu_milli; }
  std::uint64_t Shape() const { return remembered_ ? shape_ : ShapeFingerprint(); }
  void Remember();
  // Resources held by the current placement (kept by whoever binds the job).
  const Resources& Held() const { return held; }
  // A hash of everything that decides where the gang fits (requests, replica
  // counts, topology), so identical requests can share one answer.
  std::uint64_t ShapeFingerprint() const;
  bool single_task() const { return groups.size() == 1 && groups[0].replicas == 1; }
  bool is_array_element() const { return array_parent.valid(); }
  // An array job with elements left to start, within its limit of active ones.
  bool CanSpawn() const {
    return is_array_parent && array_progress.created() < array->size() &&
           (array->max_running == 0 || array_progress.active() < array->max_running);
  }
  // GPU-seconds of service received so far, the current run included:
  // Tiresias' two-dimensional attained service.
  double AttainedService(Time now) const {
    const bool running = state == JobState::kRunning;
    return attained_gpu_seconds +
           (running ? static_cast<double>(held.gpu_milli) / 1000.0 * static_cast<double>(now - start_time) : 0.0);
  }
};

// The id of the element at `position` of the array job `parent`: the ids
// after the parent's were reserved for its elements when it was submitted.
inline JobId ArrayElementId(JobId parent, std::int32_t position) { return JobId(parent.value() + 1 + position); }
// The element at `position` of `parent`, pending, as it starts: the parent's
// spec with its index, and none of the parent's conditions to start (the
// parent met them before any element was made).
Job ArrayElement(const Job& parent, std::int32_t position);

}  // namespace tessera::model
