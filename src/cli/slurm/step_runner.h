// `tessera slurm-step`: the command of every task of a job `tessera sbatch`
// submitted (sbatch_job.h). On node rank 0 it runs the batch script as
// Slurm's batch step: in the task's working directory, with Slurm's
// environment (slurm_env.h), an `srun` first on PATH, its output in the
// task's log and in the -o/-e files, the time limit and its warning signal
// enforced; when the script ends, it tells every other node's step worker to
// finish and exits with the script's exit code. On every other node it is a
// step worker: it listens for srun's launch requests (step_protocol.h) and
// exits 0 when node 0 says the batch step has ended. So the gang succeeds
// when the script exits 0, and fails with its exit code otherwise.
//
// Signals: a checkpoint signal or a stop from the agent reaches every
// process of the task's group; the runner itself ignores the checkpoint
// signals (the script and the tasks handle them) and outlives SIGTERM only
// as long as its children do.
#pragma once

namespace tessera::cli::slurm {

// The exit code of the step.
int RunSlurmStep();

}  // namespace tessera::cli::slurm
