// Job operations of the control plane: submit, list, get, cancel, logs,
// events; and the ends of a run (success, failure, requeue).
#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <limits>

#include "api/json_reader.h"
#include "controlplane/control_plane.h"
#include "controlplane/request_params.h"
#include "controlplane/responses.h"
#include "spec/job_yaml.h"

namespace tessera::controlplane {

using nlohmann::json;

namespace {

constexpr std::size_t kMaxListed = 100'000;
constexpr std::size_t kMaxLogRead = 1 << 20;

}  // namespace

void ControlPlane::SubmitJobs(const net::HttpRequest& request, Reply reply) {
  if (request.body.empty()) return reply(net::ErrorResponse(400, "empty body: send a Job document (YAML or JSON)"));
  const std::string& user = request.caller.user;
  // Like sbatch: tasks start where the user submitted from, unless the spec says otherwise.
  const std::string submit_dir = request.Header("x-tessera-workdir");
  if (!submit_dir.empty() && submit_dir.front() != '/') {
    return reply(net::ErrorResponse(400, "X-Tessera-Workdir: must be an absolute path, got '" + submit_dir + "'"));
  }
  // The YAML syntax outside the lock: it is most of a submission's cost.
  Result<std::vector<spec::YamlValue>> parsed = spec::LoadJobDocuments(request.body, "body");
  if (!parsed.ok()) {
    // A malformed JSON body reached the YAML reader (json_document.h); the
    // JSON parser names its syntax error more precisely.
    if (request.Header("content-type").find("json") != std::string::npos) {
      if (Result<json> as_json = api::ParseJsonBody(request.body); !as_json.ok()) return reply(StatusResponse(as_json.status()));
    }
    return reply(StatusResponse(parsed.status()));
  }

  std::lock_guard lock(mu_);
  EnsureState();
  // A one-job body is stored as sent; several are stored one document each.
  std::vector<std::string> documents;
  const bool single = parsed->size() == 1;
  if (single) documents.push_back(request.body);
  // Before any node has registered nothing can be judged infeasible; jobs wait.
  const bool judge = !nodes_.empty();
  const auto parse = [&](const std::vector<spec::YamlValue>& docs) {
    return spec::ParseJobDocuments(docs, "body", state_->cluster(), state_->queues(),
                                   {.check_feasible = judge, .documents = single ? nullptr : &documents});
  };
  Result<std::vector<model::Job>> jobs = parse(*parsed);
  if (!jobs.ok() && !parsed->empty() && parsed->front().mark().is_null()) {
    // Read as JSON, without positions: read it as YAML for an error that names the line.
    Result<std::vector<spec::YamlValue>> located = spec::LoadJobDocuments(request.body, "body", /*positions=*/true);
    if (located.ok()) jobs = parse(*located);
  }
  if (!jobs.ok()) {
    // A name in the body that matches nothing (a queue) is the body's fault: 422, not 404.
    const Status& s = jobs.status();
    return reply(StatusResponse(s.code() == StatusCode::kNotFound ? Status(StatusCode::kInfeasible, s.message()) : s));
  }
  for (const model::Job& job : *jobs) {
    for (std::size_t g = 0; g < job.groups.size(); ++g) {
      if (job.groups[g].command.empty()) {
        return reply(net::ErrorResponse(400, "job " + job.name + ": spec.tasks[" + std::to_string(g) +
                                                 "].command: required: the command each task runs"));
      }
    }
  }
  for (const model::Job& job : *jobs) {
    if (const std::string queue = QueuePath(job.queue); !QueueMember(request.caller, queue)) {
      return reply(net::ErrorResponse(403, user + " is not a member of queue " + queue + " (its admins add members: docs/security.md)"));
    }
  }
  if (const std::int64_t most = options_.access.max_pending_per_user; most > 0) {
    std::int64_t waiting = 0;
    for (const model::JobId id : state_->jobs().pending()) waiting += records_.at(id).user == user ? 1 : 0;
    if (waiting + static_cast<std::int64_t>(jobs->size()) > most) {
      net::HttpResponse r = net::ErrorResponse(429, user + " has " + std::to_string(waiting) + " jobs waiting; at most " +
                                                        std::to_string(most) + " may wait per user");
      r.headers.emplace_back("Retry-After", "10");
      return reply(r);
    }
  }
  const std::int64_t now = NowMs();
  json accepted = json::array();
  for (std::size_t i = 0; i < jobs->size(); ++i) {
    model::Job& job = (*jobs)[i];
    for (model::TaskGroup& group : job.groups) {
      if (group.working_dir.empty()) group.working_dir = submit_dir;
    }
    const std::string queue = QueuePath(job.queue);
    job.user = user;
    const model::JobId id = state_.Submit(std::move(job), NowSeconds());
    JobRecord record;
    record.user = user;
    record.submit_dir = submit_dir;
    record.submit_ms = now;
    record.queue = queue;
    record.spec = documents[i];
    records_.Add(id, std::move(record));
    writes_.push_back(store::Mutation::Put(store::Collection::kJobSpecs, store::NumericKey(id.value()), documents[i]));
    PersistJob(id);
    Emit("JobSubmitted", id.value(), "", "submitted by " + user + " to queue " + queue);
    metrics_->submitted.Increment();
    accepted.push_back({{"id", id.value()}, {"name", state_->job(id).name}});
  }
  Commit([this, accepted, reply]() {
    RequestCycle();
    reply(JsonResponse(201, {{"jobs", accepted}}));
  });
}

net::HttpResponse ControlPlane::ListJobs(const net::HttpRequest& request) {
  const std::string state = request.Query("state");
  const std::string queue = request.Query("queue");
  const std::string user = request.Query("user");
  const std::string name = request.Query("name");
  std::size_t limit = kMaxListed;
  if (const std::string l = request.Query("limit"); !l.empty()) {
    Result<std::int64_t> n = ParseCount("limit", l);
    if (!n.ok()) return StatusResponse(n.status());
    limit = static_cast<std::size_t>(*n);
  }
  const Result<std::int64_t> ended_after = QueryCount(request, "endedAfter", -1);  // ms since the epoch; -1: any time
  if (!ended_after.ok()) return StatusResponse(ended_after.status());
  static const std::set<std::string> kStates = {"", "pending", "starting", "running", "succeeded", "failed", "cancelled", "active", "ended"};
  if (!kStates.contains(state)) {
    return net::ErrorResponse(400, "state: '" + state + "' is not one of: pending, starting, running, succeeded, failed, cancelled, active, ended");
  }
  const std::string order = request.Query("order", "oldest");
  if (order != "oldest" && order != "newest") return net::ErrorResponse(400, "order: '" + order + "' is not one of: oldest, newest");
  std::lock_guard lock(mu_);
  EnsureState();
  json jobs = json::array();
  const auto& all = state_->jobs().all();
  for (std::size_t i = 0; i < all.size() && jobs.size() < limit; ++i) {
    const model::Job& job = order == "oldest" ? all[i] : all[all.size() - 1 - i];
    const JobRecord& record = records_.at(job.id);
    const bool active = job.state == model::JobState::kPending || job.state == model::JobState::kRunning;
    const std::string_view shown = ApiState(job.state, record.running_ms != 0);
    if (state == "active" ? !active : state == "ended" ? active : !state.empty() && shown != state) continue;
    if (!queue.empty() && record.queue != queue && !record.queue.starts_with(queue + "/")) continue;
    if (!user.empty() && record.user != user) continue;
    if (!name.empty() && job.name != name) continue;
    if (!SeesJob(request.caller, job.id)) continue;
    if (*ended_after >= 0 && (active || record.end_ms < *ended_after)) continue;
    jobs.push_back(JobJson(job.id, false));
  }
  return JsonResponse(200, {{"jobs", jobs}, {"revision", events_.last_revision()}});
}

net::HttpResponse ControlPlane::Accounting(const net::HttpRequest& request) {
  const std::string by = request.Query("by").empty() ? "queue" : request.Query("by");
  if (by != "queue" && by != "user") return net::ErrorResponse(400, "by: '" + by + "' is not one of: queue, user");
  const Result<std::int64_t> since_ms = QueryCount(request, "since", 0);
  if (!since_ms.ok()) return StatusResponse(since_ms.status());
  const std::int64_t since = *since_ms;
  struct Sum {
    std::int64_t jobs = 0;
    double held = 0, idle = 0;
  };
  std::map<std::string, Sum> sums;
  std::lock_guard lock(mu_);
  for (const JobRecord& record : records_.values()) {
    // Jobs that held GPUs and were still running at `since` or later.
    if (record.gpu_seconds == 0 || (record.end_ms != 0 && record.end_ms < since)) continue;
    if (!SeesWorkOf(request.caller, record.user, record.queue)) continue;
    Sum& sum = sums[by == "queue" ? record.queue : record.user];
    ++sum.jobs;
    sum.held += record.gpu_seconds;
    sum.idle += record.idle_gpu_seconds;
  }
  // Forgotten jobs count to the hour they ended.
  for (const auto& [key, usage] : forgotten_usage_) {
    if ((key.hour + 1) * kMsPerHour <= since || !SeesWorkOf(request.caller, key.user, key.queue)) continue;
    Sum& sum = sums[by == "queue" ? key.queue : key.user];
    sum.jobs += usage.jobs;
    sum.held += usage.gpu_seconds;
    sum.idle += usage.idle_gpu_seconds;
  }
  json rows = json::array();
  for (const auto& [key, sum] : sums) {
    rows.push_back({{by, key}, {"jobs", sum.jobs}, {"gpuHours", sum.held / 3600.0}, {"idleGpuHours", sum.idle / 3600.0}});
  }
  return JsonResponse(200, {{"by", by}, {"since", since}, {"rows", rows}});
}

net::HttpResponse ControlPlane::GetJob(const net::HttpRequest& request) {
  Result<std::int64_t> id = ParseCount("job", request.params.at("id"));
  if (!id.ok()) return StatusResponse(id.status());
  std::lock_guard lock(mu_);
  EnsureState();
  if (FindRecord(*id) == nullptr) return NoJob(*id);
  if (!SeesJob(request.caller, model::JobId(static_cast<std::int32_t>(*id)))) {
    return net::ErrorResponse(403, "job " + std::to_string(*id) + " is not " + request.caller.user + "'s, nor in a queue " +
                                       request.caller.user + " administers");
  }
  json j = JobJson(model::JobId(static_cast<std::int32_t>(*id)), true);
  json events = json::array();
  EventFilter filter;
  filter.job = *id;
  const std::vector<Event> all = events_.Since(0, filter, std::numeric_limits<std::size_t>::max());
  for (std::size_t i = all.size() > 1000 ? all.size() - 1000 : 0; i < all.size(); ++i) events.push_back(ToJson(all[i]));
  j["events"] = events;
  return JsonResponse(200, j);
}

void ControlPlane::CancelJob(const net::HttpRequest& request, Reply reply) {
  Result<std::int64_t> id = ParseCount("job", request.params.at("id"));
  if (!id.ok()) return reply(StatusResponse(id.status()));
  std::lock_guard lock(mu_);
  EnsureState();
  const JobRecord* record = FindRecord(*id);
  if (record == nullptr) return reply(NoJob(*id));
  const model::JobId job(static_cast<std::int32_t>(*id));
  if (!ManagesJob(request.caller, job)) {
    return reply(net::ErrorResponse(403, request.caller.user + " may not cancel job " + std::to_string(*id) + ": it is " +
                                             record->user + "'s, in queue " + record->queue));
  }
  const model::JobState state = state_->job(job).state;
  if (state != model::JobState::kPending && state != model::JobState::kRunning) {
    return reply(net::ErrorResponse(409, "job " + std::to_string(*id) + " already ended (" + std::string(ApiState(state, false)) + ")"));
  }
  EndRun(job, model::JobState::kCancelled, "cancelled by " + request.caller.user);
  Commit([this, job, reply]() {
    reply(JsonResponse(200, JobJson(job, false)));
  });
}

void ControlPlane::EndRun(model::JobId id, model::JobState end, const std::string& message) {
  JobRecord& record = records_.at(id);
  Detach(id);
  state_.Finish(id, end);
  record.end_ms = NowMs();
  record.end_commit = commits_submitted_ + 1;  // the next Commit carries the writes gathered now
  ended_.push_back(id);
  record.message = message;
  const char* type = end == model::JobState::kSucceeded ? "JobSucceeded" : end == model::JobState::kFailed ? "JobFailed" : "JobCancelled";
  Emit(type, id.value(), "", message);
  PersistJob(id);
  RequestCycle();  // its resources are free for others
}

void ControlPlane::RetireRun(JobRecord& record) {
  record.previous_tasks = std::move(record.tasks);
  record.previous_attempt = record.attempt;
  record.tasks.clear();
  record.running_ms = 0;
}

void ControlPlane::FailRun(model::JobId id, const std::string& message) {
  const model::Job& job = state_->job(id);
  if (job.restarts >= job.max_restarts) return EndRun(id, model::JobState::kFailed, message);
  Detach(id);
  // The core counts whole seconds and the loop compares floored ones, so the
  // requeue time is rounded up: a 2 s backoff then waits 2-3 s, never 1-2.
  state_.Requeue(id, (NowMs() + 999) / 1000);
  JobRecord& record = records_.at(id);
  RetireRun(record);
  record.message = message + "; restart " + std::to_string(job.restarts) + " of " + std::to_string(job.max_restarts);
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
  Detach(id);
  state_.Unbind(id, NowSeconds());
  JobRecord& record = records_.at(id);
  RetireRun(record);
  record.message = message;
  Emit("JobRequeued", id.value(), "", message);
  PersistJob(id);
  RequestCycle();
}

net::HttpResponse ControlPlane::ReadLogs(const net::HttpRequest& request) {
  Result<std::int64_t> id = ParseCount("job", request.params.at("id"));
  if (!id.ok()) return StatusResponse(id.status());
  const std::string stream = request.Query("stream", "stdout");
  if (stream != "stdout" && stream != "stderr") return net::ErrorResponse(400, "stream: '" + stream + "' is not one of: stdout, stderr");
  const Result<std::int64_t> from = QueryCount(request, "offset", 0);
  if (!from.ok()) return StatusResponse(from.status());
  const std::int64_t offset = *from;
  std::string task;
  std::int32_t attempt = 0;
  std::string job_state;
  {
    std::lock_guard lock(mu_);
    EnsureState();
    const JobRecord* found = FindRecord(*id);
    if (found == nullptr) return NoJob(*id);
    const JobRecord& record = *found;
    if (!ManagesJob(request.caller, model::JobId(static_cast<std::int32_t>(*id)))) {
      return net::ErrorResponse(403, request.caller.user + " may not read the logs of job " + std::to_string(*id) + ", in queue " +
                                         record.queue);
    }
    const model::Job& job = state_->job(model::JobId(static_cast<std::int32_t>(*id)));
    task = request.Query("task", job.groups.front().name + "-0");
    attempt = record.attempt;
    if (const std::string a = request.Query("attempt"); !a.empty()) {
      Result<std::int64_t> n = ParseCount("attempt", a);
      if (!n.ok()) return StatusResponse(n.status());
      attempt = static_cast<std::int32_t>(*n);
    }
    bool known = false;
    for (const model::TaskGroup& g : job.groups) {
      for (std::int32_t r = 0; r < g.replicas; ++r) known = known || task == g.name + "-" + std::to_string(r);
    }
    if (!known) return net::ErrorResponse(404, "job " + std::to_string(*id) + " has no task '" + task + "'");
    job_state = ApiState(job.state, record.running_ms != 0);
    if (attempt == 0) return net::ErrorResponse(404, "job " + std::to_string(*id) + " has not started yet");
  }
  const std::filesystem::path path = std::filesystem::path(options_.log_dir) / std::to_string(*id) /
                                     (task + "." + std::to_string(attempt) + "." + stream);
  net::HttpResponse response;
  response.content_type = "text/plain; charset=utf-8";
  std::ifstream in(path, std::ios::binary);
  if (in) {
    in.seekg(0, std::ios::end);
    const std::int64_t size = in.tellg();
    if (offset < size) {
      const std::size_t n = std::min<std::size_t>(kMaxLogRead, static_cast<std::size_t>(size - offset));
      response.body.resize(n);
      in.seekg(offset);
      in.read(response.body.data(), static_cast<std::streamsize>(n));
    }
  }
  response.headers.emplace_back("X-Tessera-Next-Offset", std::to_string(offset + static_cast<std::int64_t>(response.body.size())));
  response.headers.emplace_back("X-Tessera-Job-State", job_state);
  response.headers.emplace_back("X-Tessera-Attempt", std::to_string(attempt));
  return response;
}

void ControlPlane::WatchEvents(const net::HttpRequest& request, Reply reply) {
  EventWaiter waiter;
  if (const std::string s = request.Query("since"); !s.empty()) {
    Result<std::int64_t> n = ParseCount("since", s);
    if (!n.ok()) return reply(StatusResponse(n.status()));
    waiter.since = *n;
  }
  if (const std::string j = request.Query("job"); !j.empty()) {
    Result<std::int64_t> n = ParseCount("job", j);
    if (!n.ok()) return reply(StatusResponse(n.status()));
    waiter.filter.job = *n;
  }
  waiter.filter.node = request.Query("node");
  waiter.filter.kind = request.Query("kind");
  if (!waiter.filter.kind.empty() && waiter.filter.kind != "job" && waiter.filter.kind != "node") {
    return reply(net::ErrorResponse(400, "kind: '" + waiter.filter.kind + "' is not one of: job, node"));
  }
  waiter.limit = 10'000;
  if (access_enabled()) {
    // Only events of jobs the caller may see (checked under mu_, where Since runs).
    waiter.filter.job_visible = [this, caller = request.caller](std::int64_t job) {
      // A forgotten job's events show to those who see every job's.
      return FindRecord(job) != nullptr ? SeesJob(caller, model::JobId(static_cast<std::int32_t>(job))) : SeesWorkOf(caller, "", "");
    };
  }
  Result<std::chrono::milliseconds> waited = ParseWait(request.Query("wait"));
  if (!waited.ok()) return reply(StatusResponse(waited.status()));
  const std::chrono::milliseconds wait = *waited;
  std::lock_guard lock(mu_);
  if (waiter.since > 0 && waiter.since + 1 < events_.first_revision()) {
    return reply(net::ErrorResponse(410, "revision " + std::to_string(waiter.since) + " is older than the event window (oldest " +
                                             std::to_string(events_.first_revision()) + "): list again, then watch"));
  }
  std::vector<Event> ready = events_.Since(waiter.since, waiter.filter, waiter.limit);
  if (!ready.empty() || wait.count() == 0) {
    json events = json::array();
    for (const Event& e : ready) events.push_back(ToJson(e));
    return reply(JsonResponse(200, {{"events", events}, {"revision", events_.last_revision()}}));
  }
  waiter.deadline = std::chrono::steady_clock::now() + wait;
  waiter.reply = std::move(reply);
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
    json events = json::array();
    for (const Event& e : ready) events.push_back(ToJson(e));
    w.reply(JsonResponse(200, {{"events", events}, {"revision", events_.last_revision()}}));
  }
  event_waiters_.swap(still);
}

}  // namespace tessera::controlplane
