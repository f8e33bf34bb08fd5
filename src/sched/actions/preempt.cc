// preempt: within one queue, a higher-priority job displaces preemptible jobs
// of strictly lower priority (and, with preempt_by_job_order, jobs of equal
// priority that the job order lets it displace: SRTF, LAS). Across queues, only
// reclaim moves capacity, so priority never overrides another queue's guarantee.
#include "sched/actions/preemptive_action.h"

#include <vector>

namespace tessera::sched {
namespace {

class Preempt final : public PreemptiveAction {
 protected:
  EvictReason reason() const override { return EvictReason::kPreempt; }
  void Prepare(const Session& session) override {
    weakest_.assign(session.state().queues().queues().size(), nullptr);
    for (model::JobId id : session.state().jobs().running()) {
      const model::Job& job = session.state().job(id);
      const model::Job*& weakest = weakest_[job.queue.index()];
      if (job.preemptible && (!weakest || Outranks(session, *weakest, job))) weakest = &job;
    }
  }
  // It outranks the weakest preemptible job running in its queue.
  bool Qualifies(const Session& session, const model::Job& job, const Outcome&) const override {
    const model::Job* weakest = weakest_[job.queue.index()];
    return weakest && Outranks(session, job, *weakest);
  }
  bool MayEvict(const Session& session, const model::Job& preemptor, const model::Job& victim) const override {
    return victim.queue == preemptor.queue && Outranks(session, preemptor, victim);
  }

 private:
  // Strictly higher priority; or, with preempt_by_job_order, equal priority
  // and displacing it in the job order.
  static bool Outranks(const Session& session, const model::Job& a, const model::Job& b) {
    if (a.priority != b.priority) return a.priority > b.priority;
    return session.config().preempt_by_job_order && session.plugins().job_order->Displaces(a, b, session.now());
  }

  std::vector<const model::Job*> weakest_;  // per queue: the running preemptible job every other outranks
};

}  // namespace

std::unique_ptr<Action> MakePreemptAction() { return std::make_unique<Preempt>(); }

}  // namespace tessera::sched
