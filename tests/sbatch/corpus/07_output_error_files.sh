#!/bin/bash
#SBATCH --job-name=split-logs
#SBATCH --output=logs-%x-%j.out
#SBATCH --error=logs-%x-%j.err
#SBATCH --time=2
# Separate stdout and stderr files, named by job name and id.
# expect: ^to stdout$

echo "to stdout"
echo "to stderr" >&2
