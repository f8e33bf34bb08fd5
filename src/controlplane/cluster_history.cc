#include "controlplane/cluster_history.h"

namespace tessera::controlplane {

void ClusterHistory::Add(const ClusterSample& sample) {
  samples_.push_back(sample);
  while (samples_.size() > capacity_) samples_.pop_front();
}

nlohmann::json ClusterHistory::ToJson(std::int64_t since_ms) const {
  nlohmann::json samples = nlohmann::json::array();
  for (const ClusterSample& s : samples_) {
    if (s.time_ms < since_ms) continue;
    samples.push_back({{"time", s.time_ms},
                       {"gpus", s.gpus},
                       {"allocated", s.allocated},
                       {"idle", s.idle},
                       {"pendingJobs", s.pending_jobs},
                       {"runningJobs", s.running_jobs}});
  }
  return {{"intervalMs", interval_ms_}, {"samples", std::move(samples)}};
}

}  // namespace tessera::controlplane
