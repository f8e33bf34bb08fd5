// The invariant checker: what must hold after every scheduling cycle, whatever
// the policy. Tests run it after every cycle; debug builds run it inside the
// scheduler too.
//   * no GPU holds more than 1000 milli-GPUs or more memory than it has; no node
//     more CPU or memory than it has;
//   * the GPU and node state is exactly the sum of the running jobs' placements;
//   * gangs are atomic: a running job holds at least its minimum members of
//     every task group and at most all of them; any other job holds nothing;
//   * nothing runs on an unhealthy GPU;
//   * no queue holds more GPUs than its limit, nor more non-preemptible GPUs
//     than its guarantee, and queue usage is exactly the sum of its jobs';
//   * the capacity indexes agree with the state they index;
//   * an array job holds nothing, and its counts are its elements' states.
#pragma once

#include <string>
#include <vector>

#include "model/cluster.h"
#include "model/job.h"
#include "model/queue.h"

namespace tessera::model {

// Returns one line per violation; empty when everything holds.
std::vector<std::string> CheckInvariants(const Cluster& cluster, const std::vector<Job>& jobs,
                                         const QueueTree& queues);

}  // namespace tessera::model
