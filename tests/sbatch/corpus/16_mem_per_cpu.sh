#!/bin/bash
#SBATCH --job-name=mem-per-cpu
#SBATCH --ntasks=2
#SBATCH --cpus-per-task=1
#SBATCH --mem-per-cpu=1G
#SBATCH --time=5
# Two CPU tasks on one node (no GPU), as data preparation often is.
# expect: ^cpus on node 2 mem 2048$
# expect: ^1: rank 1 on node 0$

echo "cpus on node $SLURM_CPUS_ON_NODE mem $SLURM_MEM_PER_NODE"
srun -l bash -c 'echo "rank $SLURM_PROCID on node $SLURM_NODEID"'
