// The nodes' routes: list, cordon, drain; and the agents' side: register,
// status reports (the heartbeat), the assignment long poll and log chunks.
#include <charconv>

#include "api/json_reader.h"
#include "server/api_routes.h"
#include "server/http_answers.h"
#include "server/request_params.h"

namespace tessera::server {

namespace {

using net::ExchangePtr;
using nlohmann::json;

const std::string& NodeOf(const net::HttpRequest& request) { return request.params.at("name"); }

Result<api::NodeInventory> ReadInventory(const net::HttpRequest& request) {
  Result<json> body = api::ParseJsonBody(request.body);
  if (!body.ok()) return body.status();
  Result<api::NodeInventory> inventory = api::NodeInventoryFromJson(*body);
  if (!inventory.ok()) return inventory.status();
  if (inventory->name != NodeOf(request)) {
    return InvalidArgument("name: '" + inventory->name + "' does not match the path's node '" + NodeOf(request) + "'");
  }
  // Where its peers reach it: the address it names, else the one it called from.
  if (inventory->address.empty()) inventory->address = request.remote_address;
  return inventory;
}

Result<api::StatusReport> ReadReport(const net::HttpRequest& request) {
  Result<json> body = api::ParseJsonBody(request.body);
  if (!body.ok()) return body.status();
  return api::StatusReportFromJson(*body);
}

// POST /v1/nodes/{name}/logs?job=&attempt=&task=&offset=&stream=: every parameter required.
Result<controlplane::LogAppend> ReadLogAppend(const net::HttpRequest& request) {
  controlplane::LogAppend chunk;
  chunk.node = NodeOf(request);
  for (auto [key, out] : {std::pair{"job", &chunk.job}, {"attempt", &chunk.attempt}, {"task", &chunk.task}, {"offset", &chunk.offset}}) {
    const std::string v = request.Query(key);
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), *out);
    if (v.empty() || ec != std::errc() || end != v.data() + v.size() || *out < 0) {
      return InvalidArgument(std::string(key) + ": expected a non-negative integer, got '" + v + "'");
    }
  }
  const std::string stream = request.Query("stream");
  if (stream != "stdout" && stream != "stderr") return InvalidArgument("stream: '" + stream + "' is not one of: stdout, stderr");
  chunk.stderr_stream = stream == "stderr";
  chunk.data = request.body;
  return chunk;
}

net::HttpResponse AppendedResponse(const controlplane::LogAppend& chunk, const controlplane::AppendedLog& appended) {
  if (appended.past_end) {
    // The agent sends again from `size` (a new leader whose log directory lacks what the old one received).
    return JsonResponse(409, {{"error", "offset " + std::to_string(chunk.offset) + " is past the end of the log (" +
                                            std::to_string(appended.size) + " bytes)"},
                              {"code", 409},
                              {"size", appended.size}});
  }
  return JsonResponse(200, {{"accepted", appended.accepted}, {"size", appended.size}});
}

// An assignment set is JSON text already, cached per task.
net::HttpResponse AssignmentResponse(std::string body) {
  net::HttpResponse response;
  response.body = std::move(body);
  return response;
}

}  // namespace

std::vector<ApiRoute> NodeRoutes(ControlPlane& plane) {
  ControlPlane* p = &plane;
  using C = const auth::Caller&;
  const auto cordon = [p](bool cordoned) {
    return [p, cordoned](const ExchangePtr& ex, C) { p->SetCordon(NodeOf(ex->request()), cordoned, ReplyJson(ex)); };
  };
  return {
      {"GET", "/v1/nodes", auth::Access::kRead,
       [p](const ExchangePtr& ex, C) {
         const Result<std::string> gpus = QueryChoice(ex->request(), "gpus", {"true", "false"});
         ex->Reply(gpus.ok() ? JsonResponse(200, p->ListNodes(*gpus == "true")) : StatusResponse(gpus.status()));
       }},
      {"GET", "/v1/nodes/{name}", auth::Access::kRead,
       [p](const ExchangePtr& ex, C) { ex->Reply(JsonAnswer(p->GetNode(NodeOf(ex->request())))); }},
      {"POST", "/v1/nodes/{name}/cordon", auth::Access::kAdmin, cordon(true)},
      {"POST", "/v1/nodes/{name}/uncordon", auth::Access::kAdmin, cordon(false)},
      {"POST", "/v1/nodes/{name}/drain", auth::Access::kAdmin,
       [p](const ExchangePtr& ex, C) { p->DrainNode(NodeOf(ex->request()), ReplyJson(ex)); }},
      // The agent's side.
      {"POST", "/v1/nodes/{name}/register", auth::Access::kJoin,
       [p](const ExchangePtr& ex, C caller) {
         Result<api::NodeInventory> inventory = ReadInventory(ex->request());
         if (!inventory.ok()) return ex->Reply(StatusResponse(inventory.status()));
         p->RegisterNode(caller, std::move(*inventory), ReplyJson(ex));
       }},
      {"POST", "/v1/nodes/{name}/status", auth::Access::kNode,
       [p](const ExchangePtr& ex, C) {
         Result<api::StatusReport> report = ReadReport(ex->request());
         if (!report.ok()) return ex->Reply(StatusResponse(report.status()));
         p->ReportStatus(NodeOf(ex->request()), std::move(*report), ReplyJson(ex));
       }},
      {"GET", "/v1/nodes/{name}/assignments", auth::Access::kNode,
       [p](const ExchangePtr& ex, C) {
         const net::HttpRequest& request = ex->request();
         // -1 (or none): the agent has no set yet and gets one at once.
         Result<std::int64_t> after = -1;
         if (const std::string a = request.Query("after"); !a.empty() && a != "-1") after = ParseCount("after", a);
         if (!after.ok()) return ex->Reply(StatusResponse(after.status()));
         const Result<std::chrono::milliseconds> wait = ParseWait(request.Query("wait"));
         if (!wait.ok()) return ex->Reply(StatusResponse(wait.status()));
         p->WaitAssignments(NodeOf(request), *after, *wait, ReplyWith<std::string>(ex, AssignmentResponse));
       }},
      {"POST", "/v1/nodes/{name}/logs", auth::Access::kNode,
       [p](const ExchangePtr& ex, C) {
         const Result<controlplane::LogAppend> chunk = ReadLogAppend(ex->request());
         if (!chunk.ok()) return ex->Reply(StatusResponse(chunk.status()));
         const Result<controlplane::AppendedLog> appended = p->AppendLogs(*chunk);
         ex->Reply(appended.ok() ? AppendedResponse(*chunk, *appended) : StatusResponse(appended.status()));
       }},
  };
}

}  // namespace tessera::server
