// The queues' routes: list, create or update, delete. A queue's body names
// its quota in GPUs ("guaranteed", "limit", "userLimit"), its fair-share
// weight and who administers it and may submit there. And the queues'
// registry logins: set (the password goes in, never out), listed, deleted.
#include <tuple>

#include "api/json_reader.h"
#include "server/api_routes.h"
#include "server/http_answers.h"
#include "server/request_params.h"

namespace tessera::server {

namespace {

using net::ExchangePtr;
using nlohmann::json;

// PUT /v1/queues/{path*}: every field optional; absent or null limits are none.
Result<controlplane::QueueChange> ReadQueueChange(const net::HttpRequest& request) {
  json body;
  Result<api::JsonObject> o = ReadObjectBody(request, body, {"guaranteed", "limit", "weight", "userLimit", "admins", "members",
                                                              "requireImage", "allowRootContainers"});
  if (!o.ok()) return o.status();
  controlplane::QueueChange change;
  TESSERA_RETURN_IF_ERROR(o->ReadStringList("admins", &change.access.admins));
  TESSERA_RETURN_IF_ERROR(o->ReadStringList("members", &change.access.members));
  double guaranteed = 0, weight = 1;
  double limit = -1, user_limit = -1;
  TESSERA_RETURN_IF_ERROR(o->ReadNumber("guaranteed", &guaranteed));
  TESSERA_RETURN_IF_ERROR(o->ReadNumber("weight", &weight));
  constexpr double kMostGpus = 1e9;  // far beyond any cluster, and safe in milli-GPUs
  for (auto [key, out, least] : {std::tuple{"limit", &limit, 0.0}, {"userLimit", &user_limit, 0.001}}) {
    if (!o->Has(key) || o->Raw(key).is_null()) continue;
    TESSERA_RETURN_IF_ERROR(o->ReadNumber(key, out));
    if (*out < least || *out > kMostGpus) {
      return InvalidArgument(std::string(key) + ": must be between " + (least > 0 ? "0.001" : "0") + " and 1e9 GPUs");
    }
  }
  if (guaranteed < 0 || guaranteed > kMostGpus) return InvalidArgument("guaranteed: must be between 0 and 1e9 GPUs");
  if (weight <= 0) return InvalidArgument("weight: must be above zero");
  const auto milli_or_unlimited = [](double gpus) { return gpus < 0 ? model::kUnlimited : static_cast<std::int64_t>(gpus * 1000 + 0.5); };
  change.spec = {request.params.at("path"), static_cast<std::int64_t>(guaranteed * 1000 + 0.5), milli_or_unlimited(limit), weight,
                 milli_or_unlimited(user_limit)};
  TESSERA_RETURN_IF_ERROR(o->ReadBool("requireImage", &change.spec.require_image));
  TESSERA_RETURN_IF_ERROR(o->ReadBool("allowRootContainers", &change.spec.allow_root_containers));
  return change;
}

// PUT /v1/registry-credentials/{registry}/{queue*}: {"username", "password"}.
Result<controlplane::RegistryLogin> ReadRegistryLogin(const net::HttpRequest& request) {
  json body;
  Result<api::JsonObject> o = ReadObjectBody(request, body, {"username", "password"});
  if (!o.ok()) return o.status();
  controlplane::RegistryLogin login{request.params.at("queue"), request.params.at("registry"), "", ""};
  TESSERA_RETURN_IF_ERROR(o->ReadString("username", &login.username));
  TESSERA_RETURN_IF_ERROR(o->ReadString("password", &login.password));
  return login;
}

}  // namespace

std::vector<ApiRoute> QueueRoutes(ControlPlane& plane) {
  ControlPlane* p = &plane;
  using C = const auth::Caller&;
  return {
      {"GET", "/v1/queues", auth::Access::kRead, [p](const ExchangePtr& ex, C) { ex->Reply(JsonResponse(200, p->ListQueues())); }},
      {"PUT", "/v1/queues/{path*}", auth::Access::kWrite,
       [p](const ExchangePtr& ex, C caller) {
         Result<controlplane::QueueChange> change = ReadQueueChange(ex->request());
         if (!change.ok()) return ex->Reply(StatusResponse(change.status()));
         p->PutQueue(caller, std::move(*change), ReplyWith<bool>(ex, [path = ex->request().params.at("path")](bool created) {
                       return JsonResponse(created ? 201 : 200, {{"name", path}});
                     }));
       }},
      {"DELETE", "/v1/queues/{path*}", auth::Access::kWrite,
       [p](const ExchangePtr& ex, C caller) {
         p->DeleteQueue(caller, ex->request().params.at("path"), [ex](const Status& status) {
           ex->Reply(status.ok() ? net::HttpResponse{204, "application/json", "", {}, {}} : StatusResponse(status));
         });
       }},
      {"GET", "/v1/registry-credentials", auth::Access::kRead,
       [p](const ExchangePtr& ex, C caller) { ex->Reply(JsonResponse(200, p->ListRegistryCredentials(caller))); }},
      {"PUT", "/v1/registry-credentials/{registry}/{queue*}", auth::Access::kWrite,
       [p](const ExchangePtr& ex, C caller) {
         Result<controlplane::RegistryLogin> login = ReadRegistryLogin(ex->request());
         if (!login.ok()) return ex->Reply(StatusResponse(login.status()));
         json answer = {{"queue", login->queue}, {"registry", login->registry}, {"username", login->username}};
         p->PutRegistryCredential(caller, std::move(*login), ReplyWith<bool>(ex, [answer = std::move(answer)](bool created) {
                                    return JsonResponse(created ? 201 : 200, answer);
                                  }));
       }},
      {"DELETE", "/v1/registry-credentials/{registry}/{queue*}", auth::Access::kWrite,
       [p](const ExchangePtr& ex, C caller) {
         const auto& params = ex->request().params;
         p->DeleteRegistryCredential(caller, params.at("queue"), params.at("registry"), [ex](const Status& status) {
           ex->Reply(status.ok() ? net::HttpResponse{204, "application/json", "", {}, {}} : StatusResponse(status));
         });
       }},
  };
}

}  // namespace tessera::server
