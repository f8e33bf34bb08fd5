#!/bin/bash
#SBATCH -J urgent-eval
#SBATCH -q high
#SBATCH --requeue
#SBATCH -G 1
#SBATCH -t 3
# expect: ^qos high restart 0$

echo "qos $SLURM_JOB_QOS restart $SLURM_RESTART_COUNT"
