#!/bin/bash
#SBATCH -J ddp-torchrun
#SBATCH -N 2
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=4
#SBATCH --cpus-per-task=2
#SBATCH -t 0-01:00:00
#SBATCH -o %x-%j.out
# Multi-node DDP as the PyTorch docs show it: one torchrun per node via srun.
# torchrun is simulated by python3 reading what torchrun reads.
# expect: ^0: node_rank=0 nnodes=2 master=127\.0\.0\.1:[0-9]+ gpus=0,1,2,3$
# expect: ^1: node_rank=1 nnodes=2 master=127\.0\.0\.1:[0-9]+ gpus=0,1,2,3$

export OMP_NUM_THREADS=$SLURM_CPUS_PER_TASK
echo "nodes $SLURM_JOB_NODELIST head $MASTER_ADDR"
srun -l python3 -c '
import os
e = os.environ
print("node_rank={} nnodes={} master={}:{} gpus={}".format(e["PET_NODE_RANK"], e["PET_NNODES"], e["PET_MASTER_ADDR"],
      e["PET_MASTER_PORT"], e["CUDA_VISIBLE_DEVICES"]))
'
