#include "spec/plugin_args/fgd_args_yaml.h"

namespace tessera::spec {

Result<sched::FgdArgs> ParseFgdArgs(const YamlValue& value) {
  auto map = YamlMap::Read(value, {"workload"});
  if (!map.ok()) return map.status();
  sched::FgdArgs args;
  const auto workload = map->Find("workload");
  if (!workload) return args;
  auto items = workload->Items();
  if (!items.ok()) return items.status();
  for (const YamlValue& item : *items) {
    auto task = YamlMap::Read(item, {"gpus", "cpus", "memory", "weight"});
    if (!task.ok()) return task.status();
    sched::TaskClass c;
    TESSERA_RETURN_IF_ERROR(task->ReadMilli("gpus", &c.gpu_milli));
    TESSERA_RETURN_IF_ERROR(task->ReadMilli("cpus", &c.cpu_milli));
    TESSERA_RETURN_IF_ERROR(task->ReadBytes("memory", &c.memory));
    TESSERA_RETURN_IF_ERROR(task->ReadNumber("weight", &c.weight));
    args.workload.push_back(c);
  }
  return args;
}

}  // namespace tessera::spec
