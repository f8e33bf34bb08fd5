// pluginArgs.random, the arguments of random placement:
//   random: {seed: 1}
#pragma once

#include "base/status.h"
#include "sched/plugins/node_packing.h"
#include "spec/yaml_util.h"

namespace tessera::spec {

Result<sched::RandomArgs> ParseRandomArgs(const YamlValue& value);

}  // namespace tessera::spec
