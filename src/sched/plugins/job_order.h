// Job order within one queue and priority band.
//
// fifo: earliest submission first, the job id breaking ties, so order is
// total and deterministic.
// shortest-first: smallest walltime estimate first (jobs without one count the
// configured default), then FIFO. It shortens average completion time when
// estimates are honest; since it only reads estimates, never true durations,
// it is not an oracle.
#pragma once

#include <vector>

#include "sched/extension_points.h"

namespace tessera::sched {

class FifoOrder final : public JobOrder {
 public:
  double Rank(const model::Job& job, Time now) const override;
};

// las: Tiresias' discretised two-dimensional least attained service (Gu et
// al., NSDI'19). A job's queue is the number of thresholds its attained
// GPU-seconds (GPUs x time run) have passed; lower queues go first, FIFO within
// a queue. Needs no duration. A waiting job displaces a running one only from
// a lower queue: within a queue a preempted job would be resumed in FIFO order
// anyway, and evicting for FIFO order alone time-slices jobs that are equally
// far along (on Philly at --load 4: 1% longer average JCT, 40% more preemptions).
// las's argument (pluginArgs.las): GPU-seconds of attained service at which a
// job drops to the next level; by default 1 and 10 GPU-hours.
struct LasArgs {
  std::vector<double> thresholds = {3600.0, 36000.0};
};

class LasOrder final : public JobOrder {
 public:
  explicit LasOrder(std::vector<double> thresholds) : thresholds_(std::move(thresholds)) {}
  double Rank(const model::Job& job, Time now) const override;
  bool Displaces(const model::Job& a, const model::Job& b, Time now) const override;
  std::size_t QueueOf(const model::Job& job, Time now) const;

 private:
  std::vector<double> thresholds_;  // GPU-seconds, ascending
};

// oracle-srtf: shortest remaining true time first (Job::oracle_duration minus
// the time run so far): the preemptive oracle baseline.
class OracleSrtfOrder final : public JobOrder {
 public:
  double Rank(const model::Job& job, Time now) const override;
};

// oracle-shortest-first: the true duration (Job::oracle_duration), for the
// simulator's SJF baseline. An oracle: no real scheduler knows it.
class OracleShortestFirstOrder final : public JobOrder {
 public:
  double Rank(const model::Job& job, Time now) const override;
};

class ShortestFirstOrder final : public JobOrder {
 public:
  explicit ShortestFirstOrder(Seconds default_walltime) : default_walltime_(default_walltime) {}
  double Rank(const model::Job& job, Time now) const override;

 private:
  Seconds default_walltime_;
};

}  // namespace tessera::sched
