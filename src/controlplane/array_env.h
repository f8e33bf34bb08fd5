// The environment an array element's tasks start with (model/job_array.h),
// beside the gang variables (gang_env.h):
//
//   TESSERA_ARRAY_JOB_ID       the array job's id (TESSERA_JOB_ID is the element's own)
//   TESSERA_ARRAY_INDEX        this element's index
//   TESSERA_ARRAY_COUNT        how many elements the array has
//   TESSERA_ARRAY_MIN, TESSERA_ARRAY_MAX   its lowest and highest index
//   TESSERA_ARRAY_STEP                     the distance between indices, when even (else 1)
//   TESSERA_SWEEP_<NAME>       a sweep's value of each parameter for this element
//
// The Slurm batch step turns the first five into SLURM_ARRAY_JOB_ID,
// SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT, _MIN and _MAX.
#pragma once

#include <map>
#include <string>

#include "model/job.h"

namespace tessera::controlplane {

// Empty for a job that is not an array element.
std::map<std::string, std::string> ArrayEnvironment(const model::Job& job);

}  // namespace tessera::controlplane
