// The /v1 REST API: every route, in one table, mapped to the control plane,
// with the least access each needs (auth/roles.h). api/openapi.yaml
// describes the same routes for users and tools.
#pragma once

#include <functional>
#include <vector>

#include "auth/roles.h"
#include "controlplane/control_plane.h"
#include "net/router.h"

namespace tessera::controlplane {

struct ApiRoute {
  const char* method;
  const char* pattern;
  auth::Access access;
  net::Handler handler;  // unguarded: AddApiRoutes adds the checks
};

// `leader` answers GET /v1/leader: which replica leads (controlplane/server.h).
std::vector<ApiRoute> ApiRoutes(ControlPlane& plane, std::function<net::HttpResponse()> leader);

// Adds every route, guarded: with access control on, a route that needs a
// token answers 401 without one and 403 when the caller's role falls short
// (or a node credential names another node); with access control on, every
// mutating call but an agent's heartbeats and log chunks is audited once
// answered.
void AddApiRoutes(net::Router& router, ControlPlane& plane, std::function<net::HttpResponse()> leader);

}  // namespace tessera::controlplane
