#!/bin/bash
#SBATCH -J hostlist
#SBATCH -N 2
#SBATCH --gpus-per-node=1
#SBATCH -t 1:00
# Job scripts often expand the nodelist (scontrol show hostnames); ours reads it compressed.
# expect: ^first node n[0-9] of n\[[0-9,-]+\], 2 nodes$

echo "first node $SLURMD_NODENAME of $SLURM_JOB_NODELIST, $SLURM_JOB_NUM_NODES nodes"
