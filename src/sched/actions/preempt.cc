// preempt: within one queue, a higher-priority job displaces preemptible jobs
// of strictly lower priority. Across queues, only reclaim moves capacity, so
// priority never overrides another queue's guarantee.
#include "sched/actions/preemptive_action.h"

#include <algorithm>
#include <limits>
#include <vector>

namespace tessera::sched {
namespace {

class Preempt final : public PreemptiveAction {
 protected:
  EvictReason reason() const override { return EvictReason::kPreempt; }
  void Prepare(const Session& session) override {
    lowest_.assign(session.state().queues().queues().size(), std::numeric_limits<std::int32_t>::max());
    for (model::JobId id : session.state().jobs().running()) {
      const model::Job& job = session.state().job(id);
      if (job.preemptible) lowest_[job.queue.index()] = std::min(lowest_[job.queue.index()], job.priority);
    }
  }
  // Some preemptible job of its queue runs at a lower priority.
  bool Qualifies(const Session&, const model::Job& job, const Outcome&) const override {
    return job.priority > lowest_[job.queue.index()];
  }
  bool MayEvict(const Session&, const model::Job& preemptor, const model::Job& victim) const override {
    return victim.queue == preemptor.queue && victim.priority < preemptor.priority;
  }

 private:
  std::vector<std::int32_t> lowest_;  // per queue: lowest priority of a running preemptible job
};

}  // namespace

std::unique_ptr<Action> MakePreemptAction() { return std::make_unique<Preempt>(); }

}  // namespace tessera::sched
