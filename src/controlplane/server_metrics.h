// The server's event-driven metrics: counters and histograms updated where
// things happen (cycles, placements, preemptions, job starts). The values
// read off the state at scrape time (queues, nodes, GPUs, jobs by state) are
// computed by ControlPlane::Metrics (metrics.cc). docs/observability.md lists
// every name.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

namespace tessera::controlplane {

struct ServerMetrics {
  ServerMetrics();

  prometheus::Registry registry;
  prometheus::Counter& cycles;
  prometheus::Counter& cycles_discarded;        // decisions dropped: the state changed under them
  prometheus::Histogram& cycle_duration;        // seconds
  prometheus::Counter& placements;              // runs started (gangs placed)
  prometheus::Counter& preemptions;             // runs evicted by priority
  prometheus::Counter& reclaims;                // runs evicted to return borrowed quota
  // GPU-seconds of work lost by runs stopped before they ended (lost_work.h), by why.
  prometheus::Family<prometheus::Counter>& lost_gpu_seconds;
  prometheus::Counter& lost_to_preemption;
  prometheus::Counter& lost_to_reclaim;
  prometheus::Counter& lost_to_failure;         // a task failed or hung: the gang restarts or fails
  prometheus::Counter& lost_to_requeue;         // not the job's doing: a node lost, drained, a task lost
  prometheus::Counter& submitted;
  prometheus::Counter& forgotten;               // ended jobs dropped after their retention
  prometheus::Histogram& queue_wait;            // submit -> placed, seconds: how long a gang waited
  prometheus::Histogram& submit_to_running;     // submit -> every task running, seconds
};

}  // namespace tessera::controlplane
