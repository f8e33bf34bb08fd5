#include "controlplane/api_routes.h"

#include "controlplane/responses.h"

namespace tessera::controlplane {

namespace {

using auth::Access;
using net::ExchangePtr;

// Passes the answer to the audit log on its way out.
class AuditedExchange final : public net::Exchange {
 public:
  AuditedExchange(ExchangePtr inner, ControlPlane* plane) : inner_(std::move(inner)), plane_(plane) {}
  const net::HttpRequest& request() const override { return inner_->request(); }
  net::HttpRequest& request() override { return inner_->request(); }
  void Reply(net::HttpResponse response) override {
    plane_->Audit(inner_->request(), response.status);
    inner_->Reply(std::move(response));
  }

 private:
  ExchangePtr inner_;
  ControlPlane* plane_;
};

// With mutual TLS for agents, whoever acts for a node, token or not, holds
// that node's certificate: a stolen credential alone is not enough.
std::optional<net::HttpResponse> WrongCertificate(const ControlPlane& plane, Access access, const net::HttpRequest& request) {
  if (!plane.node_certificates_required() || (access != Access::kNode && access != Access::kJoin)) return std::nullopt;
  const std::string& node = request.params.at("name");
  if (request.client_certificate.empty()) {
    return net::ErrorResponse(403, "node " + node + " must present its client certificate: this server requires mutual TLS for agents "
                                   "(tessera agent --cert-file --key-file; docs/security.md)");
  }
  if (request.client_certificate != node) {
    return net::ErrorResponse(403, "the client certificate names node " + request.client_certificate + ", which cannot act for node " + node);
  }
  return std::nullopt;
}

std::optional<net::HttpResponse> Denied(const ControlPlane& plane, Access access, const net::HttpRequest& request) {
  if (std::optional<net::HttpResponse> wrong = WrongCertificate(plane, access, request)) return wrong;
  if (!plane.access_enabled() || access == Access::kPublic) return std::nullopt;
  const net::Caller& caller = request.caller;
  if (!caller.authenticated) {
    net::HttpResponse r = net::ErrorResponse(401, request.method + " " + request.path + " needs a token: Authorization: Bearer tsr_...");
    r.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"tessera\"");
    return r;
  }
  const std::optional<auth::Role> role = auth::RoleFromString(caller.role);
  if (!role || !auth::Allows(*role, access)) {
    return net::ErrorResponse(403, "a " + caller.role + " token may not " + request.method + " " + request.path + " (it needs " +
                                       std::string(auth::ToString(access)) + " access)");
  }
  if (*role == auth::Role::kNode && request.params.count("name") != 0 && request.params.at("name") != caller.user) {
    return net::ErrorResponse(403, "the credential of node " + caller.user + " cannot act for node " + request.params.at("name"));
  }
  return std::nullopt;
}

}  // namespace

