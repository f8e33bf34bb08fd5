#!/bin/bash
#SBATCH --job-name=export-all
#SBATCH --export=ALL,RUN_MODE=offline
#SBATCH --time=2
# The submitter's environment travels (ALL), plus a variable of the script's own.
# expect: ^marker=from-submitter mode=offline$

echo "marker=${CORPUS_MARKER:-unset} mode=$RUN_MODE"
