#!/bin/bash
#SBATCH --job-name=with-args
#SBATCH --time=2
#SBATCH --kill-on-invalid-dep=yes
# Arguments after the script name reach the script ($1 ...): the e2e passes "--lr 3e-4".
# expect: ^args: --lr 3e-4$

echo "args: $*"
