// Prometheus metrics in the text exposition format, on prometheus-cpp
// (Debian's prometheus-cpp-dev): counters and histograms that code updates as
// things happen live in a prometheus::Registry; values read off the current
// state when Prometheus scrapes (queue depths, GPUs per node, telemetry) are
// added to a Snapshot, whose families come and go with what they describe.
// Render writes both. Names follow Prometheus' conventions: base units
// (seconds, bytes), `_total` for counters; the agent's GPU telemetry keeps
// dcgm-exporter's names so existing dashboards work unchanged.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <prometheus/metric_family.h>
#include <prometheus/registry.h>

namespace tessera::metrics {

using Labels = std::map<std::string, std::string>;

inline constexpr const char* kContentType = "text/plain; version=0.0.4; charset=utf-8";

class Snapshot {
 public:
  // Opens a family; the series added next belong to it. A family opened twice
  // is one family.
  Snapshot& Gauge(const std::string& name, const std::string& help);
  Snapshot& Counter(const std::string& name, const std::string& help);
  Snapshot& Add(const Labels& labels, double value);

  // The registry's metrics (if any) and the snapshot's, as Prometheus reads them.
  std::string Render(const prometheus::Registry* registry = nullptr) const;

 private:
  Snapshot& Open(const std::string& name, const std::string& help, prometheus::MetricType type);
  std::vector<prometheus::MetricFamily> families_;
  prometheus::MetricFamily* open_ = nullptr;
};

// Histogram buckets for latencies from a millisecond to an hour (seconds).
std::vector<double> LatencyBuckets();

}  // namespace tessera::metrics
