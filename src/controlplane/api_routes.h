// The /v1 REST API: every route, in one table, mapped to the control plane.
// api/openapi.yaml describes the same routes for users and tools.
#pragma once

#include <functional>

#include "controlplane/control_plane.h"
#include "net/router.h"

namespace tessera::controlplane {

// `leader` answers GET /v1/leader: which replica leads (controlplane/server.h).
void AddApiRoutes(net::Router& router, ControlPlane& plane, std::function<net::HttpResponse()> leader);

}  // namespace tessera::controlplane
