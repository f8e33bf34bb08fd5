#!/bin/bash
#SBATCH --job-name=gres-typed
#SBATCH --nodes=1
#SBATCH --gres=gpu:h100:2
#SBATCH --time=30
#SBATCH --mem-per-cpu=2G
# A typed GRES request, the older way to ask for a GPU model.
# expect: ^gpus 2 on node: [0-9],[0-9]$

echo "gpus $SLURM_GPUS_ON_NODE on node: $CUDA_VISIBLE_DEVICES"
