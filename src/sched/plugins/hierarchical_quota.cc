#include "sched/plugins/hierarchical_quota.h"

namespace tessera::sched {

std::optional<Denial> HierarchicalQuota::Admit(const model::Job& job, const model::QueueTree& queues) const {
  const std::int64_t need = job.MinRequest().gpu_milli;
  for (model::QueueId q = job.queue; q.valid() && q != queues.root(); q = queues.queue(q).parent) {
    const model::Queue& queue = queues.queue(q);
    if (queue.allocated.gpu_milli + need > queue.limit_milli) return Denial{Denial::Kind::kQueueLimit, q};
    if (!job.preemptible && queue.allocated.gpu_milli + need > queue.guaranteed_milli) {
      return Denial{Denial::Kind::kNonPreemptibleOverGuarantee, q};
    }
  }
  return std::nullopt;
}

bool HierarchicalQuota::MayReclaim(const model::Job& preemptor, const model::Job& victim,
                                   const model::QueueTree& queues) const {
  if (!victim.preemptible) return false;
  const model::QueueId lca = queues.CommonAncestor(preemptor.queue, victim.queue);
  if (lca == victim.queue || lca == preemptor.queue) return false;  // same branch: that is preemption
  const model::Queue& victim_branch = queues.queue(queues.ChildToward(lca, victim.queue));
  if (victim_branch.allocated.gpu_milli <= victim_branch.guaranteed_milli) return false;
  const std::int64_t need = preemptor.MinRequest().gpu_milli;
  for (model::QueueId q = preemptor.queue; q != lca; q = queues.queue(q).parent) {
    const model::Queue& queue = queues.queue(q);
    if (queue.allocated.gpu_milli + need > queue.guaranteed_milli) return false;
  }
  return true;
}

}  // namespace tessera::sched
