#!/bin/bash
#SBATCH --job-name=singleton-chain
#SBATCH --dependency=singleton
#SBATCH --gres=gpu:1
#SBATCH --time=5
# One at a time per name and user: a resubmitting training chain.
# expect: ^singleton link ran$

echo "singleton link ran"
