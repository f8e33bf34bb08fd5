#include "sched/plugins/job_order.h"

#include <algorithm>
#include <tuple>

namespace tessera::sched {

bool FifoOrder::Before(const model::Job& a, const model::Job& b, Time) const {
  return std::tie(a.submit_time, a.id) < std::tie(b.submit_time, b.id);
}

bool OracleShortestFirstOrder::Before(const model::Job& a, const model::Job& b, Time) const {
  return std::tie(a.oracle_duration, a.submit_time, a.id) < std::tie(b.oracle_duration, b.submit_time, b.id);
}

bool ShortestFirstOrder::Before(const model::Job& a, const model::Job& b, Time) const {
  const Seconds wa = a.walltime > 0 ? a.walltime : default_walltime_;
  const Seconds wb = b.walltime > 0 ? b.walltime : default_walltime_;
  return std::tie(wa, a.submit_time, a.id) < std::tie(wb, b.submit_time, b.id);
}

std::size_t LasOrder::QueueOf(const model::Job& job, Time now) const {
  const double attained = job.AttainedService(now);
  return static_cast<std::size_t>(std::upper_bound(thresholds_.begin(), thresholds_.end(), attained) - thresholds_.begin());
}

bool LasOrder::Before(const model::Job& a, const model::Job& b, Time now) const {
  const std::size_t qa = QueueOf(a, now), qb = QueueOf(b, now);
  return std::tie(qa, a.submit_time, a.id) < std::tie(qb, b.submit_time, b.id);
}

bool LasOrder::Displaces(const model::Job& a, const model::Job& b, Time now) const { return QueueOf(a, now) < QueueOf(b, now); }

namespace {
// Seconds of true run time left: the whole gang runs together, so the time run
// is its attained GPU-seconds over its GPUs.
double Remaining(const model::Job& job, Time now) {
  const double gpus = static_cast<double>(std::max<std::int64_t>(job.MinGpuMilli(), 1)) / 1000.0;
  return static_cast<double>(job.oracle_duration) - job.AttainedService(now) / gpus;
}
}  // namespace

bool OracleSrtfOrder::Before(const model::Job& a, const model::Job& b, Time now) const {
  const double ra = Remaining(a, now), rb = Remaining(b, now);
  return std::tie(ra, a.submit_time, a.id) < std::tie(rb, b.submit_time, b.id);
}

}  // namespace tessera::sched
