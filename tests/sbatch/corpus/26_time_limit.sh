#!/bin/bash
#SBATCH --job-name=over-time
#SBATCH --time=0:03
#SBATCH --gres=gpu:1
# A job that outlives its time limit (MM:SS, three seconds) is stopped at
# the limit with Slurm's message, and fails.
# expect-exit: 143
# expect: ^started$

echo "started"
sleep 30
echo "not reached"
