// The interactive sessions' routes (api/session_protocol.h): a user asks
// for one in a job; the agent of the task's node polls for its sessions and
// opens each. Opening one is a write, allowed to whoever may read the job's
// logs (ControlPlane::LocateTask); server/session_broker.h joins the two.
#include "api/json_reader.h"
#include "api/session_protocol.h"
#include "net/client_tunnel.h"
#include "server/api_routes.h"
#include "server/http_answers.h"
#include "server/request_params.h"

namespace tessera::server {

namespace {

using net::ExchangePtr;
using nlohmann::json;

Result<api::SessionRequest> ReadSessionRequest(const net::HttpRequest& request) {
  if (request.Header("upgrade") != net::kSessionProtocol) {
    return InvalidArgument(std::string("this route opens a session: send Connection: Upgrade and Upgrade: ") + net::kSessionProtocol +
                           " (tessera exec, attach and port-forward do)");
  }
  Result<json> body = api::ParseJsonBody(request.body);
  if (!body.ok()) return body.status();
  Result<api::SessionRequest> session = api::SessionRequestFromJson(*body);
  if (!session.ok()) return session.status();
  if (!session->id.empty()) return InvalidArgument("id: the server names sessions");
  return session;
}

}  // namespace

std::vector<ApiRoute> SessionRoutes(ControlPlane& plane, SessionBroker& broker) {
  ControlPlane* p = &plane;
  SessionBroker* b = &broker;
  using C = const auth::Caller&;
  return {
      {"POST", "/v1/jobs/{id}/sessions", auth::Access::kWrite,
       [p, b](const ExchangePtr& ex, C caller) {
         Result<api::SessionRequest> session = ReadSessionRequest(ex->request());
         if (!session.ok()) return ex->Reply(StatusResponse(session.status()));
         const Result<controlplane::JobRef> ref = ParseJobRef(ex->request().params.at("id"));
         if (!ref.ok()) return ex->Reply(StatusResponse(ref.status()));
         const Result<controlplane::TaskLocation> where = p->LocateTask(caller, *ref, session->task);
         if (!where.ok()) return ex->Reply(StatusResponse(where.status()));
         session->key = where->key;
         session->task = where->task;
         b->Open(where->node, std::move(*session), ex);
       }},
      {"GET", "/v1/nodes/{name}/sessions", auth::Access::kNode,
       [b](const ExchangePtr& ex, C) {
         const Result<std::chrono::milliseconds> wait = ParseWait(ex->request().Query("wait"));
         if (!wait.ok()) return ex->Reply(StatusResponse(wait.status()));
         if (wait->count() > 0) ex->Waiting();
         b->WaitRequests(ex->request().params.at("name"), *wait, [ex](json answer) { ex->Reply(JsonResponse(200, answer)); });
       }},
      {"POST", "/v1/nodes/{name}/sessions/{session}", auth::Access::kNode,
       [b](const ExchangePtr& ex, C) { b->Join(ex->request().params.at("name"), ex->request().params.at("session"), ex); }},
  };
}

}  // namespace tessera::server
