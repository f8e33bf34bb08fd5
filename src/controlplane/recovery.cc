// Recovery: the control plane's state read back from the store after a
// restart (or a crash), one loader per collection. Jobs come back in id order
// with their current run; a run whose binding is in the store is dispatched
// again, so agents that kept its tasks running are reconciled with it instead
// of starting them twice.
//
// Every record goes through its decoder (record_codecs.h, and the event and
// token codecs). A record that fails it is damaged: recovery stops and names
// it ("jobs/abc: key: not a job id ..."), or, with --quarantine-damaged, moves
// it to the quarantine collection and starts with everything else. A check
// (`tessera server --check-store`) reads every record and writes nothing.
#include <algorithm>
#include <cctype>
#include <cstdio>

#include "api/json_reader.h"
#include "controlplane/control_plane.h"
#include "controlplane/record_codecs.h"
#include "spec/job_yaml.h"

namespace tessera::controlplane {

using nlohmann::json;

class ControlPlane::DamagedRecords {
 public:
  DamagedRecords(RecoveryMode mode, std::string store) : mode_(mode), store_(std::move(store)) {}

  // A record that could not be read. Stopping: the error that ends recovery;
  // otherwise it is noted (and, quarantining, moved aside) and recovery goes on.
  Status Found(store::Collection collection, const std::string& key, const std::string& value, const Status& why) {
    const std::string name = std::string(store::ToString(collection)) + "/" + Printable(key);
    const std::string line = name + ": " + why.message();
    if (mode_ == RecoveryMode::kStop) {
      return Status(StatusCode::kFailedPrecondition,
                    "the state store " + store_ + " holds a damaged record: " + line +
                        " (`tessera server --check-store` lists every damaged record; --quarantine-damaged sets them aside)");
    }
    lines_.push_back(line);
    if (mode_ == RecoveryMode::kQuarantine) {
      std::fprintf(stderr, "tessera server: set aside the damaged record %s\n", line.c_str());
      writes_.push_back(store::Mutation::Delete(collection, key));
      writes_.push_back(store::Mutation::Put(
          store::Collection::kQuarantine, std::string(store::ToString(collection)) + "/" + key,
          api::Dump({{"collection", store::ToString(collection)}, {"key", key}, {"value", value}, {"reason", why.message()}})));
    }
    return Status::Ok();
  }
  void Checked(std::size_t records) { checked_ += records; }

  const std::vector<std::string>& lines() const { return lines_; }
  std::size_t checked() const { return checked_; }
  std::vector<store::Mutation>& writes() { return writes_; }

 private:
  // Keys are bytes from a file: control characters print as '?'.
  static std::string Printable(std::string text) {
    for (char& c : text) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    }
    return text;
  }
  RecoveryMode mode_;
  std::string store_;
  std::vector<std::string> lines_;
  std::vector<store::Mutation> writes_;
  std::size_t checked_ = 0;
};

Status ControlPlane::Recover() {
  DamagedRecords damaged(options_.quarantine_damaged ? RecoveryMode::kQuarantine : RecoveryMode::kStop, store_.Describe());
  std::lock_guard lock(mu_);
  TESSERA_RETURN_IF_ERROR(Load(damaged));
  for (store::Mutation& m : damaged.writes()) writes_.push_back(std::move(m));
  for (const std::string& line : damaged.lines()) Emit("RecordQuarantined", -1, "", line);
  Emit("ServerRecovered", -1, "", std::to_string(records_.size()) + " jobs, " + std::to_string(nodes_.size()) + " nodes from " + store_.Describe());
  Commit(nullptr);
  commits_->Flush();
  return Status::Ok();
}

Result<StoreCheck> ControlPlane::CheckStore() {
  DamagedRecords damaged(RecoveryMode::kReport, store_.Describe());
  std::lock_guard lock(mu_);
  TESSERA_RETURN_IF_ERROR(Load(damaged));
  writes_.clear();  // a check changes nothing
  return StoreCheck{damaged.checked(), damaged.lines()};
}

