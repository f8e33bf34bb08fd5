#!/bin/bash
#SBATCH --job-name=day-long
#SBATCH --time=1-00:00
#SBATCH --gpus-per-node=1
# D-HH:MM, a day of training (this one ends at once).
# expect: ^a day-long job named day-long$

echo "a day-long job named $SLURM_JOB_NAME"
