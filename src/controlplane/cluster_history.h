// Utilization over time, for the dashboard's chart (GET /v1/cluster/history):
// one sample of the cluster per interval, the newest `capacity` kept in
// memory (a day at the default 10 s). It is lost with the process on
// purpose: durable history is Prometheus' job (docs/observability.md).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>

#include <nlohmann/json.hpp>

namespace tessera::controlplane {

struct ClusterSample {
  std::int64_t time_ms = 0;
  double gpus = 0;       // healthy GPUs on ready nodes
  double allocated = 0;  // GPUs held, fractions by their share
  double idle = 0;       // GPUs held but under the idle threshold
  std::int64_t pending_jobs = 0;
  std::int64_t running_jobs = 0;
};

class ClusterHistory {
 public:
  explicit ClusterHistory(std::chrono::milliseconds interval = std::chrono::seconds(10), std::size_t capacity = 8640)
      : interval_ms_(interval.count()), capacity_(capacity) {}

  // Whether a sample is due at `now_ms`: the first one at once, then one per interval.
  bool Due(std::int64_t now_ms) const { return samples_.empty() || now_ms - samples_.back().time_ms >= interval_ms_; }
  void Add(const ClusterSample& sample);
  // {"intervalMs", "samples": [{"time", "gpus", "allocated", "idle", "pendingJobs", "runningJobs"}]}, oldest first.
  nlohmann::json ToJson(std::int64_t since_ms) const;

 private:
  std::int64_t interval_ms_;
  std::size_t capacity_;
  std::deque<ClusterSample> samples_;
};

}  // namespace tessera::controlplane