Status ControlPlane::Load(DamagedRecords& damaged) {
  bool seeded = false;
  std::int64_t next_id = 0;
  TESSERA_RETURN_IF_ERROR(LoadMeta(damaged, &seeded, &next_id));
  if (step_key_.empty()) {  // a new state (or one from before step secrets)
    step_key_ = auth::RandomHex(32);
    writes_.push_back(store::Mutation::Put(store::Collection::kMeta, kStepKeyKey, step_key_));
  }
  TESSERA_RETURN_IF_ERROR(LoadQueues(damaged, seeded));
  TESSERA_RETURN_IF_ERROR(LoadNodes(damaged));
  rebuild_needed_ = true;
  EnsureState();
  TESSERA_RETURN_IF_ERROR(LoadJobs(damaged, next_id));
  TESSERA_RETURN_IF_ERROR(LoadUsage(damaged));
  TESSERA_RETURN_IF_ERROR(LoadTokens(damaged));
  TESSERA_RETURN_IF_ERROR(LoadAudit(damaged));
  TESSERA_RETURN_IF_ERROR(LoadRegistryCredentials(damaged));
  return LoadEvents(damaged);
}

Status ControlPlane::LoadMeta(DamagedRecords& damaged, bool* seeded, std::int64_t* next_id) {
  Result<std::vector<store::Entry>> meta = store_.List(store::Collection::kMeta);
  if (!meta.ok()) return meta.status();
  damaged.Checked(meta->size());
  for (const store::Entry& e : *meta) {
    if (e.key == "queues-seeded") {
      *seeded = true;
    } else if (e.key == kStepKeyKey) {
      if (e.value.size() == 64 && std::all_of(e.value.begin(), e.value.end(), [](unsigned char c) { return std::isxdigit(c); })) {
        step_key_ = e.value;
      } else {
        TESSERA_RETURN_IF_ERROR(damaged.Found(store::Collection::kMeta, e.key, e.value, InvalidArgument("value: not 64 hex digits")));
      }
    } else if (e.key == kNextJobIdKey) {
      Result<std::int64_t> id = DecodeNextJobId(e.value);
      if (id.ok()) {
        *next_id = *id;
      } else {
        TESSERA_RETURN_IF_ERROR(damaged.Found(store::Collection::kMeta, e.key, e.value, id.status()));
      }
    } else {
      TESSERA_RETURN_IF_ERROR(damaged.Found(store::Collection::kMeta, e.key, e.value, InvalidArgument("key: not a setting this server keeps")));
    }
  }
  return Status::Ok();
}

Status ControlPlane::LoadQueues(DamagedRecords& damaged, bool seeded) {
  Result<std::vector<store::Entry>> queues = store_.List(store::Collection::kQueues);
  if (!queues.ok()) return queues.status();
  damaged.Checked(queues->size());
  // The initial queues seed a new state only: a cluster whose queues were all
  // deleted keeps none after a restart.
  if (!seeded && queues->empty()) {
    PersistQueues();
    writes_.push_back(store::Mutation::Put(store::Collection::kMeta, "queues-seeded", "true"));
    return Status::Ok();
  }
  queue_specs_.clear();
  for (const store::Entry& e : *queues) {
    Result<StoredQueue> queue = DecodeQueue(e.key, e.value);
    if (!queue.ok()) {
      TESSERA_RETURN_IF_ERROR(damaged.Found(store::Collection::kQueues, e.key, e.value, queue.status()));
      continue;
    }
    queue_specs_.push_back(queue->spec);
    queue_access_[queue->spec.path] = std::move(queue->access);
  }
  return Status::Ok();
}

Status ControlPlane::LoadNodes(DamagedRecords& damaged) {
  Result<std::vector<store::Entry>> nodes = store_.List(store::Collection::kNodes);
  if (!nodes.ok()) return nodes.status();
  damaged.Checked(nodes->size());
  std::vector<std::pair<std::int64_t, std::string>> order;
  const std::int64_t now = NowMs();
  for (const store::Entry& e : *nodes) {
    Result<NodeRecord> node = DecodeNode(e.key, e.value);
    if (!node.ok()) {
      TESSERA_RETURN_IF_ERROR(damaged.Found(store::Collection::kNodes, e.key, e.value, node.status()));
      continue;
    }
    node->last_heartbeat_ms = now;  // a full timeout for the agent to come back
    order.emplace_back(node->registered_ms, e.key);
    nodes_[e.key] = std::move(*node);
  }
  std::sort(order.begin(), order.end());
  for (const auto& [when, name] : order) node_order_.push_back(name);
  return Status::Ok();
}

