// The jobs' routes: submit, list, get, cancel, logs, the event watch and
// accounting.
#include "api/json_reader.h"
#include "server/api_routes.h"
#include "server/http_answers.h"
#include "server/request_params.h"
#include "spec/job_yaml.h"

namespace tessera::server {

namespace {

using controlplane::JobStateFilter;
using net::ExchangePtr;
using nlohmann::json;

constexpr std::int64_t kMaxListed = 100'000;

Result<controlplane::JobRef> JobRefOf(const net::HttpRequest& request) { return ParseJobRef(request.params.at("id")); }

// POST /v1/jobs: one or more Job documents, YAML or JSON.
Result<controlplane::Submission> ReadSubmission(const net::HttpRequest& request) {
  if (request.body.empty()) return InvalidArgument("empty body: send a Job document (YAML or JSON)");
  controlplane::Submission submission;
  // Like sbatch: tasks start where the user submitted from, unless the spec says otherwise.
  submission.submit_dir = request.Header("x-tessera-workdir");
  if (!submission.submit_dir.empty() && submission.submit_dir.front() != '/') {
    return InvalidArgument("X-Tessera-Workdir: must be an absolute path, got '" + submission.submit_dir + "'");
  }
  // The YAML syntax outside the control plane's lock: it is most of a submission's cost.
  Result<std::vector<spec::YamlValue>> documents = spec::LoadJobDocuments(request.body, "body");
  if (!documents.ok()) {
    // A malformed JSON body reached the YAML reader (json_document.h); the
    // JSON parser names its syntax error more precisely.
    if (request.Header("content-type").find("json") != std::string::npos) {
      if (Result<json> as_json = api::ParseJsonBody(request.body); !as_json.ok()) return as_json.status();
    }
    return documents.status();
  }
  submission.text = request.body;
  submission.documents = std::move(*documents);
  return submission;
}

Result<JobStateFilter> ReadStateFilter(const std::string& text) {
  static const std::vector<std::pair<std::string, JobStateFilter>> kStates = {
      {"", JobStateFilter::kAny},           {"pending", JobStateFilter::kPending},     {"starting", JobStateFilter::kStarting},
      {"running", JobStateFilter::kRunning}, {"succeeded", JobStateFilter::kSucceeded}, {"failed", JobStateFilter::kFailed},
      {"cancelled", JobStateFilter::kCancelled}, {"active", JobStateFilter::kActive},   {"ended", JobStateFilter::kEnded}};
  for (const auto& [name, filter] : kStates) {
    if (name == text) return filter;
  }
  return InvalidArgument("state: '" + text + "' is not one of: pending, starting, running, succeeded, failed, cancelled, active, ended");
}

Result<controlplane::JobQuery> ReadJobQuery(const net::HttpRequest& request) {
  controlplane::JobQuery query;
  Result<JobStateFilter> state = ReadStateFilter(request.Query("state"));
  if (!state.ok()) return state.status();
  query.state = *state;
  query.queue = request.Query("queue");
  query.user = request.Query("user");
  query.name = request.Query("name");
  const Result<std::int64_t> limit = QueryCount(request, "limit", kMaxListed);
  if (!limit.ok()) return limit.status();
  query.limit = static_cast<std::size_t>(*limit);
  const Result<std::int64_t> ended_after = QueryCount(request, "endedAfter", -1);  // ms since the epoch
  if (!ended_after.ok()) return ended_after.status();
  query.ended_after_ms = *ended_after;
  const Result<std::string> order = QueryChoice(request, "order", {"oldest", "newest"});
  if (!order.ok()) return order.status();
  query.newest_first = *order == "newest";
  const Result<std::string> expand = QueryChoice(request, "expand", {"false", "true"});
  if (!expand.ok()) return expand.status();
  query.expand = *expand == "true";
  if (const std::string array = request.Query("array"); !array.empty()) {
    const Result<std::int64_t> id = ParseCount("array", array);
    if (!id.ok()) return id.status();
    query.array = *id;
  }
  return query;
}

Result<controlplane::LogQuery> ReadLogQuery(const net::HttpRequest& request) {
  controlplane::LogQuery query;
  const Result<controlplane::JobRef> job = JobRefOf(request);
  if (!job.ok()) return job.status();
  query.job = *job;
  const Result<std::string> stream = QueryChoice(request, "stream", {"stdout", "stderr"});
  if (!stream.ok()) return stream.status();
  query.stderr_stream = *stream == "stderr";
  const Result<std::int64_t> offset = QueryCount(request, "offset", 0);
  if (!offset.ok()) return offset.status();
  query.offset = *offset;
  query.task = request.Query("task");
  if (const std::string a = request.Query("attempt"); !a.empty()) {
    const Result<std::int64_t> attempt = ParseCount("attempt", a);
    if (!attempt.ok()) return attempt.status();
    query.attempt = static_cast<std::int32_t>(*attempt);
  }
  return query;
}

net::HttpResponse LogResponse(const controlplane::LogChunk& chunk) {
  net::HttpResponse response;
  response.content_type = "text/plain; charset=utf-8";
  response.body = chunk.data;
  response.headers.emplace_back("X-Tessera-Next-Offset", std::to_string(chunk.next_offset));
  response.headers.emplace_back("X-Tessera-Job-State", chunk.job_state);
  response.headers.emplace_back("X-Tessera-Attempt", std::to_string(chunk.attempt));
  return response;
}

Result<controlplane::EventQuery> ReadEventQuery(const net::HttpRequest& request) {
  controlplane::EventQuery query;
  const Result<std::int64_t> since = QueryCount(request, "since", 0);
  if (!since.ok()) return since.status();
  query.since = *since;
  const Result<std::int64_t> job = QueryCount(request, "job", -1);
  if (!job.ok()) return job.status();
  query.filter.job = *job;
  query.filter.node = request.Query("node");
  query.filter.kind = request.Query("kind");
  if (!query.filter.kind.empty() && query.filter.kind != "job" && query.filter.kind != "node") {
    return InvalidArgument("kind: '" + query.filter.kind + "' is not one of: job, node");
  }
  const Result<std::chrono::milliseconds> wait = ParseWait(request.Query("wait"));
  if (!wait.ok()) return wait.status();
  query.wait = *wait;
  return query;
}

Result<controlplane::AccountingQuery> ReadAccountingQuery(const net::HttpRequest& request) {
  const Result<std::string> by = QueryChoice(request, "by", {"queue", "user"});
  if (!by.ok()) return by.status();
  const Result<std::int64_t> since = QueryCount(request, "since", 0);
  if (!since.ok()) return since.status();
  return controlplane::AccountingQuery{*by == "user", *since};
}

}  // namespace

std::vector<ApiRoute> JobRoutes(ControlPlane& plane) {
  ControlPlane* p = &plane;
  using C = const auth::Caller&;
  const auto cancel = [p](const ExchangePtr& ex, C caller) {
    const Result<controlplane::JobRef> ref = JobRefOf(ex->request());
    if (!ref.ok()) return ex->Reply(StatusResponse(ref.status()));
    p->CancelJob(caller, *ref, ReplyJson(ex));
  };
  return {
      {"POST", "/v1/jobs", auth::Access::kWrite,
       [p](const ExchangePtr& ex, C caller) {
         Result<controlplane::Submission> submission = ReadSubmission(ex->request());
         if (!submission.ok()) return ex->Reply(StatusResponse(submission.status()));
         p->SubmitJobs(caller, std::move(*submission), ReplyWith<std::vector<controlplane::AcceptedJob>>(ex, [](const auto& accepted) {
                         json jobs = json::array();
                         for (const controlplane::AcceptedJob& job : accepted) jobs.push_back({{"id", job.id}, {"name", job.name}});
                         return JsonResponse(201, {{"jobs", jobs}});
                       }));
       }},
      {"GET", "/v1/jobs", auth::Access::kRead,
       [p](const ExchangePtr& ex, C caller) {
         const Result<controlplane::JobQuery> query = ReadJobQuery(ex->request());
         ex->Reply(query.ok() ? JsonAnswer(p->ListJobs(caller, *query)) : StatusResponse(query.status()));
       }},
      {"GET", "/v1/accounting", auth::Access::kRead,
       [p](const ExchangePtr& ex, C caller) {
         const Result<controlplane::AccountingQuery> query = ReadAccountingQuery(ex->request());
         ex->Reply(query.ok() ? JsonResponse(200, p->Accounting(caller, *query)) : StatusResponse(query.status()));
       }},
      {"GET", "/v1/jobs/{id}", auth::Access::kRead,
       [p](const ExchangePtr& ex, C caller) {
         const Result<controlplane::JobRef> ref = JobRefOf(ex->request());
         ex->Reply(ref.ok() ? JsonAnswer(p->GetJob(caller, *ref)) : StatusResponse(ref.status()));
       }},
      {"POST", "/v1/jobs/{id}/checkpoint", auth::Access::kWrite,
       [p](const ExchangePtr& ex, C caller) {
         const Result<controlplane::JobRef> ref = JobRefOf(ex->request());
         if (!ref.ok()) return ex->Reply(StatusResponse(ref.status()));
         p->ReportCheckpoint(caller, *ref, ReplyJson(ex));
       }},
      {"DELETE", "/v1/jobs/{id}", auth::Access::kWrite, cancel},
      {"POST", "/v1/jobs/{id}/cancel", auth::Access::kWrite, cancel},
      {"GET", "/v1/jobs/{id}/logs", auth::Access::kRead,
       [p](const ExchangePtr& ex, C caller) {
         const Result<controlplane::LogQuery> query = ReadLogQuery(ex->request());
         if (!query.ok()) return ex->Reply(StatusResponse(query.status()));
         const Result<controlplane::LogChunk> chunk = p->ReadLogs(caller, *query);
         ex->Reply(chunk.ok() ? LogResponse(*chunk) : StatusResponse(chunk.status()));
       }},
      {"GET", "/v1/events", auth::Access::kRead,
       [p](const ExchangePtr& ex, C caller) {
         Result<controlplane::EventQuery> query = ReadEventQuery(ex->request());
         if (!query.ok()) return ex->Reply(StatusResponse(query.status()));
         if (query->wait.count() > 0) ex->Waiting();  // a long poll holds no load slot while it waits
         p->WatchEvents(caller, std::move(*query), ReplyJson(ex));
       }},
  };
}

}  // namespace tessera::server
