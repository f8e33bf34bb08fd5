// A Statement is the scheduler's transaction over SchedulerState: every bind
// and eviction is applied at once (so later placements see it) and logged, so
// that a checkpoint can be rolled back exactly. Nothing reaches the Binder
// until Commit. This is what makes a gang all-or-nothing and lets preemption
// try a set of victims and take it back when the preemptor still would not fit.
#pragma once

#include <cstddef>
#include <vector>

#include "sched/binder.h"
#include "sched/state.h"

namespace tessera::sched {

class Statement {
 public:
  Statement(SchedulerState& state, Time now) : state_(state), now_(now) {}
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();  // an uncommitted statement rolls back

  using Checkpoint = std::size_t;
  Checkpoint Mark() const { return log_.size(); }
  void RollbackTo(Checkpoint mark);

  void Bind(model::JobId job, std::vector<model::TaskPlacement> placements);
  void Evict(model::JobId victim, model::JobId preemptor, EvictReason reason);
  // The array job's next element, made to be bound (SchedulerState::SpawnElement).
  model::JobId Spawn(model::JobId parent);

  // Reports every logged decision to the binder, in order, and clears the log:
  // evictions, then each spawned element (before its bind) and each bind.
  void Commit(Binder& binder);

 private:
  struct Op {
    enum class Kind { kBind, kEvict, kSpawn } kind;
    model::JobId job;
    model::JobId preemptor;
    EvictReason reason = EvictReason::kPreempt;
    // What the job held (evictions) and its runtime fields before the op.
    std::vector<model::TaskPlacement> placements;
    Time start_time = 0;
    Time last_checkpoint = 0;
    double attained_gpu_seconds = 0;
  };
  SchedulerState& state_;
  Time now_;
  std::vector<Op> log_;
};

}  // namespace tessera::sched