Status ControlPlane::LoadJobs(DamagedRecords& damaged, std::int64_t next_id) {
  Result<std::vector<store::Entry>> specs = store_.List(store::Collection::kJobSpecs);
  if (!specs.ok()) return specs.status();
  Result<std::vector<store::Entry>> jobs = store_.List(store::Collection::kJobs);
  if (!jobs.ok()) return jobs.status();
  damaged.Checked(specs->size() + jobs->size());
  std::map<std::int32_t, const store::Entry*> spec_by_id;
  for (const store::Entry& e : *specs) {
    Result<model::JobId> id = DecodeJobKey(e.key);
    if (id.ok()) {
      spec_by_id[id->value()] = &e;
      next_id = std::max<std::int64_t>(next_id, id->value() + 1);
    } else {
      TESSERA_RETURN_IF_ERROR(damaged.Found(store::Collection::kJobSpecs, e.key, e.value, id.status()));
    }
  }
  // Ids are never handed out twice: not those of forgotten jobs (the
  // high-water mark), nor those given to submissions that never reached the
  // disk (gaps below the highest stored id), nor those of damaged records.
  for (const store::Entry& e : *jobs) {
    const Result<model::JobId> id = DecodeJobKey(e.key);
    if (!id.ok()) {
      TESSERA_RETURN_IF_ERROR(damaged.Found(store::Collection::kJobs, e.key, e.value, id.status()));
      continue;
    }
    next_id = std::max<std::int64_t>(next_id, id->value() + 1);
    const auto spec_entry = spec_by_id.find(id->value());
    const store::Entry* spec = spec_entry == spec_by_id.end() ? nullptr : spec_entry->second;
    // A job and its spec are one: when either is damaged, both go aside.
    const auto damaged_pair = [&](const Status& job_why, const Status& spec_why) {
      TESSERA_RETURN_IF_ERROR(damaged.Found(store::Collection::kJobs, e.key, e.value, job_why));
      return spec == nullptr ? Status::Ok() : damaged.Found(store::Collection::kJobSpecs, spec->key, spec->value, spec_why);
    };
    Result<StoredJob> stored = DecodeJob(e.key, e.value);
    if (!stored.ok()) {
      TESSERA_RETURN_IF_ERROR(damaged_pair(stored.status(), InvalidArgument("its job record is damaged")));
      continue;
    }
    if (stored->array_parent.valid()) {  // an element: its spec is its array's, restored before it
      if (Status restored = RestoreElement(std::move(*stored)); !restored.ok()) {
        TESSERA_RETURN_IF_ERROR(damaged.Found(store::Collection::kJobs, e.key, e.value, restored));
      }
      continue;
    }
    if (spec == nullptr) continue;  // its submission never reached the disk
    Result<std::vector<model::Job>> parsed = spec::ParseJobYaml(spec->value, "spec", state_->cluster(), state_->queues(), {.check_feasible = false, .reload = true});
    if (parsed.ok() && parsed->size() != 1) parsed = InvalidArgument("spec: holds " + std::to_string(parsed->size()) + " jobs, not one");
    if (!parsed.ok()) {
      TESSERA_RETURN_IF_ERROR(damaged_pair(InvalidArgument("its spec is damaged"), parsed.status()));
      continue;
    }
    if (Status restored = RestoreJob(std::move(*stored), std::move(parsed->front()), spec->value); !restored.ok()) {
      TESSERA_RETURN_IF_ERROR(damaged_pair(restored, InvalidArgument("its job record is damaged")));
    }
  }
  state_.SkipIds(model::JobId(static_cast<std::int32_t>(next_id)));
  records_.SkipTo(model::JobId(static_cast<std::int32_t>(next_id)));
  // Ended jobs, oldest end first: the order retention forgets them in.
  std::vector<model::JobId> ended;
  for (const model::Job& job : state_->jobs().all()) {
    // Elements are forgotten with their array, never on their own.
    const bool ended_job = job.state != model::JobState::kPending && job.state != model::JobState::kRunning;
    if (ended_job && !job.is_array_element()) ended.push_back(job.id);
  }
  std::stable_sort(ended.begin(), ended.end(), [&](model::JobId a, model::JobId b) { return records_.at(a).end_ms < records_.at(b).end_ms; });
  ended_.assign(ended.begin(), ended.end());
  return Status::Ok();
}

Status ControlPlane::RestoreElement(StoredJob stored) {
  const model::JobId parent = stored.array_parent;
  if (!state_->jobs().contains(parent) || !state_->job(parent).is_array_parent) {
    return InvalidArgument("arrayJobId: no array job " + std::to_string(parent.value()) + " in the store");
  }
  const model::JobArray& array = *state_->job(parent).array;
  const std::int64_t position = std::int64_t{stored.id.value()} - parent.value() - 1;
  if (position >= array.size() || array.indices[static_cast<std::size_t>(position)] != stored.array_index) {
    return InvalidArgument("arrayIndex: " + std::to_string(stored.array_index) + " is not the index of job " +
                           std::to_string(stored.id.value()) + " in array " + std::to_string(parent.value()));
  }
  model::Job element = model::ArrayElement(state_->job(parent), static_cast<std::int32_t>(position));
  stored.record.array_parent = parent;
  return RestoreJob(std::move(stored), std::move(element), "");
}

