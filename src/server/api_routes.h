// The /v1 REST API: every route, mapped to the control plane's services,
// with the least access each needs (auth/roles.h). Each area's routes read
// their requests into the services' values and write the answers
// (job_routes.cc, node_routes.cc, queue_routes.cc, access_routes.cc,
// cluster_routes.cc); api/openapi.yaml describes the same routes for users
// and tools.
#pragma once

#include <functional>
#include <vector>

#include "auth/caller.h"
#include "auth/roles.h"
#include "controlplane/control_plane.h"
#include "net/http_server.h"
#include "net/router.h"
#include "server/session_broker.h"

namespace tessera::server {

using controlplane::ControlPlane;

// A route's work, given the caller the request's credentials name.
using RouteHandler = std::function<void(const net::ExchangePtr&, const auth::Caller&)>;

struct ApiRoute {
  const char* method;
  const char* pattern;
  auth::Access access;
  RouteHandler handler;  // unguarded: AddApiRoutes adds the checks
};

std::vector<ApiRoute> JobRoutes(ControlPlane& plane);     // jobs, logs, events, accounting
std::vector<ApiRoute> NodeRoutes(ControlPlane& plane);    // nodes, and the agents' side
std::vector<ApiRoute> QueueRoutes(ControlPlane& plane);
std::vector<ApiRoute> AccessRoutes(ControlPlane& plane);  // tokens and the audit log
std::vector<ApiRoute> SessionRoutes(ControlPlane& plane, SessionBroker& broker);  // exec, attach, port-forward

// What the cluster routes read off the server around the control plane.
struct ServerViews {
  std::function<net::HttpResponse()> leader;        // GET /v1/leader: which replica leads (server/server.h)
  std::function<net::HttpServerStats()> connections;  // for /metrics; unset: none reported
};
// Health, the cluster's views and metrics.
std::vector<ApiRoute> ClusterRoutes(ControlPlane& plane, ServerViews views);

// Every route above.
std::vector<ApiRoute> ApiRoutes(ControlPlane& plane, ServerViews views, SessionBroker& sessions);

// Adds every route, guarded: the caller comes from the request's credentials
// (401 when they are bad, 429 over the token's rate); with access control on,
// a route that needs a token answers 401 without one and 403 when the
// caller's role falls short (or a node credential names another node); and
// every mutating call but an agent's heartbeats and log chunks is audited
// once answered.
void AddApiRoutes(net::Router& router, ControlPlane& plane, ServerViews views, SessionBroker& sessions);

}  // namespace tessera::server
