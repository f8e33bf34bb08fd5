#!/bin/bash
#SBATCH --job-name=three-nodes
#SBATCH --nodes=3
#SBATCH --ntasks-per-node=2
#SBATCH --gpus-per-node=1
#SBATCH --time=5
# Six ranks over three nodes; each node's name comes from its own step worker.
# expect: ^nodes 3 tasks 6 nodelist n\[1-3\]$
# expect: ^ranks per node: 2 2 2$

echo "nodes $SLURM_NNODES tasks $SLURM_NTASKS nodelist $SLURM_JOB_NODELIST"
echo "ranks per node: $(srun bash -c 'echo $SLURMD_NODENAME' | sort | uniq -c | awk '{print $1}' | tr '\n' ' ' | sed 's/ $//')"
