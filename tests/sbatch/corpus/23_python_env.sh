#!/usr/bin/env bash
#SBATCH --job-name=py-env
#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --gpus-per-task=2
#SBATCH --cpus-per-gpu=1
#SBATCH --mem=8000
# A script reading Slurm's variables the way job launchers do.
# expect: ^\{"cpus_on_node": "2", "gpus": "2", "nodes": "1", "cluster": "tessera", "environment": "BATCH"\}$

python3 -c '
import json, os
e = os.environ
print(json.dumps({"cpus_on_node": e["SLURM_CPUS_ON_NODE"], "gpus": e["SLURM_GPUS_ON_NODE"], "nodes": e["SLURM_NNODES"],
                  "cluster": e["SLURM_CLUSTER_NAME"], "environment": e["ENVIRONMENT"]}))
'
