#!/bin/bash
#SBATCH --job-name=srun-failure
#SBATCH -N 2
#SBATCH --ntasks-per-node=1
#SBATCH --time=5
# srun exits with the worst exit code of its tasks; the script decides.
# expect: ^srun exited 7$

srun bash -c 'exit $((SLURM_PROCID * 7))'
echo "srun exited $?"
