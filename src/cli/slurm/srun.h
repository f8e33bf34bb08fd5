// `tessera srun` (the `srun` a batch step puts first on PATH): launches a
// step's tasks across the allocation, as Slurm's srun does inside sbatch.
//   srun [-n N] [-N M] [--ntasks-per-node K] [-l] [-D DIR] CMD ARGS...
// Defaults: the job's ntasks (SLURM_NTASKS) over all its nodes, block
// distribution. Tasks on this node are forked directly; those of other
// nodes go through the node's step worker (step_protocol.h). Each task gets
// SLURM_PROCID, SLURM_LOCALID, SLURM_NODEID, SLURM_STEP_ID and the gang
// variables (slurm_env.h); their output streams to srun's stdout and stderr
// (with -l, each line prefixed "RANK: "); srun exits with the worst exit
// code. Options Slurm's srun has that change nothing here (--mpi,
// --cpu-bind, --gpus-per-task, ...) are accepted; unknown ones are errors.
// Every connection has a deadline (TESSERA_SRUN_CONNECT_TIMEOUT, 60 s);
// after that srun waits for its tasks, which end with the job.
#pragma once

#include <string>
#include <vector>

namespace tessera::cli::slurm {

int RunSrun(const std::vector<std::string>& args);

}  // namespace tessera::cli::slurm
