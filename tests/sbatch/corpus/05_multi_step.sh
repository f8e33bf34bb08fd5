#!/bin/bash
#SBATCH -J multi-step
#SBATCH -N 2
#SBATCH --gpus-per-node=1
#SBATCH -t 5
# Preprocess on one node, then train on both: two job steps.
# expect: ^prep step 0 on 1 node\(s\)$
# expect: ^train step 1 rank [01] of 2$
# expect: ^all steps done$

srun -N 1 -n 1 bash -c 'echo "prep step $SLURM_STEP_ID on $SLURM_STEP_NUM_NODES node(s)"'
srun bash -c 'echo "train step $SLURM_STEP_ID rank $SLURM_PROCID of $SLURM_NTASKS"'
echo "all steps done"
