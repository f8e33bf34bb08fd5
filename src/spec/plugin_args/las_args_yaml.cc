#include "spec/plugin_args/las_args_yaml.h"

namespace tessera::spec {

Result<sched::LasArgs> ParseLasArgs(const YamlValue& value) {
  auto map = YamlMap::Read(value, {"thresholds"});
  if (!map.ok()) return map.status();
  sched::LasArgs args;
  const auto thresholds = map->Find("thresholds");
  if (!thresholds) return args;
  auto items = thresholds->Items();
  if (!items.ok()) return items.status();
  args.thresholds.clear();
  for (const YamlValue& item : *items) {
    auto seconds = item.Number();
    if (!seconds.ok()) return seconds.status();
    if (*seconds <= (args.thresholds.empty() ? 0.0 : args.thresholds.back())) {
      return item.Error("thresholds must be positive and ascending");
    }
    args.thresholds.push_back(*seconds);
  }
  return args;
}

}  // namespace tessera::spec
