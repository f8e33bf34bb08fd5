#!/bin/bash
#SBATCH --job-name=export-none
#SBATCH --export=NONE,ONLY_THIS=1
#SBATCH --time=2
# Only what is named: the submitter's variables stay behind.
# expect: ^marker=unset only=1$

echo "marker=${CORPUS_MARKER:-unset} only=$ONLY_THIS"
