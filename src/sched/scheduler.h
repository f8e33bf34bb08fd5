// The scheduling core's entry point. One call runs one cycle over the state:
// the configured actions in order, inside one Statement, committed to the
// Binder at the end. Same code in the server (real clock), the simulator
// (virtual clock) and the tests.
#pragma once

#include <memory>
#include <vector>

#include "base/status.h"
#include "sched/actions/action.h"
#include "sched/binder.h"
#include "sched/config.h"
#include "sched/outcome.h"
#include "sched/session.h"
#include "sched/state.h"

namespace tessera::sched {

class Scheduler {
 public:
  static Result<Scheduler> Create(const SchedulerConfig& config);

  CycleResult RunCycle(SchedulerState& state, Time now, Binder& binder);
  const SchedulerConfig& config() const { return *config_; }

 private:
  Scheduler() = default;
  std::unique_ptr<SchedulerConfig> config_;  // stable address: sessions keep a reference
  std::unique_ptr<Plugins> plugins_;
  std::vector<std::unique_ptr<Action>> actions_;
  Time last_decay_ = kNever;
};

// A message a user can act on, for one outcome ("waiting: queue research/nlp
// is at its limit of 32 GPUs").
std::string Explain(const Outcome& outcome, const SchedulerState& state);

}  // namespace tessera::sched
