#!/bin/bash
#SBATCH -J standby-sweep
#SBATCH --qos=standby
#SBATCH --no-requeue
#SBATCH --gpus=1
#SBATCH --time=0:30
# Low-priority work that yields to everything else.
# expect: ^standby ran$

echo "standby ran"
