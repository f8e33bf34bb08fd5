// Job order within one queue and priority band.
//
// fifo: earliest submission first, the job id breaking ties, so order is
// total and deterministic.
// shortest-first: smallest walltime estimate first (jobs without one count the
// configured default), then FIFO. It shortens average completion time when
// estimates are honest; since it only reads estimates, never true durations,
// it is not an oracle.
#pragma once

#include "sched/extension_points.h"

namespace tessera::sched {

class FifoOrder final : public JobOrder {
 public:
  bool Before(const model::Job& a, const model::Job& b) const override;
};

// oracle-shortest-first: the true duration (Job::oracle_duration), for the
// simulator's SJF baseline. An oracle: no real scheduler knows it.
class OracleShortestFirstOrder final : public JobOrder {
 public:
  bool Before(const model::Job& a, const model::Job& b) const override;
};

class ShortestFirstOrder final : public JobOrder {
 public:
  explicit ShortestFirstOrder(Seconds default_walltime) : default_walltime_(default_walltime) {}
  bool Before(const model::Job& a, const model::Job& b) const override;

 private:
  Seconds default_walltime_;
};

}  // namespace tessera::sched
