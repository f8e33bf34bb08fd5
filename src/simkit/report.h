// The simulation report as one self-contained HTML file (charts drawn as
// inline SVG, no scripts, no network): the summary figures, utilization and
// queue length over time, the JCT distribution, queueing delay by job size
// and each queue's share of GPU time.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "base/status.h"
#include "simkit/packing.h"
#include "simkit/simulator.h"

namespace tessera::simkit {

Status WriteHtmlReport(const SimResult& result, const nlohmann::json& summary, const std::string& path);
// The packing study's page: its figures and the allocation-versus-demand
// curve, averaged over the seeds.
Status WritePackingHtmlReport(const PackingResult& result, const nlohmann::json& summary, const std::string& path);

}  // namespace tessera::simkit