std::vector<ApiRoute> ApiRoutes(ControlPlane& plane, std::function<net::HttpResponse()> leader) {
  // A handler that answers at once, and one that answers when its change is durable.
  const auto now = [](auto method) {
    return [method](const ExchangePtr& ex) { ex->Reply(method(ex->request())); };
  };
  const auto later = [](auto method) {
    return [method](const ExchangePtr& ex) { method(ex->request(), [ex](net::HttpResponse r) { ex->Reply(std::move(r)); }); };
  };
  ControlPlane* p = &plane;
  using R = const net::HttpRequest&;
  return {
      {"GET", "/v1/healthz", Access::kPublic, now([](R) { return JsonResponse(200, {{"ok", true}}); })},
      {"GET", "/v1/leader", Access::kPublic, now([leader = std::move(leader)](R) { return leader(); })},
      {"GET", "/v1/cluster", Access::kRead, now([p](R r) { return p->ClusterSummary(r); })},
      {"GET", "/v1/cluster/gpus", Access::kRead, now([p](R r) { return p->GpuMap(r); })},
      {"GET", "/v1/cluster/history", Access::kRead, now([p](R r) { return p->History(r); })},
      {"GET", "/metrics", Access::kRead, now([p](R r) { return p->Metrics(r); })},

      {"POST", "/v1/jobs", Access::kWrite, later([p](R r, Reply reply) { p->SubmitJobs(r, std::move(reply)); })},
      {"GET", "/v1/jobs", Access::kRead, now([p](R r) { return p->ListJobs(r); })},
      {"GET", "/v1/accounting", Access::kRead, now([p](R r) { return p->Accounting(r); })},
      {"GET", "/v1/jobs/{id}", Access::kRead, now([p](R r) { return p->GetJob(r); })},
      {"DELETE", "/v1/jobs/{id}", Access::kWrite, later([p](R r, Reply reply) { p->CancelJob(r, std::move(reply)); })},
      {"POST", "/v1/jobs/{id}/cancel", Access::kWrite, later([p](R r, Reply reply) { p->CancelJob(r, std::move(reply)); })},
      {"GET", "/v1/jobs/{id}/logs", Access::kRead, now([p](R r) { return p->ReadLogs(r); })},
      {"GET", "/v1/events", Access::kRead, later([p](R r, Reply reply) { p->WatchEvents(r, std::move(reply)); })},

      {"GET", "/v1/nodes", Access::kRead, now([p](R r) { return p->ListNodes(r); })},
      {"GET", "/v1/nodes/{name}", Access::kRead, now([p](R r) { return p->ListNodes(r); })},
      {"POST", "/v1/nodes/{name}/cordon", Access::kAdmin, later([p](R r, Reply reply) { p->SetCordon(r, true, std::move(reply)); })},
      {"POST", "/v1/nodes/{name}/uncordon", Access::kAdmin, later([p](R r, Reply reply) { p->SetCordon(r, false, std::move(reply)); })},
      {"POST", "/v1/nodes/{name}/drain", Access::kAdmin, later([p](R r, Reply reply) { p->DrainNode(r, std::move(reply)); })},
      // The agent's side.
      {"POST", "/v1/nodes/{name}/register", Access::kJoin, later([p](R r, Reply reply) { p->RegisterNode(r, std::move(reply)); })},
      {"POST", "/v1/nodes/{name}/status", Access::kNode, later([p](R r, Reply reply) { p->ReportStatus(r, std::move(reply)); })},
      {"GET", "/v1/nodes/{name}/assignments", Access::kNode, later([p](R r, Reply reply) { p->WaitAssignments(r, std::move(reply)); })},
      {"POST", "/v1/nodes/{name}/logs", Access::kNode, now([p](R r) { return p->AppendLogs(r); })},

      {"GET", "/v1/queues", Access::kRead, now([p](R r) { return p->ListQueues(r); })},
      {"PUT", "/v1/queues/{path*}", Access::kWrite, later([p](R r, Reply reply) { p->PutQueue(r, std::move(reply)); })},
      {"DELETE", "/v1/queues/{path*}", Access::kWrite, later([p](R r, Reply reply) { p->DeleteQueue(r, std::move(reply)); })},

      {"POST", "/v1/tokens", Access::kRead, later([p](R r, Reply reply) { p->CreateToken(r, std::move(reply)); })},
      {"GET", "/v1/tokens", Access::kRead, now([p](R r) { return p->ListTokens(r); })},
      {"DELETE", "/v1/tokens/{id}", Access::kRead, later([p](R r, Reply reply) { p->RevokeToken(r, std::move(reply)); })},
      {"GET", "/v1/audit", Access::kAdmin, now([p](R r) { return p->ListAudit(r); })},
  };
}

void AddApiRoutes(net::Router& router, ControlPlane& plane, std::function<net::HttpResponse()> leader) {
  ControlPlane* p = &plane;
  for (ApiRoute& route : ApiRoutes(plane, std::move(leader))) {
    // An agent's heartbeats and log chunks would drown the audit log; with
    // access control off there is no caller to hold to account.
    const bool audited = plane.access_enabled() && std::string_view(route.method) != "GET" && route.access != Access::kNode;
    router.Add(route.method, route.pattern,
               [p, access = route.access, audited, handler = std::move(route.handler)](const ExchangePtr& ex) {
                 const ExchangePtr exchange = audited ? std::make_shared<AuditedExchange>(ex, p) : ex;
                 if (std::optional<net::HttpResponse> denied = Denied(*p, access, exchange->request())) return exchange->Reply(*denied);
                 handler(exchange);
               });
  }
}

}  // namespace tessera::controlplane
