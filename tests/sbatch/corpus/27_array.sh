#!/bin/bash
#SBATCH --job-name=array-shards
#SBATCH --array=0-6:2%2
#SBATCH --gres=gpu:1
#SBATCH --time=00:05:00
#SBATCH --output=array-%A_%a.out
# A job array: four elements (indices 0, 2, 4, 6), at most two at a time.
# Each element is its own job with its own SLURM_JOB_ID, runs the script
# with SLURM_ARRAY_TASK_ID, and writes its own -o file (%A the array, %a
# the index). Checked element by element by the corpus test.
# expect-array: 0 2 4 6
# expect: ^element [0246] of array [0-9]+ \(job [0-9]+\): count 4, min 0, max 6$
# expect: ^step of element [0246]$

echo "element $SLURM_ARRAY_TASK_ID of array $SLURM_ARRAY_JOB_ID (job $SLURM_JOB_ID): count $SLURM_ARRAY_TASK_COUNT, min $SLURM_ARRAY_TASK_MIN, max $SLURM_ARRAY_TASK_MAX"
srun echo "step of element $SLURM_ARRAY_TASK_ID"
