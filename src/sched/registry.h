// The one explicit registry of policies and actions. Every plugin a
// SchedulerConfig may name is listed in registry.cc, nowhere else.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "sched/actions/action.h"
#include "sched/config.h"
#include "sched/session.h"

namespace tessera::sched {

// Builds the plugins a configuration names; an unknown name is an error that
// lists the known ones.
Result<Plugins> BuildPlugins(const SchedulerConfig& config);
Result<std::vector<std::unique_ptr<Action>>> BuildActions(const SchedulerConfig& config);

}  // namespace tessera::sched
