// Scheduler configuration in YAML: which plugin serves each extension point,
// which actions run, and their knobs (docs/scheduling.md lists them all).
//   scheduler:
//     jobOrder: shortest-first
//     reservation: easy-backfill
//     actions: [allocate, backfill, reclaim, preempt]
//     fairShareHalfLife: 1d
//     defaultWalltime: 24h
//     maxDomainTries: 8
//     maxPreemptorsPerCycle: 16
//     pluginArgs: {las: {thresholds: [3600, 36000]}}   # spec/plugin_args/
// Unknown keys are errors; plugin names are checked when the scheduler is built.
#pragma once

#include "base/status.h"
#include "sched/config.h"
#include "spec/yaml_util.h"

namespace tessera::spec {

Result<sched::SchedulerConfig> ParseSchedulerConfig(const YamlValue& value);
// A whole SchedulerConfig document (`tessera server --scheduler-config`,
// `tessera whatif --scheduler`): kind SchedulerConfig, the fields above in
// spec. Empty text is the default configuration.
Result<sched::SchedulerConfig> ParseSchedulerConfigDocument(std::string_view text, std::string_view source);

}  // namespace tessera::spec
