// spec.array and spec.sweep of a Job document into the job's model::JobArray
// (model/job_array.h; docs/job-spec.md, "Arrays and sweeps"):
//
//   spec:
//     array: "0-99%10"          # Slurm's syntax: 100 elements, at most 10 at a time
//
//   spec:
//     sweep:                    # the cartesian product: 3 x 4 = 12 elements
//       lr: [0.1, 0.01, 0.001]
//       batch: {from: 32, to: 128, step: 32}
//     array: "%4"               # with a sweep, only a limit
//
// Errors name the field: "spec.sweep.batch.step: must be at least 1".
#pragma once

#include "base/status.h"
#include "model/job.h"
#include "spec/yaml_util.h"

namespace tessera::spec {

// Reads spec.array and spec.sweep, when written, into `job` (its array and
// is_array_parent).
Status ParseJobArray(const YamlMap& spec, model::Job& job);

}  // namespace tessera::spec