Status ControlPlane::RestoreJob(StoredJob stored, model::Job job, const std::string& spec) {
  JobRecord& record = stored.record;
  job.id = stored.id;
  job.state = stored.state;
  job.restarts = stored.restarts;
  job.attained_gpu_seconds = stored.attained_gpu_seconds;
  job.not_before = stored.restart_after_ms / 1000;
  job.user = record.user;
  StartInSubmitDir(job, record.submit_dir);
  job.submit_time = record.submit_ms / 1000;
  job.start_time = record.scheduled_ms / 1000;
  job.last_checkpoint = std::max(job.start_time, record.checkpoint_ms / 1000);
  record.spec = spec;
  if (job.state == model::JobState::kRunning) {
    // Its placements must name this cluster's nodes and GPUs, and fit beside
    // the runs restored before it.
    const model::Cluster& cluster = state_->cluster();
    std::map<std::int32_t, std::pair<std::int32_t, std::int64_t>> taken;  // by GPU: milli and memory of this run
    for (std::size_t i = 0; i < record.tasks.size(); ++i) {
      const TaskRecord& task = record.tasks[i];
      const std::string path = "tasks[" + std::to_string(i) + "]";
      const Result<model::NodeId> node = cluster.FindNode(task.node);
      if (!node.ok()) return InvalidArgument(path + ".node: no node '" + task.node + "' in the store");
      if (task.group >= static_cast<std::int32_t>(job.groups.size())) {
        return InvalidArgument(path + ".group: the spec has " + std::to_string(job.groups.size()) + " task groups");
      }
      model::TaskPlacement placement;
      placement.group = task.group;
      placement.index = task.index;
      placement.node = *node;
      for (const std::int32_t g : task.gpus) {
        if (g >= cluster.node(*node).gpu_count) return InvalidArgument(path + ".gpus: node " + task.node + " has no GPU " + std::to_string(g));
        const model::GpuId gpu = cluster.node(*node).gpu(g);
        auto& [milli, memory] = taken[gpu.value()];
        milli += task.gpu_milli;
        memory += task.gpu_memory;
        if (task.gpu_milli < 1 || milli > cluster.gpu(gpu).free_milli() || memory > cluster.gpu(gpu).free_memory()) {
          return InvalidArgument(path + ".gpus: GPU " + std::to_string(g) + " of " + task.node + " cannot hold this run beside the others");
        }
        model::GpuShare share{gpu, task.gpu_milli, task.gpu_memory, job.groups[static_cast<std::size_t>(task.group)].request.sharing};
        if (!task.mig_device.empty()) {
          // The device by its UUID, in the order the node's agent listed them.
          const std::vector<api::MigDeviceInventory>& devices = nodes_.at(task.node).inventory.gpus[static_cast<std::size_t>(g)].mig;
          const auto it = std::find_if(devices.begin(), devices.end(), [&](const auto& d) { return d.uuid == task.mig_device; });
          if (it == devices.end() || cluster.gpu(gpu).mig[static_cast<std::size_t>(it - devices.begin())].used) {
            return InvalidArgument(path + ".migDevice: GPU " + std::to_string(g) + " of " + task.node + " has no free MIG device " + task.mig_device);
          }
          share.mig = static_cast<std::int32_t>(it - devices.begin());
        }
        placement.gpus.push_back(share);
      }
      placement.cpu_milli = task.cpu_milli;
      placement.memory = task.memory;
      job.placements.push_back(std::move(placement));
    }
    // Its binding is on disk, so agents may (and may already) run it.
    record.dispatched = true;
  } else {
    record.tasks.clear();
    record.master_port = 0;
  }
  if (job.state == model::JobState::kSucceeded && !job.is_array_parent && record.end_ms > 0) {
    // What the learned job order knew of it before the restart: its runs
    // before the last (TimeRun of an ended job), and the last by the clock.
    const Seconds last_run = (record.end_ms - record.scheduled_ms) / 1000;
    state_.Learn(job.queue, job.MinGpuMilli(), static_cast<Seconds>(sched::TimeRun(job, 0)) + last_run);
  }
  const model::JobId restored = state_.Restore(std::move(job));
  const JobRecord& added = records_.Add(restored, std::move(record));
  if (added.dispatched) {
    ports_.Hold(added.tasks.front().node, added.master_port);
    for (const TaskRecord& t : added.tasks) node_jobs_[t.node].insert(restored.value());
  }
  return Status::Ok();
}

