#!/bin/bash
#SBATCH --job-name=exclusive
#SBATCH --nodes=1
#SBATCH --exclusive
#SBATCH --time=5
# The whole node: every GPU on it.
# expect: ^exclusive with 4 GPUs: 0,1,2,3$

echo "exclusive with $SLURM_GPUS_ON_NODE GPUs: $CUDA_VISIBLE_DEVICES"
