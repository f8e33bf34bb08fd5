// Hierarchical quotas with borrowing and reclaim (docs/scheduling.md).
//
// Assumptions: quotas are counted in GPUs; every queue on a job's path to the
// root constrains it.
// Admit: a job may start if no queue on its path would pass its limit; a
// non-preemptible job additionally may not push the non-preemptible GPUs of
// any queue on its path past its guarantee, because borrowed capacity must
// stay reclaimable. (Its own queue's borrowed preemptible jobs do not count:
// they can be reclaimed.)
// Reclaim: a preemptor may take a preemptible victim's resources when, below
// their lowest common ancestor, every queue on the victim's side would still
// hold at least its guarantee without the victim, while every queue on the
// preemptor's side would still be within its own after the preemptor starts.
// So reclaim only ever returns a queue towards its guarantee, and never takes
// a queue below its own.
#pragma once

#include "sched/extension_points.h"

namespace tessera::sched {

class HierarchicalQuota final : public Admission {
 public:
  std::optional<Denial> Admit(const model::Job& job, const model::QueueTree& queues) const override;
  std::int64_t GpuHeadroom(const model::Job& job, const model::QueueTree& queues) const override;
  bool MayReclaim(const model::Job& preemptor, const model::Job& victim,
                  const model::QueueTree& queues) const override;
};

}  // namespace tessera::sched
