#include "simkit/burst_model.h"

#include <algorithm>
#include <map>
#include <set>

namespace tessera::simkit {

void BurstModel::Accrue(Time now) {
  std::int64_t borrowed = 0;
  for (const Burst& b : bursts_) borrowed += b.bytes;
  stats_.byte_seconds += static_cast<double>(borrowed) * static_cast<double>(now - accrued_to_);
  accrued_to_ = now;
}

std::int64_t BurstModel::BorrowedOn(model::GpuId gpu) const {
  std::int64_t sum = 0;
  for (const Burst& b : bursts_) sum += b.gpu == gpu ? b.bytes : 0;
  return sum;
}

void BurstModel::Start(const sched::SchedulerState& state, model::JobId id, Time now) {
  Accrue(now);
  const model::Job& job = state.job(id);
  for (const model::TaskPlacement& task : job.placements) {
    // Loaders refuse a burst without a checkpoint signal; there is no way to ask for it back.
    const std::int64_t allowance =
        job.checkpoint_signal > 0 ? job.groups[static_cast<std::size_t>(task.group)].request.gpu_memory_burst : 0;
    for (const model::GpuShare& share : task.gpus) {
      if (allowance <= 0 || share.milli >= 1000 || share.sharing != model::GpuSharing::kVgpu) continue;
      const model::Gpu& gpu = state.cluster().gpu(share.gpu);
      const std::int64_t free = gpu.memory - gpu.used_memory - BorrowedOn(share.gpu);
      if (free <= 0) continue;
      bursts_.push_back({id, share.gpu, std::min(allowance, free), now});
      ++stats_.bursts;
    }
  }
}

void BurstModel::Stop(model::JobId job, Time now) {
  Accrue(now);
  std::erase_if(bursts_, [&](const Burst& b) { return b.job == job; });
}

void BurstModel::Enforce(const sched::SchedulerState& state, Time now) {
  Accrue(now);
  std::map<model::GpuId, std::int64_t> borrowed;
  for (const Burst& b : bursts_) borrowed[b.gpu] += b.bytes;
  std::set<model::JobId> asked;
  for (const Burst& b : bursts_) {
    const model::Gpu& gpu = state.cluster().gpu(b.gpu);
    if (gpu.used_memory + borrowed[b.gpu] > gpu.memory || now - b.since > max_burst_) asked.insert(b.job);
  }
  stats_.given_back += static_cast<std::int64_t>(asked.size());
  std::erase_if(bursts_, [&](const Burst& b) { return asked.contains(b.job); });
}

Time BurstModel::next_expiry() const {
  Time next = kNever;
  for (const Burst& b : bursts_) next = std::min(next, b.since + max_burst_ + 1);
  return next;
}

}  // namespace tessera::simkit
