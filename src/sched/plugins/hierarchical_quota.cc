#include "sched/plugins/hierarchical_quota.h"

#include <algorithm>
#include <limits>

namespace tessera::sched {

std::optional<Denial> HierarchicalQuota::Admit(const model::Job& job, const model::QueueTree& queues) const {
  const std::int64_t need = job.MinGpuMilli();
  for (model::QueueId q = job.queue; q.valid() && q != queues.root(); q = queues.queue(q).parent) {
    const model::Queue& queue = queues.queue(q);
    if (queue.allocated.gpu_milli + need > queue.limit_milli) return Denial{Denial::Kind::kQueueLimit, q};
    if (queue.has_user_limit() && queue.UserHeld(job.user) + need > queue.user_limit_milli) return Denial{Denial::Kind::kUserLimit, q};
    if (!job.preemptible && queue.pinned_milli + need > queue.guaranteed_milli) {
      return Denial{Denial::Kind::kNonPreemptibleOverGuarantee, q};
    }
  }
  return std::nullopt;
}

std::int64_t HierarchicalQuota::GpuHeadroom(const model::Job& job, const model::QueueTree& queues) const {
  std::int64_t headroom = std::numeric_limits<std::int64_t>::max();
  for (model::QueueId q = job.queue; q.valid() && q != queues.root(); q = queues.queue(q).parent) {
    const model::Queue& queue = queues.queue(q);
    headroom = std::min(headroom, queue.limit_milli - queue.allocated.gpu_milli);
    if (queue.has_user_limit()) headroom = std::min(headroom, queue.user_limit_milli - queue.UserHeld(job.user));
    if (!job.preemptible) headroom = std::min(headroom, queue.guaranteed_milli - queue.pinned_milli);
  }
  return std::max<std::int64_t>(0, headroom);
}

bool HierarchicalQuota::MayReclaim(const model::Job& preemptor, const model::Job& victim,
                                   const model::QueueTree& queues) const {
  if (!victim.preemptible) return false;
  const model::QueueId lca = queues.CommonAncestor(preemptor.queue, victim.queue);
  if (lca == victim.queue || lca == preemptor.queue) return false;  // same branch: that is preemption
  for (model::QueueId q = victim.queue; q != lca; q = queues.queue(q).parent) {
    const model::Queue& queue = queues.queue(q);
    if (queue.allocated.gpu_milli - victim.Held().gpu_milli < queue.guaranteed_milli) return false;
  }
  const std::int64_t need = preemptor.MinGpuMilli();
  for (model::QueueId q = preemptor.queue; q != lca; q = queues.queue(q).parent) {
    const model::Queue& queue = queues.queue(q);
    if (queue.allocated.gpu_milli + need > queue.guaranteed_milli) return false;
  }
  return true;
}

}  // namespace tessera::sched
