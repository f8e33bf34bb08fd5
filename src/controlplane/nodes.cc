// Node and agent operations of the control plane: registration, status
// reports (the heartbeat), assignment long polls, logs, cordon and drain; and
// the bookkeeping of which runs each node must be running.
#include <algorithm>
#include <filesystem>
#include <fstream>

#include "api/json_reader.h"
#include "controlplane/control_plane.h"
#include "controlplane/array_env.h"
#include "controlplane/gang_env.h"
#include "model/mig.h"

namespace tessera::controlplane {

using nlohmann::json;

namespace {

bool ValidNodeName(const std::string& name) {
  if (name.empty() || name.size() > 253) return false;
  for (const char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_')) return false;
  }
  return true;
}

api::ContainerAssignment ContainerAssignmentOf(const model::TaskContainer& c) {
  api::ContainerAssignment out;
  if (!c.enabled()) return out;
  out.image = c.image;
  out.pull_policy = std::string(model::ToString(c.pull_policy));
  for (const model::HostMount& m : c.mounts) out.mounts.push_back({m.host_path, m.mount_path, m.read_only});
  out.shm_bytes = c.shm_bytes;
  if (c.uid) out.uid = *c.uid;
  if (c.gid) out.gid = *c.gid;
  return out;
}

// A run's isolated network as one of its tasks on `node` sees it: the run's
// nodes by address, rank 0's first, and an overlay id of the run's own.
template <typename AddressOf>
api::ContainerAssignment::Network IsolatedNetwork(std::int64_t job, const JobRecord& record, const std::string& node, const AddressOf& address_of) {
  api::ContainerAssignment::Network network;
  constexpr std::int64_t kVnis = (1 << 24) - 2;  // 1 .. 2^24-1
  network.vni = (job * 131 + record.attempt) % kVnis + 1;
  std::vector<std::string> names;
  for (const TaskRecord& t : record.tasks) {
    if (std::find(names.begin(), names.end(), t.node) != names.end()) continue;
    if (t.node == node) network.index = static_cast<std::int32_t>(names.size());
    names.push_back(t.node);
    network.nodes.push_back(address_of(t.node));
  }
  return network;
}

}  // namespace

void ControlPlane::Touch(const std::string& node) {
  auto it = nodes_.find(node);
  if (it == nodes_.end()) return;
  ++it->second.revision;
  if (auto w = node_waiters_.find(node); w != node_waiters_.end()) {
    w->second.done(AssignmentsFor(it->second));
    node_waiters_.erase(w);
  }
}

void ControlPlane::Attach(model::JobId id) {
  for (const TaskRecord& t : records_.at(id).tasks) node_jobs_[t.node].insert(id.value());
  for (const TaskRecord& t : records_.at(id).tasks) Touch(t.node);
}

void ControlPlane::Detach(model::JobId id) {
  JobRecord& record = records_.at(id);
  if (record.master_port != 0) ports_.Release(record.tasks.front().node, record.master_port);
  record.master_port = 0;
  const bool was_dispatched = record.dispatched;
  record.dispatched = false;
  if (!was_dispatched) return;
  for (const TaskRecord& t : record.tasks) node_jobs_[t.node].erase(id.value());
  for (const TaskRecord& t : record.tasks) Touch(t.node);
}

std::string ControlPlane::AssignmentsFor(const NodeRecord& node) {
  std::string out = "{\"revision\":" + std::to_string(node.revision) + ",\"epoch\":" + std::to_string(epoch_) + ",\"tasks\":[";
  bool first = true;
  auto it = node_jobs_.find(node.inventory.name);
  const auto address_of = [this](const std::string& name) {
    auto n = nodes_.find(name);
    return n == nodes_.end() ? std::string() : n->second.inventory.address;
  };
  for (const std::int64_t raw : it == node_jobs_.end() ? std::set<std::int64_t>() : it->second) {
    const model::JobId id(static_cast<std::int32_t>(raw));
    const model::Job& job = state_->job(id);
    JobRecord& record = records_.at(id);
    for (std::size_t i = 0; i < record.tasks.size(); ++i) {
      TaskRecord& t = record.tasks[i];
      if (t.node != node.inventory.name || t.state == TaskState::kExited) continue;
      if (t.assignment_json.empty()) {
        api::Assignment a;
        a.key = {raw, record.attempt, static_cast<std::int32_t>(i)};
        a.job_name = job.name;
        a.task_name = t.name;
        const model::TaskGroup& group = job.groups[static_cast<std::size_t>(t.group)];
        a.command = group.command;
        a.env = group.env;
        a.working_dir = group.working_dir;
        const std::string secret = auth::HmacSha256Hex(step_key_, std::to_string(raw) + "/" + std::to_string(record.attempt));
        for (auto& [k, v] : GangEnvironment(job, raw, records_.at(id).queue, record, i, address_of, secret)) a.env[k] = v;
        for (auto& [k, v] : ArrayEnvironment(job)) a.env[k] = v;
        a.gpus = t.gpus;
        a.gpu_milli = t.gpu_milli;
        a.gpu_memory = t.gpu_memory;
        a.cpu_milli = t.cpu_milli;
        a.memory = t.memory;
        if (group.request.fractional()) {
          a.gpu_sharing = model::ToString(group.request.sharing);
          a.gpu_memory_burst = group.request.gpu_memory_burst;
          a.mig_device = t.mig_device;
        }
        a.checkpoint_signal = job.checkpoint_signal;
        a.checkpoint_grace_ms = job.checkpoint_grace * 1000;
        a.interactive_idle_ms = job.interactive_idle_timeout * 1000;
        a.container = ContainerAssignmentOf(group.container);
        a.container.allow_root = QueueRule(record.queue, &model::QueueSpec::allow_root_containers);
        if (!a.container.image.empty()) a.container.login = RegistryLoginFor(record.queue, a.container.image);
        if (job.isolated_network) a.container.network = IsolatedNetwork(raw, record, t.node, address_of);
        t.assignment_json = api::Dump(api::ToJson(a));
      }
      out += (first ? "" : ",") + t.assignment_json;
      first = false;
    }
  }
  return out + "]}\n";
}

void ControlPlane::RegisterNode(const auth::Caller& caller, api::NodeInventory inventory, Done<json> done) {
  const std::string name = inventory.name;
  if (!ValidNodeName(name)) return done(InvalidArgument("name: '" + name + "' is not a valid node name (letters, digits, '-', '.', '_')"));
  for (const std::string& mode : inventory.gpu_sharing) {
    if (Result<model::GpuSharing> m = model::ParseGpuSharing(mode); !m.ok()) return done(InvalidArgument("gpuSharing: " + m.status().message()));
  }
  for (const api::GpuInventory& gpu : inventory.gpus) {
    for (std::size_t d = 0; d < gpu.mig.size(); ++d) {
      if (Result<model::MigProfile> profile = model::ParseMigProfile(gpu.mig[d].profile); !profile.ok()) {
        return done(InvalidArgument("gpus[" + std::to_string(gpu.index) + "].mig[" + std::to_string(d) + "].profile: " + profile.status().message()));
      }
    }
  }

  std::lock_guard lock(mu_);
  EnsureState();
  const std::int64_t now = NowMs();
  auto [it, is_new] = nodes_.try_emplace(name);
  NodeRecord& node = it->second;
  if (is_new) {
    node_order_.push_back(name);
    node.registered_ms = now;
    rebuild_needed_ = true;
    Emit("NodeRegistered", -1, name, inventory.provider + ", " + std::to_string(inventory.gpus.size()) + " GPUs at " + inventory.address);
  } else if (!node.inventory.SameCapacity(inventory)) {
    // Its GPUs changed under the runs placed there: start those elsewhere.
    for (const model::JobId id : state_->JobsOnNode(*state_->cluster().FindNode(name))) {
      RequeueRun(id, "node " + name + " came back with a different inventory");
    }
    rebuild_needed_ = true;
    Emit("NodeChanged", -1, name, "inventory changed; its runs were requeued");
  }
  const bool was_lost = node.state == NodeState::kLost;
  if (!is_new && node.inventory.address != inventory.address) {
    // MASTER_ADDR in every cached assignment of runs with a task here may name the old address.
    for (const auto& [other, jobs] : node_jobs_) {
      for (const std::int64_t job : jobs) {
        for (TaskRecord& t : records_.at(model::JobId(static_cast<std::int32_t>(job))).tasks) t.assignment_json.clear();
      }
    }
  }
  node.inventory = std::move(inventory);
  node.state = NodeState::kReady;
  node.last_heartbeat_ms = now;
  if (was_lost) {
    Emit("NodeReady", -1, name, "agent is back");
    if (!rebuild_needed_ && !node.cordoned) state_.SetSchedulable(*state_->cluster().FindNode(name), true);
  }
  PersistNode(node);
  // A node that joined with a join token gets its own credential, for every later call.
  const std::string credential = caller.Is(auth::Role::kNodeJoin) ? IssueNodeCredential(name, caller.user) : std::string();
  Commit([this, name, credential, done = std::move(done)]() {
    RequestCycle();
    const NodeRecord& n = nodes_.at(name);
    json answer = {{"revision", n.revision}, {"heartbeatTimeoutMs", options_.heartbeat_timeout.count()}};
    if (!credential.empty()) answer["credential"] = credential;
    done(answer);
  });
}

void ControlPlane::ReportStatus(const std::string& name, api::StatusReport report, Done<json> done) {
  std::lock_guard lock(mu_);
  EnsureState();
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return done(NotFound("node " + name + " is not registered; register first"));
  NodeRecord& node = it->second;
  node.last_heartbeat_ms = NowMs();
  if (node.state == NodeState::kLost) {
    // A lost node must register again: its inventory may have changed.
    return done(NotFound("node " + name + " was marked lost; register again"));
  }
  node.burst_memory = report.burst_memory;
  if (report.images) {
    node.images = std::move(*report.images);
    const std::vector<std::uint64_t> keys = ImageKeys(node.images);
    const Result<model::NodeId> id = state_->cluster().FindNode(name);
    if (id.ok() && keys != state_->cluster().node(*id).images) state_.SetImages(*id, keys);
  }
  // The latest telemetry replaces the last: a GPU it leaves out has no reading.
  if (!report.gpus.empty()) {
    node.gpu_utilization.clear();
    for (const api::GpuTelemetry& g : report.gpus) node.gpu_utilization[g.index] = g.utilization;
  }
  for (const api::TaskReport& r : report.tasks) ApplyTaskReport(name, r);
  ApplyGpuHealth(node, report);
  if (!report.gpus.empty()) AccountGpuUsage(node);
  if (writes_.empty()) return done(json{{"revision", node.revision}});
  Commit([this, name, done = std::move(done)]() { done(json{{"revision", nodes_.at(name).revision}}); });
}

void ControlPlane::AccountGpuUsage(const NodeRecord& node_record) {
  const std::string& node = node_record.inventory.name;
  const auto jobs = node_jobs_.find(node);
  if (jobs == node_jobs_.end()) return;
  const auto utilization = [&](std::int32_t gpu) {  // no reading counts as 0%, as before
    const auto it = node_record.gpu_utilization.find(gpu);
    return it == node_record.gpu_utilization.end() ? 0.0 : it->second;
  };
  const std::int64_t now = NowMs();
  std::vector<model::JobId> reclaim;
  std::vector<std::pair<model::JobId, std::string>> hung;
  for (const std::int64_t raw : jobs->second) {
    const model::JobId id(static_cast<std::int32_t>(raw));
    JobRecord& record = records_.at(id);
    std::int64_t idle_for = -1;  // the job's: its least idle task's streak
    for (TaskRecord& task : record.tasks) {
      if (task.gpus.empty()) continue;
      if (task.node == node && task.state == TaskState::kRunning) {
        double busiest = 0;
        for (const std::int32_t g : task.gpus) busiest = std::max(busiest, utilization(g));
        const double held = static_cast<double>(task.gpus.size()) * task.gpu_milli / 1000.0;
        const UsageDelta delta = Observe(task.meter, held, busiest, now, options_.idle);
        record.gpu_seconds += delta.gpu_seconds;
        // The idle share is counted in one step when a streak crosses the window, the held time in many small
        // ones; their float sums may differ in the last bit, and idle time must never exceed held time.
        record.idle_gpu_seconds = std::min(record.idle_gpu_seconds + delta.idle_gpu_seconds, record.gpu_seconds);
      }
      const std::int64_t task_idle = task.meter.last_ms < 0 ? 0 : IdleFor(task.meter, now);
      idle_for = idle_for < 0 ? task_idle : std::min(idle_for, task_idle);
    }
    if (idle_for <= 0) {
      record.idle_warned = false;
      continue;
    }
    const IdlePolicy& policy = options_.idle;
    const Seconds hang_timeout = state_->job(id).gpu_idle_timeout;
    if (policy.reclaim_after_ms > 0 && idle_for >= policy.reclaim_after_ms) {
      reclaim.push_back(id);
    } else if (hang_timeout > 0 && idle_for >= hang_timeout * 1000) {
      hung.emplace_back(id, "its GPUs have been idle for " + std::to_string(idle_for / 1000) + "s (hangDetection.gpuIdleTimeout is " +
                                std::to_string(hang_timeout) + "s)");
    } else if (policy.warn_after_ms > 0 && idle_for >= policy.warn_after_ms && !record.idle_warned) {
      record.idle_warned = true;
      Emit("JobIdle", raw, node, "its GPUs have been idle for " + std::to_string(idle_for / 1000) + "s" +
                                     (policy.reclaim_after_ms > 0 ? "; the idle policy reclaims them after " +
                                                                        std::to_string(policy.reclaim_after_ms / 1000) + "s"
                                                                  : ""));
    }
  }
  // Hangs first: a run the idle policy would also reclaim is better restarted, when its job asks for that.
  for (const auto& [id, why] : hung) DeclareHung(id, why);
  for (const model::JobId id : reclaim) {
    if (state_->job(id).state != model::JobState::kRunning) continue;  // restarted as hung just now
    EndRun(id, model::JobState::kCancelled,
           "reclaimed by the idle policy: its GPUs were idle for " + std::to_string(options_.idle.reclaim_after_ms / 1000) + "s");
  }
}

void ControlPlane::ApplyTaskReport(const std::string& node, const api::TaskReport& r) {
  if (FindRecord(r.key.job) == nullptr) return;  // forgotten (or never known)
  const model::JobId id(static_cast<std::int32_t>(r.key.job));
  JobRecord& record = records_.at(id);
  // Reports about another run, or a run no longer dispatched, are stale: the
  // agent stops such tasks itself once they leave its assignment set.
  if (!record.dispatched || r.key.attempt != record.attempt || r.key.task < 0 ||
      r.key.task >= static_cast<std::int32_t>(record.tasks.size())) {
    return;
  }
  TaskRecord& task = record.tasks[static_cast<std::size_t>(r.key.task)];
  if (task.node != node) return;
  if (r.preparing) {
    // Pull progress: an event each time it moves, none for a repeated report.
    if (task.state == TaskState::kAssigned && r.message != task.preparing) {
      task.preparing = r.message;
      Emit("TaskPreparing", id.value(), node, "task " + task.name + ": " + r.message);
    }
    return;
  }
  if (!r.exited && task.state == TaskState::kAssigned) {
    task.state = TaskState::kRunning;
    const bool all = std::all_of(record.tasks.begin(), record.tasks.end(), [](const TaskRecord& t) { return t.state != TaskState::kAssigned; });
    if (all && record.running_ms == 0) {
      record.running_ms = NowMs();
      ++stats_.jobs_started;
      if (record.attempt == 1) metrics_->submit_to_running.Observe(static_cast<double>(record.running_ms - record.submit_ms) / 1000.0);
      // The job record is not rewritten for this: the run is on disk already,
      // and after a restart the agents report their tasks running again
      // within a heartbeat (the event is kept, as every event is).
      Emit("JobRunning", id.value(), "", "all " + std::to_string(record.tasks.size()) + " tasks running");
    }
    return;
  }
  if (!r.exited && task.state == TaskState::kRunning && r.checkpoint_age_ms >= 0) RecordCheckpoint(id, NowMs() - r.checkpoint_age_ms);
  if (!r.exited && task.state == TaskState::kRunning && r.progress_age_ms >= 0) {
    const Seconds timeout = state_->job(id).progress_timeout;
    if (timeout > 0 && r.progress_age_ms >= timeout * 1000) {
      return DeclareHung(id, "task " + task.name + " on " + node + " showed no progress for " + std::to_string(r.progress_age_ms / 1000) +
                                 "s (it did not touch TESSERA_PROGRESS_FILE; hangDetection.progressTimeout is " + std::to_string(timeout) + "s)");
    }
  }
  if (!r.exited || task.state == TaskState::kExited) return;
  task.state = TaskState::kExited;
  task.exit_code = r.exit_code;
  task.message = r.message;
  if (r.lost) return RequeueRun(id, "task " + task.name + " on " + node + " was lost: " + r.message);
  if (r.exit_code != 0) {
    std::string why = "task " + task.name + " on " + node + " exited with code " + std::to_string(r.exit_code);
    if (!r.message.empty()) why += ": " + r.message;
    return FailRun(id, why);
  }
  const bool all_done = std::all_of(record.tasks.begin(), record.tasks.end(), [](const TaskRecord& t) {
    return t.state == TaskState::kExited && t.exit_code == 0;
  });
  if (all_done) return EndRun(id, model::JobState::kSucceeded, "all tasks exited with code 0");
  PersistJob(id);
}

void ControlPlane::WaitAssignments(const std::string& name, std::int64_t after, std::chrono::milliseconds wait, Done<std::string> done) {
  std::lock_guard lock(mu_);
  EnsureState();
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return done(NotFound("node " + name + " is not registered; register first"));
  if (it->second.revision != after || wait.count() == 0) return done(AssignmentsFor(it->second));
  // One poll per node: a newer one replaces an older (the agent reconnected).
  if (auto old = node_waiters_.find(name); old != node_waiters_.end()) old->second.done(AssignmentsFor(it->second));
  node_waiters_[name] = {after, std::chrono::steady_clock::now() + wait, std::move(done)};
}

Result<AppendedLog> ControlPlane::AppendLogs(const LogAppend& chunk) {
  std::string task_name;
  {
    std::lock_guard lock(mu_);
    const JobRecord* found = FindRecord(chunk.job);
    if (found == nullptr) return NoJob(chunk.job);
    const JobRecord& record = *found;
    // Logs of the current run and the one before it (stopped, perhaps still
    // checkpointing); a late chunk of an older run is dropped.
    // (A retired run keeps its attempt number until the next placement, with no tasks of its own.)
    const std::vector<TaskRecord>* tasks = chunk.attempt == record.attempt && !record.tasks.empty() ? &record.tasks
                                           : chunk.attempt == record.previous_attempt             ? &record.previous_tasks
                                                                                                  : nullptr;
    if (tasks == nullptr || chunk.task >= static_cast<std::int64_t>(tasks->size())) return AppendedLog{};
    const TaskRecord& t = (*tasks)[static_cast<std::size_t>(chunk.task)];
    if (t.node != chunk.node) {
      return PermissionDenied("task " + t.name + " of job " + std::to_string(chunk.job) + " does not run on node " + chunk.node);
    }
    task_name = t.name;
  }
  const std::filesystem::path dir = std::filesystem::path(options_.log_dir) / std::to_string(chunk.job);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::filesystem::path path = dir / (task_name + "." + std::to_string(chunk.attempt) + (chunk.stderr_stream ? ".stderr" : ".stdout"));
  AppendedLog appended;
  appended.size = std::filesystem::exists(path, ec) ? static_cast<std::int64_t>(std::filesystem::file_size(path, ec)) : 0;
  const std::int64_t length = static_cast<std::int64_t>(chunk.data.size());
  // Chunks carry their offset, so a chunk sent twice (a retry) is written once.
  if (chunk.offset <= appended.size && chunk.offset + length > appended.size) {
    std::ofstream out(path, std::ios::binary | std::ios::app);
    const std::size_t skip = static_cast<std::size_t>(appended.size - chunk.offset);
    out.write(chunk.data.data() + skip, static_cast<std::streamsize>(chunk.data.size() - skip));
    appended.accepted = length - static_cast<std::int64_t>(skip);
    appended.size += appended.accepted;
  } else if (chunk.offset > appended.size) {
    // The agent sends again from `size` (a new leader whose log directory
    // lacks what the old one received).
    appended.past_end = true;
  }
  return appended;
}

json ControlPlane::ListNodes(bool with_gpus) {
  std::lock_guard lock(mu_);
  EnsureState();
  json nodes = json::array();
  for (const std::string& name : node_order_) nodes.push_back(NodeJson(nodes_.at(name), with_gpus));
  return {{"nodes", nodes}};
}

Result<json> ControlPlane::GetNode(const std::string& name) {
  std::lock_guard lock(mu_);
  EnsureState();
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return NotFound("no node " + name);
  return NodeJson(it->second);
}

void ControlPlane::SetCordon(const std::string& name, bool cordoned, Done<json> done) {
  std::lock_guard lock(mu_);
  EnsureState();
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return done(NotFound("no node " + name));
  NodeRecord& node = it->second;
  if (node.cordoned != cordoned) {
    node.cordoned = cordoned;
    if (node.state == NodeState::kReady) state_.SetSchedulable(*state_->cluster().FindNode(name), !cordoned);
    Emit(cordoned ? "NodeCordoned" : "NodeUncordoned", -1, name, cordoned ? "no new work will be placed here" : "open for new work");
    PersistNode(node);
  }
  Commit([this, name, done = std::move(done)]() {
    RequestCycle();
    done(NodeJson(nodes_.at(name)));
  });
}

void ControlPlane::DrainNode(const std::string& name, Done<json> done) {
  std::lock_guard lock(mu_);
  EnsureState();
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return done(NotFound("no node " + name));
  NodeRecord& node = it->second;
  if (!node.cordoned) {
    node.cordoned = true;
    if (node.state == NodeState::kReady) state_.SetSchedulable(*state_->cluster().FindNode(name), false);
    Emit("NodeCordoned", -1, name, "no new work will be placed here");
    PersistNode(node);
  }
  const std::vector<model::JobId> running = state_->JobsOnNode(*state_->cluster().FindNode(name));
  for (const model::JobId id : running) RequeueRun(id, "node " + name + " is being drained");
  Emit("NodeDrained", -1, name, std::to_string(running.size()) + " runs stopped and requeued");
  Commit([this, name, done = std::move(done)]() {
    RequestCycle();
    done(NodeJson(nodes_.at(name)));
  });
}

void ControlPlane::MarkLost(NodeRecord& node) {
  const std::string& name = node.inventory.name;
  node.state = NodeState::kLost;
  state_.SetSchedulable(*state_->cluster().FindNode(name), false);
  const std::vector<model::JobId> running = state_->JobsOnNode(*state_->cluster().FindNode(name));
  Emit("NodeLost", -1, name, "no heartbeat for " + std::to_string(options_.heartbeat_timeout.count() / 1000.0).substr(0, 4) +
                                 " s; " + std::to_string(running.size()) + " runs requeued");
  // A gang is requeued whole: its tasks on healthy nodes are stopped too.
  for (const model::JobId id : running) RequeueRun(id, "node " + name + " was lost");
  PersistNode(node);
}

}  // namespace tessera::controlplane
