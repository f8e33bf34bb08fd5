#include "spec/mig_yaml.h"

#include "model/mig.h"

namespace tessera::spec {

Result<std::vector<std::vector<std::string>>> ParseMigLayout(const YamlValue& value, int gpu_count) {
  TESSERA_RETURN_IF_ERROR(YamlMap::Read(value).status());  // a map, no key twice
  std::vector<std::vector<std::string>> layout(static_cast<std::size_t>(gpu_count));
  for (auto it = value.node().begin(); it != value.node().end(); ++it) {
    const YAML::Node key = it->first;  // copies: `it` yields proxies
    const YAML::Node devices = it->second;
    const YamlValue index_value(key, value.source(), value.path(), key.Mark());
    if (gpu_count == 0) return index_value.Error("there are no GPUs to put in MIG mode");
    Result<std::int64_t> gpu = index_value.Int(0, gpu_count - 1);
    if (!gpu.ok()) return gpu.status();
    const YamlValue list(devices, value.source(), value.FieldPath(key.Scalar()), devices.Mark());
    Result<std::vector<YamlValue>> items = list.Items();
    if (!items.ok()) return items.status();
    if (items->empty()) return list.Error("a GPU in MIG mode has at least one device");
    for (const YamlValue& item : *items) {
      Result<std::string> profile = item.String();
      if (!profile.ok()) return profile.status();
      if (Result<model::MigProfile> parsed = model::ParseMigProfile(*profile); !parsed.ok()) return item.Error(parsed.status().message());
      layout[static_cast<std::size_t>(*gpu)].push_back(*profile);
    }
  }
  return layout;
}

}  // namespace tessera::spec
