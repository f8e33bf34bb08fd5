#!/bin/bash
#SBATCH --job-name=single-gpu
#SBATCH --partition=default
#SBATCH --account=default
#SBATCH --gres=gpu:1
#SBATCH --cpus-per-task=2
#SBATCH --mem=4G
#SBATCH --time=00:10:00
#SBATCH --output=single-gpu-%j.out
# A single-GPU job as most centres' first example.
# expect: ^job [0-9]+ on n[0-9] with 1 GPU\(s\): [0-9]$
# expect: ^partition default account default cpus 2 mem 4096$

echo "job $SLURM_JOB_ID on $SLURMD_NODENAME with $SLURM_GPUS_ON_NODE GPU(s): $CUDA_VISIBLE_DEVICES"
echo "partition $SLURM_JOB_PARTITION account $SLURM_JOB_ACCOUNT cpus $SLURM_CPUS_PER_TASK mem $SLURM_MEM_PER_NODE"
python3 -c 'import os; print("python sees", os.environ["CUDA_VISIBLE_DEVICES"])'
