// Test helper shared by the model's tests: one node as the cluster builder
// receives it, with everything but the name and GPU count defaulted.
#pragma once

#include <cstdint>
#include <string>

#include "base/quantity.h"
#include "model/cluster.h"

namespace tessera::model {

inline NodeSpec MakeNode(std::string name, std::int32_t gpus, std::string leaf = "leaf-0", std::string spine = "spine-0",
                         std::string gpu_model = "H100", std::int64_t gpu_memory = 80 * kGiB) {
  NodeSpec spec;
  spec.name = std::move(name);
  spec.gpu_model = std::move(gpu_model);
  spec.gpus = gpus;
  spec.gpu_memory = gpu_memory;
  spec.cpu_milli = 64'000;
  spec.memory = 512 * kGiB;
  spec.leaf = std::move(leaf);
  spec.spine = std::move(spine);
  return spec;
}

}  // namespace tessera::model
