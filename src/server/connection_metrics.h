// The HTTP listener's own metrics (docs/observability.md): connections open
// by class and refused by reason, timeouts by phase, requests in flight and
// shed. They tell an operator that clients are being held off, and which.
#pragma once

#include <string>

#include "net/http_server.h"

namespace tessera::server {

// The Prometheus text exposition of `stats`.
std::string ConnectionMetrics(const net::HttpServerStats& stats);

}  // namespace tessera::server
