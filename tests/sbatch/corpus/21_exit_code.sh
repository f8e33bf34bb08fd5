#!/bin/bash
#SBATCH --job-name=fails
#SBATCH --time=2
# The script's exit code is the job's.
# expect-exit: 3
# expect: ^about to fail$

echo "about to fail"
exit 3
