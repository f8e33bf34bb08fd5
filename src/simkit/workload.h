// A workload for the simulator: jobs with their submission time and their true
// duration. The true duration is what the job really runs; the scheduling core
// sees it only through oracle policies (docs/simulator.md), never otherwise.
#pragma once

#include <string>
#include <vector>

#include "base/clock.h"
#include "model/job.h"

namespace tessera::simkit {

struct WorkloadJob {
  model::Job job;        // queue left invalid: the simulator resolves `queue`
  std::string queue = "default";
  Time submit = 0;
  Seconds duration = 0;  // true run time on its GPUs, without interruptions
  std::string group;     // the trace's own grouping (Philly VC, ...), for breakdowns
};

struct Workload {
  std::string source;
  std::vector<WorkloadJob> jobs;
  // Jobs that ended before the first of `jobs` arrives (submit and duration
  // as in the trace): what the cluster already knows of its run times when
  // the simulation starts, as a real scheduler knows its own past. Learning
  // policies start from it; none of them is simulated.
  std::vector<WorkloadJob> history;
};

}  // namespace tessera::simkit
