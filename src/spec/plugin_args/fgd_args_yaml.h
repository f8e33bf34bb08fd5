// pluginArgs.fgd, the arguments of fgd placement: the task mix it packs for.
//   fgd:
//     workload:
//       - {gpus: 0.5, cpus: 4, memory: 16Gi, weight: 3}
//       - {gpus: 8, weight: 1}
#pragma once

#include "base/status.h"
#include "sched/plugins/node_packing.h"
#include "spec/yaml_util.h"

namespace tessera::spec {

Result<sched::FgdArgs> ParseFgdArgs(const YamlValue& value);

}  // namespace tessera::spec