Status ControlPlane::LoadUsage(DamagedRecords& damaged) {
  Result<std::vector<store::Entry>> usage = store_.List(store::Collection::kUsage);
  if (!usage.ok()) return usage.status();
  damaged.Checked(usage->size());
  for (const store::Entry& e : *usage) {
    Result<std::pair<UsageKey, Usage>> u = DecodeUsage(e.key, e.value);
    if (!u.ok()) {
      TESSERA_RETURN_IF_ERROR(damaged.Found(store::Collection::kUsage, e.key, e.value, u.status()));
      continue;
    }
    forgotten_usage_[u->first] = u->second;
  }
  return Status::Ok();
}

Status ControlPlane::LoadTokens(DamagedRecords& damaged) {
  Result<std::vector<store::Entry>> tokens = store_.List(store::Collection::kTokens);
  if (!tokens.ok()) return tokens.status();
  damaged.Checked(tokens->size());
  std::unique_lock tokens_lock(tokens_mu_);
  for (const store::Entry& e : *tokens) {
    Result<auth::TokenRecord> record = DecodeToken(e.key, e.value);
    if (!record.ok()) {
      TESSERA_RETURN_IF_ERROR(damaged.Found(store::Collection::kTokens, e.key, e.value, record.status()));
      continue;
    }
    tokens_[record->id] = std::move(*record);
  }
  return Status::Ok();
}

Status ControlPlane::LoadAudit(DamagedRecords& damaged) {
  Result<std::vector<store::Entry>> audit = store_.List(store::Collection::kAudit);
  if (!audit.ok()) return audit.status();
  damaged.Checked(audit->size());
  std::lock_guard audit_lock(audit_mu_);
  for (const store::Entry& e : *audit) {
    Result<json> j = DecodeAudit(e.key, e.value);
    if (!j.ok()) {
      TESSERA_RETURN_IF_ERROR(damaged.Found(store::Collection::kAudit, e.key, e.value, j.status()));
      continue;
    }
    audit_revision_ = std::max(audit_revision_, (*j)["revision"].get<std::int64_t>());
    audit_.push_back(std::move(*j));
  }
  return Status::Ok();
}

Status ControlPlane::LoadEvents(DamagedRecords& damaged) {
  Result<std::vector<store::Entry>> events = store_.List(store::Collection::kEvents);
  if (!events.ok()) return events.status();
  damaged.Checked(events->size());
  for (const store::Entry& e : *events) {
    Result<Event> event = DecodeEvent(e.key, e.value);
    if (!event.ok()) {
      TESSERA_RETURN_IF_ERROR(damaged.Found(store::Collection::kEvents, e.key, e.value, event.status()));
      continue;
    }
    events_.Restore(std::move(*event));
  }
  return Status::Ok();
}

Status ControlPlane::LoadRegistryCredentials(DamagedRecords& damaged) {
  Result<std::vector<store::Entry>> logins = store_.List(store::Collection::kRegistryCredentials);
  if (!logins.ok()) return logins.status();
  damaged.Checked(logins->size());
  if (logins->empty()) return Status::Ok();  // no key file is needed, nor made
  Result<const auth::SecretBox*> box = Secrets(/*create=*/false);
  for (const store::Entry& e : *logins) {
    Result<RegistryCredential> login =
        box.ok() ? DecodeRegistryCredential(e.key, e.value, **box) : Result<RegistryCredential>(InvalidArgument("sealedPassword: " + box.status().message()));
    if (!login.ok()) {
      TESSERA_RETURN_IF_ERROR(damaged.Found(store::Collection::kRegistryCredentials, e.key, e.value, login.status()));
      continue;
    }
    if (!state_->queues().Find(login->queue).valid()) {
      TESSERA_RETURN_IF_ERROR(damaged.Found(store::Collection::kRegistryCredentials, e.key, e.value,
                                            InvalidArgument("queue: no queue " + login->queue + " in the store")));
      continue;
    }
    registry_credentials_[{login->queue, login->registry}] = std::move(*login);
  }
  return Status::Ok();
}

}  // namespace tessera::controlplane
