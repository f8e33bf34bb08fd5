// pluginArgs.gittins, the arguments of the gittins job order:
//   gittins: {displaceFactor: 2}
#pragma once

#include "base/status.h"
#include "sched/plugins/gittins_order.h"
#include "spec/yaml_util.h"

namespace tessera::spec {

Result<sched::GittinsArgs> ParseGittinsArgs(const YamlValue& value);

}  // namespace tessera::spec
