// Fixed-point resource quantities. GPUs are counted in milli-GPUs so that a
// quarter of a GPU is 250 and sums stay exact; memory in bytes; CPU in
// millicores. The four resources are a fixed struct rather than a map: they are
// what every GPU scheduler decides on, and a struct keeps the hot path free of
// lookups.
#pragma once

#include <algorithm>
#include <cstdint>

namespace tessera::model {

struct Resources {
  std::int64_t gpu_milli = 0;
  std::int64_t gpu_memory = 0;  // bytes of GPU memory
  std::int64_t cpu_milli = 0;
  std::int64_t memory = 0;      // bytes of host memory

  Resources& operator+=(const Resources& o) {
    gpu_milli += o.gpu_milli;
    gpu_memory += o.gpu_memory;
    cpu_milli += o.cpu_milli;
    memory += o.memory;
    return *this;
  }
  Resources& operator-=(const Resources& o) {
    gpu_milli -= o.gpu_milli;
    gpu_memory -= o.gpu_memory;
    cpu_milli -= o.cpu_milli;
    memory -= o.memory;
    return *this;
  }
  friend Resources operator+(Resources a, const Resources& b) { return a += b; }
  friend Resources operator-(Resources a, const Resources& b) { return a -= b; }
  friend Resources operator*(Resources a, std::int64_t n) {
    a.gpu_milli *= n;
    a.gpu_memory *= n;
    a.cpu_milli *= n;
    a.memory *= n;
    return a;
  }
  bool operator==(const Resources&) const = default;

  // The largest share of any resource relative to a capacity: the "dominant
  // share" of Dominant Resource Fairness.
  double DominantShare(const Resources& capacity) const {
    const auto share = [](std::int64_t used, std::int64_t total) {
      return total > 0 ? static_cast<double>(used) / static_cast<double>(total) : 0.0;
    };
    return std::max({share(gpu_milli, capacity.gpu_milli), share(gpu_memory, capacity.gpu_memory),
                     share(cpu_milli, capacity.cpu_milli), share(memory, capacity.memory)});
  }
};

}  // namespace tessera::model
