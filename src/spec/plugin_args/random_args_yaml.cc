#include "spec/plugin_args/random_args_yaml.h"

#include <limits>

namespace tessera::spec {

Result<sched::RandomArgs> ParseRandomArgs(const YamlValue& value) {
  auto map = YamlMap::Read(value, {"seed"});
  if (!map.ok()) return map.status();
  sched::RandomArgs args;
  TESSERA_RETURN_IF_ERROR(map->ReadInt("seed", &args.seed, 0, std::numeric_limits<std::int64_t>::max()));
  return args;
}

}  // namespace tessera::spec
