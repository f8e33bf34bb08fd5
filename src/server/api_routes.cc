#include "server/api_routes.h"

#include "server/http_answers.h"

namespace tessera::server {

namespace {

using auth::Access;
using net::ExchangePtr;

// Passes the answer to the audit log on its way out.
class AuditedExchange final : public net::Exchange {
 public:
  AuditedExchange(ExchangePtr inner, ControlPlane* plane, auth::Caller caller)
      : inner_(std::move(inner)), plane_(plane), caller_(std::move(caller)) {}
  const net::HttpRequest& request() const override { return inner_->request(); }
  net::HttpRequest& request() override { return inner_->request(); }
  void Reply(net::HttpResponse response) override {
    const net::HttpRequest& r = inner_->request();
    plane_->Audit(caller_, {r.method, r.target, r.remote_address, response.status});
    inner_->Reply(std::move(response));
  }
  void Waiting() override { inner_->Waiting(); }

 private:
  ExchangePtr inner_;
  ControlPlane* plane_;
  auth::Caller caller_;
};

// With mutual TLS for agents, whoever acts for a node, token or not, holds
// that node's certificate: a stolen credential alone is not enough.
Status WrongCertificate(const ControlPlane& plane, Access access, const net::HttpRequest& request) {
  if (!plane.node_certificates_required() || (access != Access::kNode && access != Access::kJoin)) return Status::Ok();
  const std::string& node = request.params.at("name");
  if (request.client_certificate.empty()) {
    return PermissionDenied("node " + node + " must present its client certificate: this server requires mutual TLS for agents "
                            "(tessera agent --cert-file --key-file; docs/security.md)");
  }
  if (request.client_certificate != node) {
    return PermissionDenied("the client certificate names node " + request.client_certificate + ", which cannot act for node " + node);
  }
  return Status::Ok();
}

Status Denied(const ControlPlane& plane, Access access, const net::HttpRequest& request, const auth::Caller& caller) {
  TESSERA_RETURN_IF_ERROR(WrongCertificate(plane, access, request));
  if (!plane.access_enabled() || access == Access::kPublic) return Status::Ok();
  if (!caller.authenticated) return Unauthenticated(request.method + " " + request.path + " needs a token: Authorization: Bearer tsr_...");
  if (!caller.role || !auth::Allows(*caller.role, access)) {
    return PermissionDenied("a " + std::string(caller.RoleName()) + " token may not " + request.method + " " + request.path + " (it needs " +
                            std::string(auth::ToString(access)) + " access)");
  }
  if (caller.Is(auth::Role::kNode) && request.params.count("name") != 0 && request.params.at("name") != caller.user) {
    return PermissionDenied("the credential of node " + caller.user + " cannot act for node " + request.params.at("name"));
  }
  return Status::Ok();
}

}  // namespace

std::vector<ApiRoute> ApiRoutes(ControlPlane& plane, ServerViews views, SessionBroker& sessions) {
  std::vector<ApiRoute> routes = ClusterRoutes(plane, std::move(views));
  for (auto* area : {&JobRoutes, &NodeRoutes, &QueueRoutes, &AccessRoutes}) {
    for (ApiRoute& route : area(plane)) routes.push_back(std::move(route));
  }
  for (ApiRoute& route : SessionRoutes(plane, sessions)) routes.push_back(std::move(route));
  return routes;
}

void AddApiRoutes(net::Router& router, ControlPlane& plane, ServerViews views, SessionBroker& sessions) {
  ControlPlane* p = &plane;
  for (ApiRoute& route : ApiRoutes(plane, std::move(views), sessions)) {
    const bool mutating = std::string_view(route.method) != "GET";
    // An agent's heartbeats and log chunks would drown the audit log; with
    // access control off there is no caller to hold to account.
    const bool audited = plane.access_enabled() && mutating && route.access != Access::kNode;
    router.Add(route.method, route.pattern,
               [p, access = route.access, audited, mutating, handler = std::move(route.handler)](const ExchangePtr& ex) {
                 const net::HttpRequest& request = ex->request();
                 const Result<auth::Caller> caller = p->Authenticate(request.Header("authorization"), request.Header("x-tessera-user"));
                 if (!caller.ok()) {
                   // Refused credentials are audited on every mutating route, an agent's too.
                   if (mutating) p->Audit({}, {request.method, request.target, request.remote_address, HttpStatusOf(caller.status().code())});
                   return ex->Reply(StatusResponse(caller.status()));
                 }
                 const ExchangePtr exchange = audited ? std::make_shared<AuditedExchange>(ex, p, *caller) : ex;
                 if (const Status denied = Denied(*p, access, request, *caller); !denied.ok()) return exchange->Reply(StatusResponse(denied));
                 handler(exchange, *caller);
               });
  }
}

}  // namespace tessera::server
