// The access routes: bearer tokens (make, list, revoke) and the audit log.
#include "api/json_reader.h"
#include "base/quantity.h"
#include "server/api_routes.h"
#include "server/http_answers.h"
#include "server/request_params.h"

namespace tessera::server {

namespace {

using net::ExchangePtr;
using nlohmann::json;

// POST /v1/tokens: {"user", "role", "description", "expiresIn"}, every field optional.
Result<controlplane::TokenRequest> ReadTokenRequest(const net::HttpRequest& request) {
  json body;
  Result<api::JsonObject> o = ReadObjectBody(request, body, {"user", "role", "description", "expiresIn"});
  if (!o.ok()) return o.status();
  controlplane::TokenRequest token;
  std::string role = "user", expires_in;
  for (auto [key, out] : {std::pair{"user", &token.user}, {"role", &role}, {"description", &token.description}, {"expiresIn", &expires_in}}) {
    TESSERA_RETURN_IF_ERROR(o->ReadString(key, out));
  }
  const std::optional<auth::Role> parsed = auth::RoleFromString(role);
  if (!parsed || *parsed == auth::Role::kNode) {
    return InvalidArgument("role: '" + role + "' is not one of: cluster-admin, user, viewer, node-join");
  }
  token.role = *parsed;
  if (!expires_in.empty()) {
    const Result<Seconds> s = ParseDuration(expires_in);
    if (!s.ok() || *s <= 0) return InvalidArgument("expiresIn: '" + expires_in + "' is not a duration such as 30d or 12h");
    token.expires_in_s = *s;
  }
  return token;
}

Result<controlplane::AuditQuery> ReadAuditQuery(const net::HttpRequest& request) {
  const Result<std::int64_t> since = QueryCount(request, "since", 0);
  if (!since.ok()) return since.status();
  const Result<std::int64_t> limit = QueryCount(request, "limit", 1000);
  if (!limit.ok()) return limit.status();
  return controlplane::AuditQuery{*since, *limit, request.Query("user")};
}

}  // namespace

std::vector<ApiRoute> AccessRoutes(ControlPlane& plane) {
  ControlPlane* p = &plane;
  using C = const auth::Caller&;
  return {
      {"POST", "/v1/tokens", auth::Access::kRead,
       [p](const ExchangePtr& ex, C caller) {
         Result<controlplane::TokenRequest> request = ReadTokenRequest(ex->request());
         if (!request.ok()) return ex->Reply(StatusResponse(request.status()));
         p->CreateToken(caller, std::move(*request), ReplyJson(ex, 201));
       }},
      {"GET", "/v1/tokens", auth::Access::kRead, [p](const ExchangePtr& ex, C caller) { ex->Reply(JsonResponse(200, p->ListTokens(caller))); }},
      {"DELETE", "/v1/tokens/{id}", auth::Access::kRead,
       [p](const ExchangePtr& ex, C caller) { p->RevokeToken(caller, ex->request().params.at("id"), ReplyJson(ex)); }},
      {"GET", "/v1/audit", auth::Access::kAdmin,
       [p](const ExchangePtr& ex, C) {
         const Result<controlplane::AuditQuery> query = ReadAuditQuery(ex->request());
         ex->Reply(query.ok() ? JsonResponse(200, p->ListAudit(*query)) : StatusResponse(query.status()));
       }},
  };
}

}  // namespace tessera::server
