// Recovery: the control plane's state read back from the store after a
// restart (or a crash). Jobs come back in id order with their current run;
// a run whose binding is in the store is dispatched again, so agents that kept
// its tasks running are reconciled with it instead of starting them twice.
#include <algorithm>
#include <filesystem>

#include "controlplane/control_plane.h"
#include "spec/job_yaml.h"

namespace tessera::controlplane {

using nlohmann::json;


Status ControlPlane::Recover() {
  std::lock_guard lock(mu_);
  Result<std::vector<store::Entry>> queues = store_.List(store::Collection::kQueues);
  if (!queues.ok()) return queues.status();
  Result<std::vector<store::Entry>> meta = store_.List(store::Collection::kMeta);
  if (!meta.ok()) return meta.status();
  // The initial queues seed a new state only: a cluster whose queues were all
  // deleted keeps none after a restart.
  const bool seeded = !queues->empty() ||
                      std::any_of(meta->begin(), meta->end(), [](const store::Entry& e) { return e.key == "queues-seeded"; });
  if (seeded) {
    queue_specs_.clear();
    for (const store::Entry& e : *queues) {
      const json j = json::parse(e.value);
      queue_specs_.push_back({j.at("name").get<std::string>(), j.at("guaranteedMilli").get<std::int64_t>(),
                              j.at("limitMilli").get<std::int64_t>(), j.at("weight").get<double>(),
                              j.value("userLimitMilli", model::kUnlimited)});
      queue_access_[queue_specs_.back().path] = {j.value("admins", std::vector<std::string>()), j.value("members", std::vector<std::string>())};
    }
  } else {
    PersistQueues();
    writes_.push_back(store::Mutation::Put(store::Collection::kMeta, "queues-seeded", "true"));
  }

  Result<std::vector<store::Entry>> nodes = store_.List(store::Collection::kNodes);
  if (!nodes.ok()) return nodes.status();
  std::vector<std::pair<std::int64_t, std::string>> order;
  const std::int64_t now = NowMs();
  for (const store::Entry& e : *nodes) {
    const json j = json::parse(e.value);
    Result<api::NodeInventory> inv = api::NodeInventoryFromJson(j.at("inventory"));
    if (!inv.ok()) return Internal("stored node " + e.key + ": " + inv.status().message());
    NodeRecord node;
    node.inventory = std::move(*inv);
    node.cordoned = j.value("cordoned", false);
    node.state = j.value("state", std::string("ready")) == "lost" ? NodeState::kLost : NodeState::kReady;
    node.registered_ms = j.value("registered", std::int64_t{0});
    const json unhealthy = j.value("unhealthyGpus", json::object());
    for (const auto& [index, reason] : unhealthy.items()) node.unhealthy_gpus[std::stoi(index)] = reason.get<std::string>();
    node.last_heartbeat_ms = now;  // a full timeout for the agent to come back
    order.emplace_back(node.registered_ms, e.key);
    nodes_[e.key] = std::move(node);
  }
  std::sort(order.begin(), order.end());
  for (const auto& [when, name] : order) node_order_.push_back(name);
  rebuild_needed_ = true;
  EnsureState();

  Result<std::vector<store::Entry>> specs = store_.List(store::Collection::kJobSpecs);
  Result<std::vector<store::Entry>> jobs = store_.List(store::Collection::kJobs);
  if (!specs.ok()) return specs.status();
  if (!jobs.ok()) return jobs.status();
  std::map<std::int64_t, std::string> spec_by_id;
  for (const store::Entry& e : *specs) spec_by_id[std::stoll(e.key)] = e.value;
  std::map<std::int64_t, json> job_by_id;
  for (const store::Entry& e : *jobs) job_by_id[std::stoll(e.key)] = json::parse(e.value);
  // Ids are never handed out twice: not those of forgotten jobs (the
  // high-water mark), nor those given to submissions that never reached the
  // disk (gaps below the highest stored id).
  std::int64_t next_id = 0;
  for (const store::Entry& e : *meta) {
    if (e.key == kNextJobIdKey) next_id = std::stoll(e.value);
  }
  for (const auto& [id, j] : job_by_id) {
    const auto spec = spec_by_id.find(id);
    if (spec == spec_by_id.end()) continue;  // its submission never reached the disk
    model::Job job;
    JobRecord record;
    Result<std::vector<model::Job>> parsed =
        spec::ParseJobYaml(spec->second, "stored job " + std::to_string(id), state_->cluster(), state_->queues(), {.check_feasible = false});
    if (!parsed.ok()) return Internal(parsed.status().message());
    job = std::move(parsed->front());
    job.id = model::JobId(static_cast<std::int32_t>(id));
    job.state = ModelState(j.at("state").get<std::string>());
    job.restarts = j.value("restarts", 0);
    job.attained_gpu_seconds = j.value("attainedGpuSeconds", 0.0);
    record.user = j.value("user", std::string());
    job.user = record.user;
    record.submit_dir = j.value("submitDir", std::string());
    for (model::TaskGroup& group : job.groups) {
      if (group.working_dir.empty()) group.working_dir = record.submit_dir;
    }
    record.attempt = j.value("attempt", 0);
    record.hung_attempt = j.value("hung", false) ? record.attempt : 0;
    job.not_before = j.value("restartAfter", std::int64_t{0}) / 1000;
    record.submit_ms = j.value("submitTime", std::int64_t{0});
    record.scheduled_ms = j.value("scheduledTime", std::int64_t{0});
    record.running_ms = j.value("runningTime", std::int64_t{0});
    record.end_ms = j.value("endTime", std::int64_t{0});
    record.message = j.value("message", std::string());
    record.gpu_seconds = j.value("gpuSeconds", 0.0);
    record.idle_gpu_seconds = j.value("idleGpuSeconds", 0.0);
    job.submit_time = record.submit_ms / 1000;
    job.start_time = record.scheduled_ms / 1000;
    job.last_checkpoint = job.start_time;
    record.queue = j.value("queue", std::string());
    record.spec = spec->second;
    if (job.state == model::JobState::kRunning) {
      for (const json& t : j.at("tasks")) {
        TaskRecord task;
        task.group = t.at("group").get<std::int32_t>();
        task.index = t.at("index").get<std::int32_t>();
        task.name = t.at("name").get<std::string>();
        task.node = t.at("node").get<std::string>();
        task.gpus = t.at("gpus").get<std::vector<std::int32_t>>();
        task.gpu_milli = t.at("gpuMilli").get<std::int32_t>();
        task.gpu_memory = t.at("gpuMemory").get<std::int64_t>();
        task.cpu_milli = t.at("cpuMilli").get<std::int64_t>();
        task.memory = t.at("memory").get<std::int64_t>();
        const std::string ts = t.at("state").get<std::string>();
        task.state = ts == "running" ? TaskState::kRunning : ts == "exited" ? TaskState::kExited : TaskState::kAssigned;
        task.exit_code = t.value("exitCode", 0);
        const Result<model::NodeId> node = state_->cluster().FindNode(task.node);
        if (!node.ok()) return Internal("stored job " + std::to_string(id) + " runs on unknown node " + task.node);
        model::TaskPlacement placement;
        placement.group = task.group;
        placement.index = task.index;
        placement.node = *node;
        for (const std::int32_t g : task.gpus) {
          placement.gpus.push_back({state_->cluster().node(*node).gpu(g), task.gpu_milli, task.gpu_memory,
                                    job.groups.at(static_cast<std::size_t>(task.group)).request.sharing});
        }
        placement.cpu_milli = task.cpu_milli;
        placement.memory = task.memory;
        job.placements.push_back(std::move(placement));
        record.tasks.push_back(std::move(task));
      }
      // Its binding is on disk, so agents may (and may already) run it.
      record.dispatched = true;
    }
    const model::JobId restored = state_->Restore(std::move(job));
    const JobRecord& added = records_.Add(restored, std::move(record));
    if (added.dispatched) {
      for (const TaskRecord& t : added.tasks) node_jobs_[t.node].insert(restored.value());
    }
  }
  if (!job_by_id.empty()) next_id = std::max(next_id, job_by_id.rbegin()->first + 1);
  state_->jobs().SkipIds(model::JobId(static_cast<std::int32_t>(next_id)));
  records_.SkipTo(model::JobId(static_cast<std::int32_t>(next_id)));
  // Ended jobs, oldest end first: the order retention forgets them in.
  std::vector<model::JobId> ended;
  for (const model::Job& job : state_->jobs().all()) {
    if (job.state != model::JobState::kPending && job.state != model::JobState::kRunning) ended.push_back(job.id);
  }
  std::stable_sort(ended.begin(), ended.end(), [&](model::JobId a, model::JobId b) { return records_.at(a).end_ms < records_.at(b).end_ms; });
  ended_.assign(ended.begin(), ended.end());

  Result<std::vector<store::Entry>> usage = store_.List(store::Collection::kUsage);
  if (!usage.ok()) return usage.status();
  for (const store::Entry& e : *usage) {
    const json u = json::parse(e.value);
    forgotten_usage_[{u.at("queue").get<std::string>(), u.at("user").get<std::string>(), u.at("hour").get<std::int64_t>()}] = {
        u.at("jobs").get<std::int64_t>(), u.at("gpuSeconds").get<double>(), u.at("idleGpuSeconds").get<double>()};
  }

  Result<std::vector<store::Entry>> tokens = store_.List(store::Collection::kTokens);
  if (!tokens.ok()) return tokens.status();
  {
    std::unique_lock tokens_lock(tokens_mu_);
    for (const store::Entry& e : *tokens) {
      Result<auth::TokenRecord> record = auth::TokenFromJson(json::parse(e.value));
      if (!record.ok()) return Internal("the state store holds a damaged token " + e.key + ": " + record.status().message());
      tokens_[record->id] = *record;
    }
  }
  Result<std::vector<store::Entry>> audit = store_.List(store::Collection::kAudit);
  if (!audit.ok()) return audit.status();
  {
    std::lock_guard audit_lock(audit_mu_);
    for (const store::Entry& e : *audit) {
      audit_.push_back(json::parse(e.value));
      audit_revision_ = std::max(audit_revision_, audit_.back().value("revision", std::int64_t{0}));
    }
  }

  Result<std::vector<store::Entry>> events = store_.List(store::Collection::kEvents);
  if (!events.ok()) return events.status();
  for (const store::Entry& e : *events) events_.Restore(EventFromJson(json::parse(e.value)));
  Emit("ServerRecovered", -1, "", std::to_string(records_.size()) + " jobs, " + std::to_string(nodes_.size()) + " nodes from " + store_.Describe());
  Commit(nullptr);
  commits_->Flush();
  return Status::Ok();
}

}  // namespace tessera::controlplane
