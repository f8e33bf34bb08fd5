// tessera bench virtual-cluster: joins virtual agents (with GPU telemetry) to
// a running server and submits jobs of mixed sizes, then holds the load until
// stopped. It is how the dashboard and the API are looked at under a cluster
// of 25,000 GPUs without the hardware (tests/browser/dashboard_scale.sh).
#pragma once

#include <cstdint>
#include <string>

namespace tessera::bench {

struct VirtualClusterOptions {
  std::string server;            // http://host:port
  int agents = 3125;
  int gpus_per_agent = 8;
  std::int64_t jobs = 20'000;    // sized 1, 1, 1, 1, 2, 2, 4, 8 GPUs in turn
  double task_seconds = 3600;    // how long each virtual task runs
  double duration_seconds = 0;   // 0: until SIGINT or SIGTERM
};

// Returns an error message, or "" when the load ran its course.
std::string RunVirtualCluster(const VirtualClusterOptions& options);

}  // namespace tessera::bench
