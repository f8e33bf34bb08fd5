// reclaim: a job whose queue is below its guarantee takes back capacity that
// other queues borrowed, evicting their preemptible jobs (the Admission plugin
// decides which victims are fair game). Jobs held back by their own queue's
// limit do not qualify: evicting others would not help them.
#include "sched/actions/preemptive_action.h"

namespace tessera::sched {
namespace {

class Reclaim final : public PreemptiveAction {
 protected:
  EvictReason reason() const override { return EvictReason::kReclaim; }
  void Prepare(const Session& session) override {
    const model::QueueTree& queues = session.state().queues();
    borrowing_ = false;
    for (const model::Queue& q : queues.queues()) {
      if (q.id != queues.root() && q.allocated.gpu_milli > q.guaranteed_milli) borrowing_ = true;
    }
  }
  // Someone borrows, and the job's own queue would stay within its guarantee.
  bool Qualifies(const Session& session, const model::Job& job, const Outcome& outcome) const override {
    if (!borrowing_ || outcome.reason == WaitReason::kQueueLimit || outcome.reason == WaitReason::kUserLimit) return false;
    const model::Queue& queue = session.state().queues().queue(job.queue);
    return queue.allocated.gpu_milli + job.MinGpuMilli() <= queue.guaranteed_milli;
  }
  bool MayEvict(const Session& session, const model::Job& preemptor, const model::Job& victim) const override {
    return session.plugins().admission->MayReclaim(preemptor, victim, session.state().queues());
  }

 private:
  bool borrowing_ = false;
};

}  // namespace

std::unique_ptr<Action> MakeReclaimAction() { return std::make_unique<Reclaim>(); }

}  // namespace tessera::sched
