#include "sched/plugins/job_order.h"

#include <tuple>

namespace tessera::sched {

bool FifoOrder::Before(const model::Job& a, const model::Job& b) const {
  return std::tie(a.submit_time, a.id) < std::tie(b.submit_time, b.id);
}

bool OracleShortestFirstOrder::Before(const model::Job& a, const model::Job& b) const {
  return std::tie(a.oracle_duration, a.submit_time, a.id) < std::tie(b.oracle_duration, b.submit_time, b.id);
}

bool ShortestFirstOrder::Before(const model::Job& a, const model::Job& b) const {
  const Seconds wa = a.walltime > 0 ? a.walltime : default_walltime_;
  const Seconds wb = b.walltime > 0 ? b.walltime : default_walltime_;
  return std::tie(wa, a.submit_time, a.id) < std::tie(wb, b.submit_time, b.id);
}

}  // namespace tessera::sched
