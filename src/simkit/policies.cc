#include "simkit/policies.h"

#include <string>

namespace tessera::simkit {

// Every baseline is greedy allocation in its own order, without the default
// set's reservation, reclaim or learned order.
Result<sched::SchedulerConfig> PolicyConfig(std::string_view name) {
  sched::SchedulerConfig config;
  if (name == "default") return config;
  config.reservation = "none";
  config.actions = {"allocate"};
  config.job_order = "fifo";
  config.preempt_by_job_order = false;
  if (name == "fifo") return config;
  if (name == "sjf") {
    config.job_order = "oracle-shortest-first";
    return config;
  }
  if (name == "srtf" || name == "las") {
    config.job_order = name == "srtf" ? "oracle-srtf" : "las";
    config.actions = {"allocate", "preempt"};
    config.preempt_by_job_order = true;
    config.max_preemptors_per_cycle = 64;
    return config;
  }
  return InvalidArgument("--policy: unknown policy '" + std::string(name) + "' (known: default, fifo, sjf, srtf, las)");
}

}  // namespace tessera::simkit
