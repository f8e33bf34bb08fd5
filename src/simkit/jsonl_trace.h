// Tessera's own workload format: JSON lines, one job per line
// (docs/simulator.md has every field):
//   {"name": "train-7", "submit": 120, "duration": 3600, "queue": "research",
//    "gpus": 8, "tasks": 2, "priority": 10, "walltime": 7200,
//    "topology": "leaf", "checkpointInterval": 1800}
// `gpus` is per task (0.25 for a quarter GPU, with "gpuMemory": "20Gi"), `tasks`
// the gang size. Unknown fields, wrong types and impossible values are errors
// naming "file:line: field: reason"; blank lines and lines starting with '#'
// are skipped.
#pragma once

#include <string>

#include "base/status.h"
#include "simkit/workload.h"

namespace tessera::simkit {

Result<Workload> LoadJsonLines(const std::string& path);

}  // namespace tessera::simkit
