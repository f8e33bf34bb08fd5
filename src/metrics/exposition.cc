#include "metrics/exposition.h"

#include <sstream>

#include <prometheus/text_serializer.h>

namespace tessera::metrics {

Snapshot& Snapshot::Open(const std::string& name, const std::string& help, prometheus::MetricType type) {
  for (prometheus::MetricFamily& f : families_) {
    if (f.name == name) {
      open_ = &f;
      return *this;
    }
  }
  families_.push_back({name, help, type, {}});
  open_ = &families_.back();
  return *this;
}

Snapshot& Snapshot::Gauge(const std::string& name, const std::string& help) {
  return Open(name, help, prometheus::MetricType::Gauge);
}

Snapshot& Snapshot::Counter(const std::string& name, const std::string& help) {
  return Open(name, help, prometheus::MetricType::Counter);
}

Snapshot& Snapshot::Add(const Labels& labels, double value) {
  prometheus::ClientMetric m;
  for (const auto& [k, v] : labels) m.label.push_back({k, v});
  if (open_->type == prometheus::MetricType::Counter) {
    m.counter.value = value;
  } else {
    m.gauge.value = value;
  }
  open_->metric.push_back(std::move(m));
  return *this;
}

std::string Snapshot::Render(const prometheus::Registry* registry) const {
  std::vector<prometheus::MetricFamily> all = registry ? registry->Collect() : std::vector<prometheus::MetricFamily>{};
  all.insert(all.end(), families_.begin(), families_.end());
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, all);
  return out.str();
}

std::vector<double> LatencyBuckets() {
  return {0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 600, 1800, 3600};
}

}  // namespace tessera::metrics
