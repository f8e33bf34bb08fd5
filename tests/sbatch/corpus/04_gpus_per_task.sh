#!/bin/bash
#SBATCH --job-name=gpus-per-task
#SBATCH --nodes=2
#SBATCH --ntasks=4
#SBATCH --gpus-per-task=1
#SBATCH --cpus-per-task=1
#SBATCH --time=10:00
# Four ranks, one GPU each, two per node: srun's ranks across nodes.
# expect: ^0: procid 0 localid 0 nodeid 0 world 4$
# expect: ^1: procid 1 localid 1 nodeid 0 world 4$
# expect: ^2: procid 2 localid 0 nodeid 1 world 4$
# expect: ^3: procid 3 localid 1 nodeid 1 world 4$
# expect: ^ntasks 4 per node 2$

echo "ntasks $SLURM_NTASKS per node $SLURM_NTASKS_PER_NODE"
srun --label bash -c 'echo "procid $SLURM_PROCID localid $SLURM_LOCALID nodeid $SLURM_NODEID world $WORLD_SIZE"'
