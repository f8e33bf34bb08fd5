#include "controlplane/server_metrics.h"

#include "metrics/exposition.h"

namespace tessera::controlplane {
namespace {

prometheus::Counter& Counter(prometheus::Registry& r, const char* name, const char* help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(r).Add({});
}

prometheus::Histogram& Histogram(prometheus::Registry& r, const char* name, const char* help,
                                 const prometheus::Histogram::BucketBoundaries& buckets) {
  return prometheus::BuildHistogram().Name(name).Help(help).Register(r).Add({}, buckets);
}

}  // namespace

ServerMetrics::ServerMetrics()
    : cycles(Counter(registry, "tessera_scheduler_cycles_total", "Scheduling cycles run.")),
      cycles_discarded(Counter(registry, "tessera_scheduler_cycles_discarded_total",
                               "Cycles whose decisions were dropped because a job or node they named changed while they ran.")),
      cycle_duration(Histogram(registry, "tessera_scheduler_cycle_duration_seconds", "Time one scheduling cycle took.",
                               {0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5})),
      placements(Counter(registry, "tessera_scheduler_placements_total", "Runs placed (gangs started).")),
      preemptions(Counter(registry, "tessera_scheduler_preemptions_total", "Runs evicted for higher-priority work.")),
      reclaims(Counter(registry, "tessera_scheduler_reclaims_total", "Runs evicted to give borrowed quota back.")),
      lost_gpu_seconds(prometheus::BuildCounter()
                           .Name("tessera_lost_gpu_seconds_total")
                           .Help("GPU-seconds of work lost by runs stopped before they ended: GPUs held times the time since "
                                 "their last checkpoint, by why they were stopped.")
                           .Register(registry)),
      lost_to_preemption(lost_gpu_seconds.Add({{"reason", "preempted"}})),
      lost_to_reclaim(lost_gpu_seconds.Add({{"reason", "reclaimed"}})),
      lost_to_failure(lost_gpu_seconds.Add({{"reason", "failed"}})),
      lost_to_requeue(lost_gpu_seconds.Add({{"reason", "requeued"}})),
      submitted(Counter(registry, "tessera_jobs_submitted_total", "Jobs accepted.")),
      forgotten(Counter(registry, "tessera_jobs_forgotten_total", "Ended jobs forgotten after their retention.")),
      queue_wait(Histogram(registry, "tessera_job_queue_wait_seconds",
                           "Time from submission to placement of a run: how long a gang waited.",
                           metrics::LatencyBuckets())),
      submit_to_running(Histogram(registry, "tessera_job_submit_to_running_seconds",
                                  "Time from submission until every task of the first run is running.",
                                  metrics::LatencyBuckets())) {}

}  // namespace tessera::controlplane
