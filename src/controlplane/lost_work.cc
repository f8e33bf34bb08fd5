#include "controlplane/lost_work.h"

#include <algorithm>

namespace tessera::controlplane {

double LostGpuSeconds(const JobRecord& record, Seconds checkpoint_interval, std::int64_t now_ms) {
  if (record.tasks.empty() || now_ms <= record.scheduled_ms) return 0;
  std::int64_t since_ms = record.scheduled_ms;
  if (checkpoint_interval > 0) {
    const std::int64_t interval_ms = checkpoint_interval * 1000;
    since_ms += (now_ms - record.scheduled_ms) / interval_ms * interval_ms;
  }
  since_ms = std::max(since_ms, record.checkpoint_ms);
  double gpus = 0;
  for (const TaskRecord& t : record.tasks) gpus += static_cast<double>(t.gpus.size()) * t.gpu_milli / 1000.0;
  return gpus * static_cast<double>(std::max<std::int64_t>(0, now_ms - since_ms)) / 1000.0;
}

}  // namespace tessera::controlplane
