// Can this job ever run on this cluster, under these queues? Answers "never"
// with a reason the user can act on, naming the job-spec field at fault:
//   spec.tasks[0].resources.gpus: 9 GPUs per task, but the largest node has 8
//   spec.topology: the gang needs 16 GPUs inside one node, but the largest node has 8
// Judged on the empty, healthy cluster: what passes may still have to wait.
#pragma once

#include "base/status.h"
#include "model/cluster.h"
#include "model/job.h"
#include "model/queue.h"

namespace tessera::model {

Status CheckFeasible(const Job& job, const Cluster& cluster, const QueueTree& queues);

}  // namespace tessera::model
