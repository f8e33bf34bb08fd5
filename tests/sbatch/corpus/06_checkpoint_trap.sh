#!/bin/bash
#SBATCH --job-name=checkpoint-trap
#SBATCH --gres=gpu:1
#SBATCH --time=00:00:40
#SBATCH --signal=B:USR1@38
#SBATCH --requeue
# The checkpoint-before-the-time-limit pattern: the batch shell traps the
# signal Slurm sends --signal seconds before the limit, saves and exits.
# expect: ^training started$
# expect: ^caught SIGUSR1: checkpoint saved$

checkpoint() {
  echo "caught SIGUSR1: checkpoint saved"
  exit 0
}
trap checkpoint USR1
echo "training started"
for i in $(seq 1 100); do sleep 0.2; done
echo "the signal never came"
exit 1
