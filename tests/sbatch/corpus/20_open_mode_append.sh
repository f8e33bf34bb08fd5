#!/bin/bash
#SBATCH --job-name=append-log
#SBATCH --output=append-log.out
#SBATCH --open-mode=append
#SBATCH --time=2
# Appends to one log across runs.
# expect: ^appended by [0-9]+$

echo "appended by $SLURM_JOB_ID"
