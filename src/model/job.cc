#include "model/job.h"

#include <csignal>

#include <array>
#include <functional>
#include <numeric>

#include "model/cluster.h"

namespace tessera::model {
namespace {

Resources PerTask(const TaskRequest& r) {
  // A whole-GPU task holds all the memory of its GPUs; its gpu_memory is a
  // lower bound on the GPU model, not an amount, so it is not summed here. A
  // fraction's proportional share is known only where it lands: 0 here.
  return Resources{r.gpu_milli, r.fractional() ? r.gpu_memory : 0, r.cpu_milli, r.memory};
}

std::uint64_t Mix(std::uint64_t h, std::uint64_t v) {
  // boost::hash_combine's mixing step, widened to 64 bits.
  return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 12) + (h >> 4));
}

}  // namespace

std::uint64_t Job::ShapeFingerprint() const {
  std::uint64_t h = Mix(static_cast<std::uint64_t>(topology.level), topology.required);
  for (const TaskGroup& g : groups) {
    for (std::int64_t v : {g.request.gpu_milli, g.request.gpu_memory, g.request.cpu_milli, g.request.memory,
                           static_cast<std::int64_t>(g.request.models), static_cast<std::int64_t>(g.request.sharing),
                           std::int64_t{g.replicas}, std::int64_t{g.min_replicas}, std::int64_t{g.one_per_node}}) {
      h = Mix(h, static_cast<std::uint64_t>(v));
    }
    if (!g.request.mig_profile.empty()) h = Mix(h, std::hash<std::string>{}(g.request.mig_profile));
  }
  return h;
}

bool TaskRequest::FitsOn(const Gpu& gpu) const { return gpu.Takes(gpu_milli, MemoryOn(gpu.memory), sharing, mig_profile); }

GpuShare TaskRequest::ShareOn(GpuId id, const Gpu& gpu) const {
  GpuShare share{id, static_cast<std::int32_t>(gpu_milli), MemoryOn(gpu.memory), sharing};
  if (sharing == GpuSharing::kMig) share.mig = gpu.FreeMig(mig_profile);
  return share;
}

std::optional<std::int32_t> ParseCheckpointSignal(std::string_view name) {
  static constexpr std::pair<std::string_view, int> kSignals[] = {
      {"SIGUSR1", SIGUSR1}, {"SIGUSR2", SIGUSR2}, {"SIGTERM", SIGTERM}, {"SIGINT", SIGINT}, {"SIGHUP", SIGHUP}};
  for (const auto& [n, number] : kSignals) {
    if (n == name) return number;
  }
  return std::nullopt;
}

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

void Job::Remember() {
  min_gpu_milli_ = MinRequest().gpu_milli;
  shape_ = ShapeFingerprint();
  remembered_ = true;
}

std::int32_t ArrayProgress::created() const { return std::accumulate(by_state.begin(), by_state.end(), 0); }

Job ArrayElement(const Job& parent, std::int32_t position) {
  Job element = parent;
  element.id = ArrayElementId(parent.id, position);
  element.state = JobState::kPending;
  element.is_array_parent = false;
  element.array_parent = parent.id;
  element.array_index = parent.array->indices[static_cast<std::size_t>(position)];
  element.array_progress = {};
  element.depends_on.clear();
  element.singleton = false;
  element.not_before = 0;
  element.restarts = 0;
  element.placements.clear();
  element.held = {};
  element.attained_gpu_seconds = 0;
  return element;
}

Resources SumPlacements(const std::vector<TaskPlacement>& placements) {
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

}  // namespace tessera::model
