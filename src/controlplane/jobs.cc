// Job operations of the control plane: submit, list, get, cancel, logs,
// events; and the ends of a run (success, failure, requeue).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>

#include "api/json_reader.h"
#include "controlplane/control_plane.h"
#include "controlplane/lost_work.h"
#include "spec/job_yaml.h"

namespace tessera::controlplane {

using nlohmann::json;

namespace {

constexpr std::size_t kMaxLogRead = 1 << 20;

bool StateMatches(JobStateFilter filter, model::JobState state, std::string_view shown) {
  const bool active = state == model::JobState::kPending || state == model::JobState::kRunning;
  switch (filter) {
    case JobStateFilter::kAny: return true;
    case JobStateFilter::kActive: return active;
    case JobStateFilter::kEnded: return !active;
    case JobStateFilter::kPending: return shown == "pending";
    case JobStateFilter::kStarting: return shown == "starting";
    case JobStateFilter::kRunning: return shown == "running";
    case JobStateFilter::kSucceeded: return shown == "succeeded";
    case JobStateFilter::kFailed: return shown == "failed";
    case JobStateFilter::kCancelled: return shown == "cancelled";
  }
  return false;
}

json EventsAnswer(const std::vector<Event>& events, std::int64_t revision) {
  json list = json::array();
  for (const Event& e : events) list.push_back(ToJson(e));
  return {{"events", std::move(list)}, {"revision", revision}};
}

}  // namespace

void ControlPlane::SubmitJobs(const auth::Caller& caller, Submission submission, Done<std::vector<AcceptedJob>> done) {
  const std::string& user = caller.user;
  std::lock_guard lock(mu_);
  EnsureState();
  // A one-job submission is stored as sent; several are stored one document each.
  std::vector<std::string> documents;
  const bool single = submission.documents.size() == 1;
  if (single) documents.push_back(submission.text);
  // Before any node has registered nothing can be judged infeasible; jobs wait.
  const bool judge = !nodes_.empty();
  const auto parse = [&](const std::vector<spec::YamlValue>& docs) {
    return spec::ParseJobDocuments(docs, "body", state_->cluster(), state_->queues(),
                                   {.check_feasible = judge, .documents = single ? nullptr : &documents});
  };
  Result<std::vector<model::Job>> jobs = parse(submission.documents);
  if (!jobs.ok() && !submission.documents.empty() && submission.documents.front().mark().is_null()) {
    // Read as JSON, without positions: read it as YAML for an error that names the line.
    Result<std::vector<spec::YamlValue>> located = spec::LoadJobDocuments(submission.text, "body", /*positions=*/true);
    if (located.ok()) jobs = parse(*located);
  }
  if (!jobs.ok()) {
    // A name in the submission that matches nothing (a queue) is its fault: infeasible, not "not found".
    const Status& s = jobs.status();
    return done(s.code() == StatusCode::kNotFound ? Infeasible(s.message()) : s);
  }
  for (const model::Job& job : *jobs) {
    for (std::size_t g = 0; g < job.groups.size(); ++g) {
      if (job.groups[g].command.empty() && !job.groups[g].container.enabled()) {
        return done(InvalidArgument("job " + job.name + ": spec.tasks[" + std::to_string(g) +
                                    "].command: required: the command each task runs (or an image whose entrypoint it runs)"));
      }
    }
  }
  for (const model::Job& job : *jobs) {
    const std::string queue = QueuePath(job.queue);
    if (!QueueRule(queue, &model::QueueSpec::require_image)) continue;
    for (std::size_t g = 0; g < job.groups.size(); ++g) {
      if (!job.groups[g].container.enabled()) {
        return done(InvalidArgument("job " + job.name + ": spec.tasks[" + std::to_string(g) + "].image: queue " + queue +
                                    " runs tasks only from images (its requireImage); name the image this task runs from"));
      }
    }
  }
  for (const model::Job& job : *jobs) {
    if (const std::string queue = QueuePath(job.queue); !QueueMember(caller, queue)) {
      return done(PermissionDenied(user + " is not a member of queue " + queue + " (its admins add members: docs/security.md)"));
    }
  }
  if (const std::int64_t most = options_.access.max_pending_per_user; most > 0) {
    std::int64_t waiting = 0;
    for (const model::JobId id : state_->jobs().pending()) waiting += records_.at(id).user == user ? 1 : 0;
    if (waiting + static_cast<std::int64_t>(jobs->size()) > most) {
      return done(ResourceExhausted(user + " has " + std::to_string(waiting) + " jobs waiting; at most " + std::to_string(most) +
                                        " may wait per user",
                                    /*retry_after_s=*/10));
    }
  }
  const std::int64_t now = NowMs();
  std::vector<AcceptedJob> accepted;
  for (std::size_t i = 0; i < jobs->size(); ++i) {
    model::Job& job = (*jobs)[i];
    StartInSubmitDir(job, submission.submit_dir);
    const std::string queue = QueuePath(job.queue);
    job.user = user;
    const model::JobId id = state_.Submit(std::move(job), NowSeconds());
    JobRecord record;
    record.user = user;
    record.submit_dir = submission.submit_dir;
    record.submit_ms = now;
    record.queue = queue;
    record.spec = documents[i];
    records_.Add(id, std::move(record));
    writes_.push_back(store::Mutation::Put(store::Collection::kJobSpecs, store::NumericKey(id.value()), documents[i]));
    PersistJob(id);
    Emit("JobSubmitted", id.value(), "", "submitted by " + user + " to queue " + queue);
    metrics_->submitted.Increment();
    accepted.push_back({id.value(), state_->job(id).name});
  }
  Commit([this, accepted = std::move(accepted), done = std::move(done)]() {
    RequestCycle();
    done(accepted);
  });
}

Result<json> ControlPlane::ListJobs(const auth::Caller& caller, const JobQuery& query) {
  std::lock_guard lock(mu_);
  EnsureState();
  json jobs = json::array();
  const auto matches = [&](const model::Job& job) {
    const JobRecord& record = records_.at(job.id);
    const std::string_view shown = job.is_array_parent ? ArrayApiState(job) : ApiState(job.state, record.running_ms != 0);
    if (!StateMatches(query.state, job.state, shown)) return false;
    if (!query.queue.empty() && record.queue != query.queue && !record.queue.starts_with(query.queue + "/")) return false;
    if (!query.user.empty() && record.user != query.user) return false;
    if (!query.name.empty() && job.name != query.name) return false;
    if (!SeesJob(caller, job.id)) return false;
    const bool active = job.state == model::JobState::kPending || job.state == model::JobState::kRunning;
    return query.ended_after_ms < 0 || (!active && record.end_ms >= query.ended_after_ms);
  };
  const auto add_elements = [&](model::JobId parent) {
    std::vector<model::JobId> elements = ElementsOf(parent);
    if (query.newest_first) std::reverse(elements.begin(), elements.end());
    for (const model::JobId element : elements) {
      if (jobs.size() < query.limit && matches(state_->job(element))) jobs.push_back(JobJson(element, false));
    }
  };
  if (query.array) {
    const JobRecord* record = FindRecord(*query.array);
    if (record == nullptr) return NoJob(*query.array);
    const model::JobId parent(static_cast<std::int32_t>(*query.array));
    if (!state_->job(parent).is_array_parent) return InvalidArgument("array: job " + std::to_string(*query.array) + " is not an array");
    add_elements(parent);
    return json{{"jobs", jobs}, {"revision", events_.last_revision()}};
  }
  const auto& all = state_->jobs().all();
  for (std::size_t i = 0; i < all.size() && jobs.size() < query.limit; ++i) {
    const model::Job& job = query.newest_first ? all[all.size() - 1 - i] : all[i];
    // An array is one job; its elements follow it only when asked for.
    if (job.is_array_element() || !matches(job)) continue;
    jobs.push_back(JobJson(job.id, false));
    if (query.expand && job.is_array_parent) add_elements(job.id);
  }
  return json{{"jobs", jobs}, {"revision", events_.last_revision()}};
}

json ControlPlane::Accounting(const auth::Caller& caller, const AccountingQuery& query) {
  const std::string by = query.by_user ? "user" : "queue";
  struct Sum {
    std::int64_t jobs = 0;
    double held = 0, idle = 0;
  };
  std::map<std::string, Sum> sums;
  std::lock_guard lock(mu_);
  std::set<model::JobId> arrays;  // counted once, however many elements ran
  for (const JobRecord& record : records_.values()) {
    // Jobs that held GPUs and were still running at `since` or later.
    if (record.gpu_seconds == 0 || (record.end_ms != 0 && record.end_ms < query.since_ms)) continue;
    if (!SeesWorkOf(caller, record.user, record.queue)) continue;
    Sum& sum = sums[query.by_user ? record.user : record.queue];
    if (!record.array_parent.valid() || arrays.insert(record.array_parent).second) ++sum.jobs;
    sum.held += record.gpu_seconds;
    sum.idle += record.idle_gpu_seconds;
  }
  // Forgotten jobs count to the hour they ended.
  for (const auto& [key, usage] : forgotten_usage_) {
    if ((key.hour + 1) * kMsPerHour <= query.since_ms || !SeesWorkOf(caller, key.user, key.queue)) continue;
    Sum& sum = sums[query.by_user ? key.user : key.queue];
    sum.jobs += usage.jobs;
    sum.held += usage.gpu_seconds;
    sum.idle += usage.idle_gpu_seconds;
  }
  json rows = json::array();
  for (const auto& [key, sum] : sums) {
    rows.push_back({{by, key}, {"jobs", sum.jobs}, {"gpuHours", sum.held / 3600.0}, {"idleGpuHours", sum.idle / 3600.0}});
  }
  return {{"by", by}, {"since", query.since_ms}, {"rows", rows}};
}

Result<json> ControlPlane::GetJob(const auth::Caller& caller, const JobRef& ref) {
  std::lock_guard lock(mu_);
  EnsureState();
  const Result<NamedJob> named = Resolve(ref);
  if (!named.ok()) return named.status();
  if (!SeesJob(caller, named->exists ? named->id : named->parent)) {
    return PermissionDenied("job " + ref.Text() + " is not " + caller.user + "'s, nor in a queue " + caller.user + " administers");
  }
  if (!named->exists) {
    json j = UnstartedElementJson(*named);
    j["spec"] = records_.at(named->parent).spec;
    j["events"] = json::array();
    return j;
  }
  const model::JobId job = named->id;
  json j = JobJson(job, true);
  json events = json::array();
  EventFilter filter;
  filter.job = job.value();
  const std::vector<Event> all = events_.Since(0, filter, std::numeric_limits<std::size_t>::max());
  for (std::size_t i = all.size() > 1000 ? all.size() - 1000 : 0; i < all.size(); ++i) events.push_back(ToJson(all[i]));
  j["events"] = events;
  return j;
}

void ControlPlane::CancelJob(const auth::Caller& caller, const JobRef& ref, Done<json> done) {
  std::lock_guard lock(mu_);
  EnsureState();
  const Result<NamedJob> named = ResolveManaged(caller, ref, "cancel job");
  if (!named.ok()) return done(named.status());
  const model::JobId owner = named->exists ? named->id : named->parent;
  const model::JobState state = state_->job(owner).state;
  if (state != model::JobState::kPending && state != model::JobState::kRunning) {
    return done(FailedPrecondition("job " + ref.Text() + " already ended (" + std::string(ApiState(state, false)) + ")"));
  }
  const std::string why = "cancelled by " + caller.user;
  const model::JobId job = named->id;
  if (!named->exists) {
    CancelUnstarted(*named, why + " before it started");
  } else if (state_->job(job).is_array_parent) {
    // The array ends first, so that its elements' ends no longer move it;
    // those not started never will.
    EndRun(job, model::JobState::kCancelled, why);
    for (const model::JobId element : ElementsOf(job)) {
      const model::JobState s = state_->job(element).state;
      if (s == model::JobState::kPending || s == model::JobState::kRunning) EndRun(element, model::JobState::kCancelled, why + " (its array)");
    }
  } else {
    EndRun(job, model::JobState::kCancelled, why);
  }
  Commit([this, job, done = std::move(done)]() { done(JobJson(job, false)); });
}

void ControlPlane::EndRun(model::JobId id, model::JobState end, const std::string& message) {
  JobRecord& record = records_.at(id);
  const model::JobId array = state_->job(id).array_parent;
  const model::JobState array_before = array.valid() ? state_->job(array).state : model::JobState::kPending;
  Detach(id);
  state_.Finish(id, end, NowSeconds());
  record.end_ms = NowMs();
  record.end_commit = commits_submitted_ + 1;  // the next Commit carries the writes gathered now
  if (!array.valid()) ended_.push_back(id);  // an element is forgotten with its array
  record.message = message;
  const char* type = end == model::JobState::kSucceeded ? "JobSucceeded" : end == model::JobState::kFailed ? "JobFailed" : "JobCancelled";
  Emit(type, id.value(), "", message);
  PersistJob(id);
  if (array.valid()) ArrayFollowed(array, array_before);
  RequestCycle();  // its resources are free for others
}

void ControlPlane::ReportCheckpoint(const auth::Caller& caller, const JobRef& ref, Done<json> done) {
  std::lock_guard lock(mu_);
  EnsureState();
  const Result<NamedJob> named = ResolveManaged(caller, ref, "report a checkpoint of job");
  if (!named.ok()) return done(named.status());
  if (!named->exists || state_->job(named->id).is_array_parent || state_->job(named->id).state != model::JobState::kRunning ||
      records_.at(named->id).running_ms == 0) {
    return done(FailedPrecondition("job " + ref.Text() + " has no running run to have checkpointed"));
  }
  const model::JobId id = named->id;
  RecordCheckpoint(id, NowMs());
  Emit("CheckpointReported", id.value(), "", "reported by " + caller.user);
  Commit([answer = json{{"id", id.value()}, {"lastCheckpointTime", records_.at(id).checkpoint_ms}}, done = std::move(done)]() { done(answer); });
}

void ControlPlane::RecordCheckpoint(model::JobId id, std::int64_t at_ms) {
  JobRecord& record = records_.at(id);
  // The core counts seconds; a checkpoint seen again a heartbeat later (its
  // age measured anew) is no news.
  if (at_ms / 1000 <= record.checkpoint_ms / 1000) return;
  record.checkpoint_ms = at_ms;
  state_.Checkpointed(id, at_ms / 1000);
  PersistJob(id);
}

void ControlPlane::AccountLostWork(model::JobId id, prometheus::Counter& reason) {
  JobRecord& record = records_.at(id);
  const double lost = LostGpuSeconds(record, state_->job(id).checkpoint_interval, NowMs());
  record.lost_gpu_seconds += lost;
  reason.Increment(lost);
}

void ControlPlane::RetireRun(JobRecord& record) {
  record.previous_tasks = std::move(record.tasks);
  record.previous_attempt = record.attempt;
  record.tasks.clear();
  record.running_ms = 0;
}

void ControlPlane::FailRun(model::JobId id, const std::string& message) {
  AccountLostWork(id, metrics_->lost_to_failure);
  const model::Job& job = state_->job(id);
  if (job.restarts >= job.max_restarts) return EndRun(id, model::JobState::kFailed, message);
  Detach(id);
  // The core counts whole seconds and the loop compares floored ones, so the
  // requeue time is rounded up: a 2 s backoff then waits 2-3 s, never 1-2.
  state_.Requeue(id, (NowMs() + 999) / 1000);
  JobRecord& record = records_.at(id);
  RetireRun(record);
  record.requeue_reason = message + "; restart " + std::to_string(job.restarts) + " of " + std::to_string(job.max_restarts);
  record.message = record.requeue_reason;
  if (job.not_before > NowSeconds()) record.message += ", in " + std::to_string(job.not_before - NowSeconds()) + "s";
  Emit("JobRequeued", id.value(), "", record.message);
  PersistJob(id);
  RequestCycle();
}

void ControlPlane::DeclareHung(model::JobId id, const std::string& why) {
  JobRecord& record = records_.at(id);
  if (record.hung_attempt == record.attempt) return;
  record.hung_attempt = record.attempt;
  const bool restart = state_->job(id).restart_when_hung;
  Emit("JobHung", id.value(), "", why + (restart ? "; stopping it" : "; reported only (hangDetection.action: report)"));
  if (restart) return FailRun(id, "hung: " + why);
  record.message = "hung: " + why;
  PersistJob(id);
}

void ControlPlane::RequeueRun(model::JobId id, const std::string& message) {
  AccountLostWork(id, metrics_->lost_to_requeue);
  Detach(id);
  state_.Unbind(id, NowSeconds());
  JobRecord& record = records_.at(id);
  RetireRun(record);
  record.message = message;
  record.requeue_reason = message;
  Emit("JobRequeued", id.value(), "", message);
  PersistJob(id);
  RequestCycle();
}

Result<LogChunk> ControlPlane::ReadLogs(const auth::Caller& caller, const LogQuery& query) {
  const std::string name = query.job.Text();
  std::int64_t id = 0;
  std::string task;
  LogChunk chunk;
  {
    std::lock_guard lock(mu_);
    EnsureState();
    const Result<NamedJob> named = Resolve(query.job);
    if (!named.ok()) return named.status();
    const model::JobId owner = named->exists ? named->id : named->parent;
    if (!ManagesJob(caller, owner)) {
      return PermissionDenied(caller.user + " may not read the logs of job " + name + ", in queue " + records_.at(owner).queue);
    }
    if (!named->exists) return NotFound("job " + name + " has not started yet");
    const model::JobId job_id = named->id;
    id = job_id.value();
    const JobRecord& record = records_.at(job_id);
    const model::Job& job = state_->job(job_id);
    if (job.is_array_parent) {
      return InvalidArgument("job " + name + " is an array: its elements have the logs (tessera logs " + name + "[INDEX])");
    }
    task = query.task.empty() ? job.groups.front().name + "-0" : query.task;
    chunk.attempt = query.attempt.value_or(record.attempt);
    bool known = false;
    for (const model::TaskGroup& g : job.groups) {
      for (std::int32_t r = 0; r < g.replicas; ++r) known = known || task == g.name + "-" + std::to_string(r);
    }
    if (!known) return NotFound("job " + name + " has no task '" + task + "'");
    chunk.job_state = ApiState(job.state, record.running_ms != 0);
    if (chunk.attempt == 0) return NotFound("job " + name + " has not started yet");
  }
  const std::filesystem::path path = std::filesystem::path(options_.log_dir) / std::to_string(id) /
                                     (task + "." + std::to_string(chunk.attempt) + (query.stderr_stream ? ".stderr" : ".stdout"));
  std::ifstream in(path, std::ios::binary);
  if (in) {
    in.seekg(0, std::ios::end);
    const std::int64_t size = in.tellg();
    if (query.offset < size) {
      const std::size_t n = std::min<std::size_t>(kMaxLogRead, static_cast<std::size_t>(size - query.offset));
      chunk.data.resize(n);
      in.seekg(query.offset);
      in.read(chunk.data.data(), static_cast<std::streamsize>(n));
    }
  }
  chunk.next_offset = query.offset + static_cast<std::int64_t>(chunk.data.size());
  return chunk;
}

Result<ControlPlane::NamedJob> ControlPlane::ResolveManaged(const auth::Caller& caller, const JobRef& ref, std::string_view action) {
  Result<NamedJob> named = Resolve(ref);
  if (!named.ok()) return named;
  const model::JobId owner = named->exists ? named->id : named->parent;
  if (ManagesJob(caller, owner)) return named;
  const JobRecord& record = records_.at(owner);
  return PermissionDenied(caller.user + " may not " + std::string(action) + " " + ref.Text() + ": it is " + record.user + "'s, in queue " +
                          record.queue);
}

Result<TaskLocation> ControlPlane::LocateTask(const auth::Caller& caller, const JobRef& ref, const std::string& task) {
  const std::string name = ref.Text();
  std::lock_guard lock(mu_);
  EnsureState();
  const Result<NamedJob> named = ResolveManaged(caller, ref, "open a session in job");
  if (!named.ok()) return named.status();
  if (!named->exists) return FailedPrecondition("job " + name + " has not started yet");
  const model::Job& job = state_->job(named->id);
  if (job.is_array_parent) return InvalidArgument("job " + name + " is an array: name one of its elements (" + name + "[INDEX])");
  const JobRecord& record = records_.at(named->id);
  const std::string wanted = task.empty() ? job.groups.front().name + "-0" : task;
  for (std::size_t i = 0; i < record.tasks.size(); ++i) {
    const TaskRecord& t = record.tasks[i];
    if (t.name != wanted) continue;
    if (t.state != TaskState::kRunning) {
      return FailedPrecondition("task " + wanted + " of job " + name + " is not running (" + std::string(ToString(t.state)) + ")");
    }
    return TaskLocation{t.node, {named->id.value(), record.attempt, static_cast<std::int32_t>(i)}, t.name};
  }
  for (const model::TaskGroup& g : job.groups) {
    for (std::int32_t r = 0; r < g.replicas; ++r) {
      if (wanted == g.name + "-" + std::to_string(r)) {
        return FailedPrecondition("job " + name + " is " + std::string(ApiState(job.state, record.running_ms != 0)) + ": task " + wanted +
                                  " is not running");
      }
    }
  }
  return NotFound("job " + name + " has no task '" + wanted + "'");
}

void ControlPlane::WatchEvents(const auth::Caller& caller, EventQuery query, Done<json> done) {
  EventWaiter waiter;
  waiter.since = query.since;
  waiter.filter = std::move(query.filter);
  waiter.limit = 10'000;
  if (access_enabled()) {
    // Only events of jobs the caller may see (checked under mu_, where Since runs).
    waiter.filter.job_visible = [this, caller](std::int64_t job) {
      // A forgotten job's events show to those who see every job's.
      return FindRecord(job) != nullptr ? SeesJob(caller, model::JobId(static_cast<std::int32_t>(job))) : SeesWorkOf(caller, "", "");
    };
  }
  std::lock_guard lock(mu_);
  if (waiter.since > 0 && waiter.since + 1 < events_.first_revision()) {
    return done(Status(StatusCode::kExpired, "revision " + std::to_string(waiter.since) + " is older than the event window (oldest " +
                                                 std::to_string(events_.first_revision()) + "): list again, then watch"));
  }
  std::vector<Event> ready = events_.Since(waiter.since, waiter.filter, waiter.limit);
  if (!ready.empty() || query.wait.count() == 0) return done(EventsAnswer(ready, events_.last_revision()));
  waiter.deadline = std::chrono::steady_clock::now() + query.wait;
  waiter.done = std::move(done);
  event_waiters_.push_back(std::move(waiter));
}

void ControlPlane::AnswerEventWaiters() {
  if (event_waiters_.empty()) return;
  std::vector<EventWaiter> still;
  for (EventWaiter& w : event_waiters_) {
    std::vector<Event> ready = events_.Since(w.since, w.filter, w.limit);
    if (ready.empty()) {
      still.push_back(std::move(w));
      continue;
    }
    w.done(EventsAnswer(ready, events_.last_revision()));
  }
  event_waiters_.swap(still);
}

}  // namespace tessera::controlplane
