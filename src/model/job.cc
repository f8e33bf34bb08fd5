#include "model/job.h"

#include <array>

namespace tessera::model {
namespace {

Resources PerTask(const TaskRequest& r) {
  // A whole-GPU task holds all the memory of its GPUs; its gpu_memory is a
  // lower bound on the GPU model, not an amount, so it is not summed here.
  return Resources{r.gpu_milli, r.fractional() ? r.gpu_memory : 0, r.cpu_milli, r.memory};
}

}  // namespace

std::string_view ToString(JobState state) {
  static constexpr std::array<std::string_view, 5> kNames = {"Pending", "Running", "Succeeded",
                                                              "Failed", "Cancelled"};
  return kNames[static_cast<int>(state)];
}

Resources Job::TotalRequest() const {
  Resources total;
  for (const TaskGroup& g : groups) total += PerTask(g.request) * g.replicas;
  return total;
}

Resources Job::MinRequest() const {
  Resources total;
  for (const TaskGroup& g : groups) total += PerTask(g.request) * g.min_replicas;
  return total;
}

Resources Job::Held() const {
  Resources held;
  for (const TaskPlacement& t : placements) {
    held.cpu_milli += t.cpu_milli;
    held.memory += t.memory;
    for (const GpuShare& s : t.gpus) {
      held.gpu_milli += s.milli;
      held.gpu_memory += s.memory;
    }
  }
  return held;
}

std::int32_t Job::TaskCount() const {
  std::int32_t n = 0;
  for (const TaskGroup& g : groups) n += g.replicas;
  return n;
}

}  // namespace tessera::model
