// The step worker of a node of a Slurm allocation other than node 0: listens
// on its port (step_protocol.h), runs the tasks srun asks for with the
// node's own GPUs and Tessera variables, streams their output back, and
// exits 0 when node 0's step runner says the batch step ended (or 143 when
// the agent stops the task).
#pragma once

#include "cli/slurm/slurm_env.h"

namespace tessera::cli::slurm {

int RunStepWorker(const AllocationView& allocation, const Environment& env);

}  // namespace tessera::cli::slurm
