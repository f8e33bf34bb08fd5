#include "sched/plugins/easy_backfill.h"

#include <algorithm>
#include <bit>
#include <functional>

#include "sched/session.h"

namespace tessera::sched {
namespace {
constexpr std::size_t kExactTries = 128;
}

std::optional<Reservation> EasyBackfill::Reserve(Session& session, model::JobId head) {
  if (!StillHolds(session, head)) {
    last_ = Compute(session, head);
    releases_ = session.state().releases();  // after Compute's own what-if releases
  }
  return last_;
}

bool EasyBackfill::StillHolds(const Session& session, model::JobId head) const {
  const SchedulerState& state = session.state();
  if (!last_ || last_->job != head || session.now() >= last_->start || state.releases() != releases_) return false;
  const model::Cluster& cluster = state.cluster();
  if (last_->nodes.size() != cluster.nodes().size()) return false;
  // What the gang needs on each reserved node, beyond the GPUs it names.
  std::vector<std::int64_t> cpu(cluster.nodes().size(), 0), memory(cluster.nodes().size(), 0);
  std::vector<std::uint8_t> taken(cluster.gpus().size(), 0);
  for (const model::TaskPlacement& task : placement_) {
    if (!cluster.node(task.node).schedulable) return false;
    cpu[task.node.index()] += task.cpu_milli;
    memory[task.node.index()] += task.memory;
    for (const model::GpuShare& share : task.gpus) {
      if (!cluster.gpu(share.gpu).healthy) return false;
      taken[share.gpu.index()] = 1;
    }
  }
  for (model::JobId id : state.jobs().running()) {
    const model::Job& job = state.job(id);
    if (std::max(session.now(), job.start_time + session.Walltime(job)) <= last_->start) continue;
    for (const model::TaskPlacement& task : job.placements) {
      if (!last_->nodes[task.node.index()]) continue;
      cpu[task.node.index()] += task.cpu_milli;
      memory[task.node.index()] += task.memory;
      for (const model::GpuShare& share : task.gpus) {
        if (taken[share.gpu.index()]) return false;
      }
    }
  }
  for (std::size_t n = 0; n < cpu.size(); ++n) {
    const model::Node& node = cluster.nodes()[n];
    if (last_->nodes[n] && (cpu[n] > node.cpu_milli || memory[n] > node.memory)) return false;
  }
  return true;
}

std::optional<Reservation> EasyBackfill::Compute(Session& session, model::JobId head) {
  SchedulerState& state = session.state();
  const model::Job& gang = state.job(head);
  // Expected ends as a min-heap: usually only the first few are released
  // before the gang fits, so heapifying (linear) beats sorting them all.
  std::vector<std::pair<Time, model::JobId>> ends;
  ends.reserve(state.jobs().running().size());
  for (model::JobId id : state.jobs().running()) {
    const model::Job& job = state.job(id);
    ends.emplace_back(std::max(session.now(), job.start_time + session.Walltime(job)), id);
  }
  std::make_heap(ends.begin(), ends.end(), std::greater<>());

  Statement& statement = session.statement();
  const Statement::Checkpoint mark = statement.Mark();
  const std::int64_t need = gang.MinGpuMilli();
  std::optional<Reservation> reservation;
  std::vector<model::TaskPlacement> placement;
  std::size_t tries = 0;
  for (std::size_t released = 1; !ends.empty() && !reservation; ++released) {
    std::pop_heap(ends.begin(), ends.end(), std::greater<>());
    const auto [end, id] = ends.back();
    ends.pop_back();
    statement.Evict(id, head, EvictReason::kPreempt);  // what-if only: rolled back below
    const model::Resources free = state.cluster().capacity() - state.cluster().allocated();
    if (free.gpu_milli < need) continue;
    if (++tries > kExactTries && !ends.empty() && !std::has_single_bit(released)) continue;
    placement.clear();
    if (session.plugins().placement->Place(gang, state.cluster(), PlaceOptions{}, placement).fits()) {
      reservation = Reservation{head, end, std::vector<std::uint8_t>(state.cluster().nodes().size(), 0)};
      for (const model::TaskPlacement& task : placement) reservation->nodes[task.node.index()] = 1;
      placement_ = placement;
    }
  }
  statement.RollbackTo(mark);
  return reservation;
}

}  // namespace tessera::sched
