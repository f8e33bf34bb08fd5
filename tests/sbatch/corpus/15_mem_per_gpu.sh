#!/bin/bash
#SBATCH --job-name=mem-per-gpu
#SBATCH --nodes=2
#SBATCH --gpus-per-node=2
#SBATCH --mem-per-gpu=8G
#SBATCH --time=5
# expect: ^mem per node 16384 per gpu 8192$
# expect: ^nodelist n\[[0-9][-,][0-9]\]$

echo "mem per node $SLURM_MEM_PER_NODE per gpu $SLURM_MEM_PER_GPU"
echo "nodelist $SLURM_JOB_NODELIST"
