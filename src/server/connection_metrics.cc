#include "server/connection_metrics.h"

#include "metrics/exposition.h"

namespace tessera::server {

std::string ConnectionMetrics(const net::HttpServerStats& stats) {
  metrics::Snapshot out;
  out.Gauge("tessera_http_connections", "Open connections to the API, by what their first request showed of the sender");
  for (std::size_t c = 0; c < net::kPeerClasses; ++c) {
    out.Add({{"class", std::string(net::ToString(static_cast<net::PeerClass>(c)))}}, static_cast<double>(stats.connections.open[c]));
  }
  out.Gauge("tessera_http_connections_on_probation", "Connections past the limits for unprivileged clients, until their first request")
      .Add({}, static_cast<double>(stats.connections.probation));
  out.Gauge("tessera_http_connection_limit", "The connection limits in force")
      .Add({{"limit", "total"}}, static_cast<double>(stats.limits.max_connections))
      .Add({{"limit", "reserved"}}, static_cast<double>(stats.limits.reserved))
      .Add({{"limit", "per_address"}}, static_cast<double>(stats.limits.max_per_address));
  out.Counter("tessera_http_connections_refused_total", "Connections refused or closed at the limits, by reason");
  for (std::size_t r = 0; r < net::kRefusals; ++r) {
    out.Add({{"reason", std::string(net::ToString(static_cast<net::Refusal>(r)))}}, static_cast<double>(stats.connections.refused[r]));
  }
  out.Counter("tessera_http_connection_timeouts_total", "Connections closed for taking too long, by the phase they were in");
  for (std::size_t p = 0; p < net::kTimeoutPhases; ++p) {
    out.Add({{"phase", std::string(net::ToString(static_cast<net::TimeoutPhase>(p)))}}, static_cast<double>(stats.timeouts[p]));
  }
  out.Gauge("tessera_http_requests_in_flight", "Unprivileged requests being served (long polls that wait are not counted)")
      .Add({}, static_cast<double>(stats.load.in_flight));
  out.Gauge("tessera_http_request_body_bytes", "Bytes of unprivileged request bodies held").Add({}, static_cast<double>(stats.load.body_bytes));
  out.Counter("tessera_http_requests_shed_total", "Requests answered 503 at once because the server was at its load limits, by limit");
  for (std::size_t s = 0; s < net::kSheds; ++s) {
    out.Add({{"limit", std::string(net::ToString(static_cast<net::Shed>(s)))}}, static_cast<double>(stats.load.shed[s]));
  }
  return out.Render();
}

}  // namespace tessera::server
