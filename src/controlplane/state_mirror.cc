#include "controlplane/state_mirror.h"

#include <cassert>

namespace tessera::controlplane {

void StateMirror::Replace(std::unique_ptr<sched::SchedulerState> live) {
  live_ = std::move(live);
  copy_stale_ = true;
  changes_.clear();
}

void StateMirror::Record(Change change) {
  if (!copy_stale_) changes_.push_back(std::move(change));
}

void StateMirror::TouchJob(model::JobId id) {
  if (in_cycle_) touched_jobs_.insert(id.value());
}

void StateMirror::TouchNode(model::NodeId node) {
  if (in_cycle_) touched_nodes_.insert(node.value());
}

model::JobId StateMirror::Submit(model::Job job, Time now) {
  const model::JobId id = live_->Submit(job, now);
  // The copy hands out the same id: it has seen the same submissions in the same order.
  Record([job = std::move(job), now](sched::SchedulerState& s) mutable { s.Submit(std::move(job), now); });
  return id;
}

model::JobId StateMirror::Restore(model::Job job) {
  for (const model::TaskPlacement& task : job.placements) TouchNode(task.node);
  const model::JobId id = live_->Restore(job);
  Record([job = std::move(job)](sched::SchedulerState& s) mutable { s.Restore(std::move(job)); });
  return id;
}

void StateMirror::Finish(model::JobId id, model::JobState end, Time now) {
  TouchJob(id);
  live_->Finish(id, end, now);
  Record([id, end, now](sched::SchedulerState& s) { s.Finish(id, end, now); });
}

bool StateMirror::Requeue(model::JobId id, Time now) {
  TouchJob(id);
  Record([id, now](sched::SchedulerState& s) { s.Requeue(id, now); });
  return live_->Requeue(id, now);
}

void StateMirror::Unbind(model::JobId id, Time now) {
  TouchJob(id);
  live_->Unbind(id, now);
  Record([id, now](sched::SchedulerState& s) { s.Unbind(id, now); });
}

void StateMirror::Checkpointed(model::JobId id, Time at) {
  live_->Checkpointed(id, at);
  Record([id, at](sched::SchedulerState& s) { s.Checkpointed(id, at); });
}

void StateMirror::Learn(model::QueueId queue, std::int64_t gpu_milli, Seconds ran) {
  live_->Learn(queue, gpu_milli, ran);
  Record([queue, gpu_milli, ran](sched::SchedulerState& s) { s.Learn(queue, gpu_milli, ran); });
}

void StateMirror::Forget(const std::vector<model::JobId>& ended) {
  live_->Forget(ended);
  Record([ended](sched::SchedulerState& s) { s.Forget(ended); });
}

void StateMirror::SkipIds(model::JobId next) {
  live_->jobs().SkipIds(next);
  Record([next](sched::SchedulerState& s) { s.jobs().SkipIds(next); });
}

model::JobId StateMirror::CancelUnstarted(model::JobId parent, std::int32_t position) {
  TouchJob(parent);  // a cycle that spawned this array's elements may have started this one
  const model::JobId id = live_->CancelUnstarted(parent, position);
  Record([parent, position](sched::SchedulerState& s) { s.CancelUnstarted(parent, position); });
  return id;
}

void StateMirror::SetSchedulable(model::NodeId node, bool schedulable) {
  if (!schedulable) TouchNode(node);
  live_->cluster().SetSchedulable(node, schedulable);
  Record([node, schedulable](sched::SchedulerState& s) { s.cluster().SetSchedulable(node, schedulable); });
}

void StateMirror::SetImages(model::NodeId node, const std::vector<std::uint64_t>& images) {
  live_->cluster().SetImages(node, images);
  Record([node, images](sched::SchedulerState& s) { s.cluster().SetImages(node, images); });
}

std::vector<model::JobId> StateMirror::SetGpuHealthy(model::GpuId gpu, bool healthy) {
  if (!healthy) TouchNode(live_->cluster().gpu(gpu).node);
  Record([gpu, healthy](sched::SchedulerState& s) { s.SetGpuHealthy(gpu, healthy); });
  return live_->SetGpuHealthy(gpu, healthy);
}

StateMirror::CatchUp StateMirror::BeginCycle() {
  CatchUp catch_up;
  if (copy_stale_) {
    // The one copy of the whole state made under the mutex: at the first
    // cycle, and after a rebuild or a conflict.
    catch_up.fresh = std::make_unique<sched::SchedulerState>(live_->Fork());
    copy_stale_ = false;
  }
  catch_up.changes.swap(changes_);
  in_cycle_ = true;
  touched_jobs_.clear();
  touched_nodes_.clear();
  return catch_up;
}

sched::SchedulerState& StateMirror::CatchUpCopy(CatchUp catch_up) {
  if (catch_up.fresh) copy_ = std::move(catch_up.fresh);
  for (Change& change : catch_up.changes) change(*copy_);
  return *copy_;
}

bool StateMirror::EndCycle(const CycleDecisions& decisions) {
  in_cycle_ = false;
  bool conflict = copy_stale_;  // replaced while the cycle ran: its ids may name other nodes
  for (const sched::Eviction& e : decisions.evicted) conflict = conflict || touched_jobs_.contains(e.victim.value());
  for (const auto& [parent, element] : decisions.spawned) conflict = conflict || touched_jobs_.contains(parent.value());
  for (const auto& [id, placements] : decisions.bound) {
    conflict = conflict || touched_jobs_.contains(id.value());
    for (const model::TaskPlacement& task : placements) conflict = conflict || touched_nodes_.contains(task.node.value());
  }
  if (conflict) {
    copy_stale_ = true;
    changes_.clear();
    return false;
  }
  // The same calls, in the same order, that the cycle's statement made on the copy.
  for (const sched::Eviction& e : decisions.evicted) live_->Unbind(e.victim, decisions.now);
  // An array untouched since the copy caught up spawns here what it spawned
  // there: the same positions, so the same ids.
  for (const auto& [parent, element] : decisions.spawned) {
    [[maybe_unused]] const model::JobId made = live_->SpawnElement(parent);
    assert(made == element);
  }
  for (const auto& [id, placements] : decisions.bound) live_->Bind(id, placements, decisions.now);
  live_->queues().CopyUsageAverages(copy_->queues());
  return true;
}

}  // namespace tessera::controlplane
