// The cluster's routes: health, the leader, the summary, the GPU map, the
// utilization history, the record `tessera whatif` replays and the
// Prometheus metrics.
#include "metrics/exposition.h"
#include "server/api_routes.h"
#include "server/connection_metrics.h"
#include "server/http_answers.h"
#include "server/request_params.h"

namespace tessera::server {

std::vector<ApiRoute> ClusterRoutes(ControlPlane& plane, ServerViews views) {
  ControlPlane* p = &plane;
  using net::ExchangePtr;
  using C = const auth::Caller&;
  return {
      {"GET", "/v1/healthz", auth::Access::kPublic, [](const ExchangePtr& ex, C) { ex->Reply(JsonResponse(200, {{"ok", true}})); }},
      {"GET", "/v1/leader", auth::Access::kPublic, [leader = std::move(views.leader)](const ExchangePtr& ex, C) { ex->Reply(leader()); }},
      {"GET", "/v1/cluster", auth::Access::kRead, [p](const ExchangePtr& ex, C) { ex->Reply(JsonResponse(200, p->ClusterSummary())); }},
      {"GET", "/v1/cluster/gpus", auth::Access::kRead, [p](const ExchangePtr& ex, C) { ex->Reply(JsonResponse(200, p->GpuMap())); }},
      {"GET", "/v1/cluster/history", auth::Access::kRead,
       [p](const ExchangePtr& ex, C) {
         const Result<std::int64_t> since = QueryCount(ex->request(), "since", 0);
         ex->Reply(since.ok() ? JsonResponse(200, p->History(*since)) : StatusResponse(since.status()));
       }},
      // Every ended job with its spec, of every queue: cluster admins only.
      {"GET", "/v1/cluster/record", auth::Access::kAdmin,
       [p](const ExchangePtr& ex, C) { ex->Reply(JsonResponse(200, p->ClusterRecord())); }},
      {"GET", "/metrics", auth::Access::kRead,
       [p, connections = std::move(views.connections)](const ExchangePtr& ex, C) {
         net::HttpResponse response;
         response.content_type = metrics::kContentType;
         response.body = p->Metrics();
         if (connections) response.body += ConnectionMetrics(connections());
         ex->Reply(std::move(response));
       }},
  };
}

}  // namespace tessera::server
