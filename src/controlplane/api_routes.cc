#include "controlplane/api_routes.h"

#include "controlplane/responses.h"

namespace tessera::controlplane {

void AddApiRoutes(net::Router& router, ControlPlane& plane, std::function<net::HttpResponse()> leader) {
  using net::ExchangePtr;
  // A handler that answers at once, and one that answers when its change is durable.
  const auto now = [](auto method) {
    return [method](const ExchangePtr& ex) { ex->Reply(method(ex->request())); };
  };
  const auto later = [](auto method) {
    return [method](const ExchangePtr& ex) { method(ex->request(), [ex](net::HttpResponse r) { ex->Reply(std::move(r)); }); };
  };
  ControlPlane* p = &plane;

  router.Add("GET", "/v1/healthz", now([](const net::HttpRequest&) { return JsonResponse(200, {{"ok", true}}); }));
  router.Add("GET", "/v1/leader", now([leader = std::move(leader)](const net::HttpRequest&) { return leader(); }));
  router.Add("GET", "/v1/cluster", now([p](const net::HttpRequest& r) { return p->ClusterSummary(r); }));
  router.Add("GET", "/v1/cluster/gpus", now([p](const net::HttpRequest& r) { return p->GpuMap(r); }));
  router.Add("GET", "/v1/cluster/history", now([p](const net::HttpRequest& r) { return p->History(r); }));
  router.Add("GET", "/metrics", now([p](const net::HttpRequest& r) { return p->Metrics(r); }));

  router.Add("POST", "/v1/jobs", later([p](const net::HttpRequest& r, Reply reply) { p->SubmitJobs(r, std::move(reply)); }));
  router.Add("GET", "/v1/jobs", now([p](const net::HttpRequest& r) { return p->ListJobs(r); }));
  router.Add("GET", "/v1/accounting", now([p](const net::HttpRequest& r) { return p->Accounting(r); }));
  router.Add("GET", "/v1/jobs/{id}", now([p](const net::HttpRequest& r) { return p->GetJob(r); }));
  router.Add("DELETE", "/v1/jobs/{id}", later([p](const net::HttpRequest& r, Reply reply) { p->CancelJob(r, std::move(reply)); }));
  router.Add("POST", "/v1/jobs/{id}/cancel", later([p](const net::HttpRequest& r, Reply reply) { p->CancelJob(r, std::move(reply)); }));
  router.Add("GET", "/v1/jobs/{id}/logs", now([p](const net::HttpRequest& r) { return p->ReadLogs(r); }));
  router.Add("GET", "/v1/events", later([p](const net::HttpRequest& r, Reply reply) { p->WatchEvents(r, std::move(reply)); }));

  router.Add("GET", "/v1/nodes", now([p](const net::HttpRequest& r) { return p->ListNodes(r); }));
  router.Add("GET", "/v1/nodes/{name}", now([p](const net::HttpRequest& r) { return p->ListNodes(r); }));
  router.Add("POST", "/v1/nodes/{name}/cordon", later([p](const net::HttpRequest& r, Reply reply) { p->SetCordon(r, true, std::move(reply)); }));
  router.Add("POST", "/v1/nodes/{name}/uncordon", later([p](const net::HttpRequest& r, Reply reply) { p->SetCordon(r, false, std::move(reply)); }));
  router.Add("POST", "/v1/nodes/{name}/drain", later([p](const net::HttpRequest& r, Reply reply) { p->DrainNode(r, std::move(reply)); }));
  // The agent's side.
  router.Add("POST", "/v1/nodes/{name}/register", later([p](const net::HttpRequest& r, Reply reply) { p->RegisterNode(r, std::move(reply)); }));
  router.Add("POST", "/v1/nodes/{name}/status", later([p](const net::HttpRequest& r, Reply reply) { p->ReportStatus(r, std::move(reply)); }));
  router.Add("GET", "/v1/nodes/{name}/assignments", later([p](const net::HttpRequest& r, Reply reply) { p->WaitAssignments(r, std::move(reply)); }));
  router.Add("POST", "/v1/nodes/{name}/logs", now([p](const net::HttpRequest& r) { return p->AppendLogs(r); }));

  router.Add("GET", "/v1/queues", now([p](const net::HttpRequest& r) { return p->ListQueues(r); }));
  router.Add("PUT", "/v1/queues/{path*}", later([p](const net::HttpRequest& r, Reply reply) { p->PutQueue(r, std::move(reply)); }));
  router.Add("DELETE", "/v1/queues/{path*}", later([p](const net::HttpRequest& r, Reply reply) { p->DeleteQueue(r, std::move(reply)); }));
}

}  // namespace tessera::controlplane
