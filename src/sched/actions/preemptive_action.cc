#include "sched/actions/preemptive_action.h"

#include <unordered_set>

namespace tessera::sched {

void PreemptiveAction::Run(Session& session) {
  // Nothing waits: nobody to evict for, and Prepare's scan of every running
  // job (most of a cycle's cost on a busy cluster) is saved.
  if (session.waiting().empty()) return;
  Prepare(session);
  int searches = 0;
  std::unordered_set<std::uint64_t> failed;
  const std::vector<std::size_t> waiting = session.waiting();  // copied: placing appends outcomes
  for (std::size_t index : waiting) {
    if (searches >= session.config().max_preemptors_per_cycle) return;
    const Outcome& outcome = session.outcome(index);
    const model::Job& job = session.state().job(outcome.job);
    if (job.state != model::JobState::kPending || !Qualifies(session, job, outcome)) continue;
    const std::uint64_t key = job.Shape() ^ (std::uint64_t{static_cast<std::uint32_t>(job.queue.value())} << 32) ^
                              static_cast<std::uint32_t>(job.priority);
    if (failed.contains(key)) continue;
    // An array job never evicts its own elements to start another one.
    const VictimFilter filter = [&](const model::Job& victim) { return victim.array_parent != job.id && MayEvict(session, job, victim); };
    const SearchResult result = EvictAndPlace(session, job.id, filter, reason());
    if (result != SearchResult::kNoCandidates) ++searches;
    if (result != SearchResult::kPlaced) failed.insert(key);
    if (result == SearchResult::kPlaced) {
      session.Record(job.id, Verdict::kPlaced, WaitReason::kNone);
      session.result().outcomes.back().preempted_for = true;
    }
  }
}

}  // namespace tessera::sched
