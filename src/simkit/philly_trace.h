// Microsoft Philly's job trace as published (../shared/traces/philly/philly.csv):
//   timestamp,duration,num_gpus,gpu_time,cluster
//   2017-10-09 07:01:55,66.0,1,66.0,11cb48
// One row per job; `timestamp` is the submission (naive wall clock), `duration`
// the GPU run time in seconds, `cluster` the virtual cluster (VC). Rows are not
// sorted. A job of more than 8 GPUs becomes a gang of 8-GPU tasks (plus one
// task for the remainder), placed as tightly as the topology allows.
#pragma once

#include <optional>
#include <set>
#include <string>

#include "base/status.h"
#include "simkit/workload.h"

namespace tessera::simkit {

struct PhillyOptions {
  std::optional<Time> window_start;  // keep jobs submitted in [start, end)
  std::optional<Time> window_end;
  std::set<std::string> vcs;         // empty: every VC
  double load = 1.0;                 // submit offsets from the first kept job divided by this
};

// Times are seconds since the Unix epoch of the naive timestamps. Malformed
// rows are errors naming "file:line: reason"; nothing is skipped silently.
Result<Workload> LoadPhillyCsv(const std::string& path, const PhillyOptions& options);

// A Philly job of `gpus` GPUs: one task up to 8, else a gang of 8-GPU tasks
// (and one for the remainder), placed as tightly as the topology allows.
model::Job PhillyGang(const std::string& name, std::int64_t gpus);

// "2017-10-01 00:00:00" -> seconds since the epoch (read as UTC).
Result<Time> ParseTimestamp(const std::string& text);

}  // namespace tessera::simkit
