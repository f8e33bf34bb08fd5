// Victim cost: the GPU-seconds of work a preemption destroys.
//
// Assumption: a preempted job restarts from its last checkpoint, so what is
// lost is the work done since then, on every GPU it holds.
// Algorithm: cost = GPUs held x (now - last checkpoint). The last checkpoint is
// the latest one the job reported, or, for a job that declares a checkpoint
// interval, the latest multiple of it since start; for neither, its start.
// Why: evicting a 64-GPU gang that checkpointed a minute ago loses less than a
// single GPU job that ran for a day without one; GPU count alone gets this wrong.
#pragma once

#include "sched/extension_points.h"

namespace tessera::sched {

class LeastLostWork final : public VictimCost {
 public:
  double Cost(const model::Job& victim, Time now) const override;
};

}  // namespace tessera::sched
