#!/bin/bash
#SBATCH --job-name=chdir
#SBATCH --chdir=work14
#SBATCH --time=2
# Runs in a directory relative to the submit directory; -o lands there too.
# expect: ^cwd ends in /work14, submitted from /.+$

echo "cwd ends in /$(basename "$PWD"), submitted from $SLURM_SUBMIT_DIR"
