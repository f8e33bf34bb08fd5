// What a simulation run reports: summary.json (the figures docs/simulator.md
// defines, overall and per queue and per trace group), jobs.csv (one row per
// job) and timeseries.csv (allocation and queue length over time).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "base/status.h"
#include "simkit/simulator.h"

namespace tessera::simkit {

// `wall_s` is how long the run took, for events_per_s.
nlohmann::json Summarize(const SimResult& result, double wall_s);
// Folds the result of a simulation of a part of the workload (one Helios VC)
// into a total; time series are summed as step functions.
void Merge(SimResult& total, SimResult part);
Status WriteJobsCsv(const SimResult& result, const std::string& path);
Status WriteSeriesCsv(const SimResult& result, const std::string& path);

}  // namespace tessera::simkit
