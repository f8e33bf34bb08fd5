// The server's record (GET /v1/cluster/record) read back into what the
// simulator runs: the cluster the agents registered, the queues and the
// scheduler configuration the server runs, and its ended jobs as a workload.
// `tessera whatif` replays it twice.
//
// A job replays as it really ran: submitted when it was (seconds after
// `since`), running as long as its last run did (runningTime to endTime:
// a job that failed or was cancelled while running holds its GPUs as long
// as it did). Jobs that ended before `since` are the history a learning
// policy starts from; jobs submitted before `since` that ended after it,
// and jobs that never ran, are not replayed, only counted.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "base/status.h"
#include "model/cluster.h"
#include "model/queue.h"
#include "sched/config.h"
#include "simkit/workload.h"

namespace tessera::cli {

struct RecordedCluster {
  std::vector<model::NodeSpec> nodes;
  std::vector<model::QueueSpec> queues;
  sched::SchedulerConfig scheduler;
  simkit::Workload workload;
  std::int64_t straddling = 0;  // submitted before `since`, ended after it
  std::int64_t never_ran = 0;   // ended without running (cancelled while pending)
  std::int64_t unfinished = 0;  // pending or running when the record was taken
};

Result<RecordedCluster> ReadClusterRecord(const nlohmann::json& record, std::int64_t since_ms);

}  // namespace tessera::cli
