#include "sched/plugins/least_lost_work.h"

#include <algorithm>

namespace tessera::sched {

double LeastLostWork::Cost(const model::Job& victim, Time now) const {
  Time checkpoint = std::max(victim.start_time, victim.last_checkpoint);
  if (victim.checkpoint_interval > 0 && now > victim.start_time) {
    const Seconds ran = now - victim.start_time;
    checkpoint = std::max(checkpoint, victim.start_time + ran / victim.checkpoint_interval * victim.checkpoint_interval);
  }
  const double gpus = static_cast<double>(victim.Held().gpu_milli) / 1000.0;
  return gpus * static_cast<double>(std::max<Seconds>(0, now - checkpoint));
}

}  // namespace tessera::sched
