// An action is one step of a scheduling cycle. The cycle runs them from least
// to most disruptive: allocate (free capacity, in order), backfill (smaller
// jobs around the reservation of the blocked head-of-line gang), reclaim
// (queues below their guarantee take back what others borrowed), preempt
// (higher priority displaces lower within a queue).
#pragma once

#include <memory>

#include "sched/session.h"

namespace tessera::sched {

class Action {
 public:
  virtual ~Action() = default;
  virtual void Run(Session& session) = 0;
};

std::unique_ptr<Action> MakeAllocateAction();
std::unique_ptr<Action> MakeBackfillAction();
std::unique_ptr<Action> MakeReclaimAction();
std::unique_ptr<Action> MakePreemptAction();

}  // namespace tessera::sched
