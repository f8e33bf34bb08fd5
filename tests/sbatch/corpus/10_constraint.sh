#!/bin/bash
#SBATCH --job-name=constraint
#SBATCH --constraint=h100
#SBATCH --gpus=1
#SBATCH --time=5
# A GPU model by feature, as sites tag their nodes.
# expect: ^constrained job got 1 GPU$

echo "constrained job got $SLURM_GPUS_ON_NODE GPU"
