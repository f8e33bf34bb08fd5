// pluginArgs.las, the arguments of the las job order:
//   las: {thresholds: [3600, 36000]}   # GPU-seconds between levels, ascending
#pragma once

#include "base/status.h"
#include "sched/plugins/job_order.h"
#include "spec/yaml_util.h"

namespace tessera::spec {

Result<sched::LasArgs> ParseLasArgs(const YamlValue& value);

}  // namespace tessera::spec
