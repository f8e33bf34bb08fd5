// The work a run loses when it is stopped before it ends (preempted,
// reclaimed, failed and restarted, requeued off a lost node): the GPUs its
// tasks hold times the time since its last checkpoint. The last checkpoint
// is the latest one a task reported (TESSERA_CHECKPOINT_FILE), else the
// latest multiple of the job's checkpoint interval since the run was placed,
// else the placement itself: the same reading of "last checkpoint" the
// scheduler's victim cost uses (sched/plugins/least_lost_work.h).
#pragma once

#include <cstdint>

#include "base/clock.h"
#include "controlplane/records.h"

namespace tessera::controlplane {

double LostGpuSeconds(const JobRecord& record, Seconds checkpoint_interval, std::int64_t now_ms);

}  // namespace tessera::controlplane
