// The /v1 REST API: every route, in one table, mapped to the control plane.
// api/openapi.yaml describes the same routes for users and tools.
#pragma once

#include "controlplane/control_plane.h"
#include "net/router.h"

namespace tessera::controlplane {

void AddApiRoutes(net::Router& router, ControlPlane& plane);

}  // namespace tessera::controlplane
