#include "controlplane/array_env.h"

namespace tessera::controlplane {

std::map<std::string, std::string> ArrayEnvironment(const model::Job& job) {
  std::map<std::string, std::string> env;
  if (!job.is_array_element()) return env;
  const model::JobArray& array = *job.array;
  env["TESSERA_ARRAY_JOB_ID"] = std::to_string(job.array_parent.value());
  env["TESSERA_ARRAY_INDEX"] = std::to_string(job.array_index);
  env["TESSERA_ARRAY_COUNT"] = std::to_string(array.size());
  env["TESSERA_ARRAY_MIN"] = std::to_string(array.indices.front());
  env["TESSERA_ARRAY_MAX"] = std::to_string(array.indices.back());
  env["TESSERA_ARRAY_STEP"] = std::to_string(array.Step());
  for (const auto& [name, value] : array.SweepValues(job.array_index)) env[model::SweepVariable(name)] = value;
  return env;
}

}  // namespace tessera::controlplane
