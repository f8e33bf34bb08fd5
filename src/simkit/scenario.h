// Scenario tests as data: a YAML file with a cluster, queues, scheduler
// settings, jobs (with their true durations), timed events and the expected
// placements, preemptions and reasons at given times. The runner replays it on
// a virtual clock through the same scheduler core the server runs and reports
// every expectation that did not hold. tests/scenarios/README.md documents the
// format; the same files drive CTest (label `scenario`) and `tessera scenario`.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace tessera::simkit {

struct ScenarioReport {
  std::string name;
  std::vector<std::string> failures;  // one line per expectation that did not hold
  std::vector<std::string> log;       // what happened, for people reading a failure
  int cycles = 0;
  int checks = 0;                     // expectations evaluated
};

// Loads and replays the scenario file. A malformed file is an error; failed
// expectations are reported in the ScenarioReport.
Result<ScenarioReport> RunScenarioFile(const std::string& path);

}  // namespace tessera::simkit
