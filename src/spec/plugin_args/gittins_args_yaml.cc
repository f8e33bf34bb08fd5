#include "spec/plugin_args/gittins_args_yaml.h"

namespace tessera::spec {

Result<sched::GittinsArgs> ParseGittinsArgs(const YamlValue& value) {
  auto map = YamlMap::Read(value, {"displaceFactor"});
  if (!map.ok()) return map.status();
  sched::GittinsArgs args;
  TESSERA_RETURN_IF_ERROR(map->ReadNumber("displaceFactor", &args.displace_factor));
  if (!(args.displace_factor >= 1)) {
    return InvalidArgument("pluginArgs.gittins.displaceFactor: must be at least 1 (a waiting job evicts a running one only for an index this many times higher)");
  }
  return args;
}

}  // namespace tessera::spec
