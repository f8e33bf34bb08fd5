#include "sched/plugins/job_order.h"

#include <algorithm>

namespace tessera::sched {

double FifoOrder::Rank(const model::Job&, Time) const { return 0; }

double OracleShortestFirstOrder::Rank(const model::Job& job, Time) const { return static_cast<double>(job.oracle_duration); }

double ShortestFirstOrder::Rank(const model::Job& job, Time) const {
  return static_cast<double>(job.walltime > 0 ? job.walltime : default_walltime_);
}

std::size_t LasOrder::QueueOf(const model::Job& job, Time now) const {
  const double attained = job.AttainedService(now);
  return static_cast<std::size_t>(std::upper_bound(thresholds_.begin(), thresholds_.end(), attained) - thresholds_.begin());
}

double LasOrder::Rank(const model::Job& job, Time now) const { return static_cast<double>(QueueOf(job, now)); }

bool LasOrder::Displaces(const model::Job& a, const model::Job& b, Time now) const { return QueueOf(a, now) < QueueOf(b, now); }

// Seconds of true run time left: the whole gang runs together, so the time run
// is its attained GPU-seconds over its GPUs.
double OracleSrtfOrder::Rank(const model::Job& job, Time now) const {
  const double gpus = static_cast<double>(std::max<std::int64_t>(job.MinGpuMilli(), 1)) / 1000.0;
  return static_cast<double>(job.oracle_duration) - job.AttainedService(now) / gpus;
}

}  // namespace tessera::sched
