#include "controlplane/gpu_usage.h"

#include <algorithm>

namespace tessera::controlplane {

UsageDelta Observe(TaskMeter& meter, double gpus, double utilization, std::int64_t now_ms, const IdlePolicy& policy) {
  UsageDelta delta;
  const std::int64_t dt = meter.last_ms < 0 ? 0 : std::clamp<std::int64_t>(now_ms - meter.last_ms, 0, policy.max_gap_ms);
  meter.last_ms = now_ms;
  delta.gpu_seconds = gpus * static_cast<double>(dt) / 1000.0;
  if (utilization >= policy.threshold_percent) {
    meter.idle_since_ms = -1;
    return delta;
  }
  if (meter.idle_since_ms < 0) meter.idle_since_ms = now_ms - dt;
  const std::int64_t idle_for = now_ms - meter.idle_since_ms;
  if (idle_for < policy.window_ms) return delta;
  // Crossing the window counts the whole streak; afterwards, each interval.
  const std::int64_t counted = idle_for - dt < policy.window_ms ? idle_for : dt;
  delta.idle_gpu_seconds = gpus * static_cast<double>(counted) / 1000.0;
  return delta;
}

}  // namespace tessera::controlplane
