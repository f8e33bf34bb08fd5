// The simulator's policies by name, each a configuration of the one
// scheduling core (docs/simulator.md):
//   default  Tessera's own set (priority, DRF, the Gittins index learned online, EASY
//            backfill on predicted run times, reclaim, preemption): what the server runs
//   fifo     submission order, greedy, no preemption
//   sjf      oracle shortest-job-first, greedy, no preemption
//   srtf     oracle shortest-remaining-time-first, preemptive
//   las      Tiresias' discretised least attained service, preemptive
#pragma once

#include <string_view>

#include "base/status.h"
#include "sched/config.h"

namespace tessera::simkit {

Result<sched::SchedulerConfig> PolicyConfig(std::string_view name);

}  // namespace tessera::simkit
