// The scheduler's state twice, so that the API never waits for a cycle.
//
// The live state is what the API reads and changes, under the control
// plane's mutex. The cycle's copy belongs to the scheduling thread alone: a
// cycle over 100,000 pending jobs runs on it without the mutex, while jobs
// are submitted, read and cancelled on the live state.
//
// Every change to the live state goes through the methods below, which also
// record it for the copy; before each cycle the copy replays what changed
// since the last one. After the cycle its decisions (evictions, then binds)
// are applied to the live state under the mutex, unless a change made while
// the cycle ran touched a job they name or took capacity from a node they
// place on: then none is applied, the copy is made anew from the live state,
// and the next cycle decides again. Changes made during a cycle that touch
// nothing it decided commute with its decisions (they end or requeue other
// jobs, which only frees capacity, or add pending jobs), so both states stay
// the same state.
#pragma once

#include <functional>
#include <memory>
#include <unordered_set>
#include <utility>
#include <vector>

#include "sched/binder.h"
#include "sched/outcome.h"
#include "sched/state.h"

namespace tessera::controlplane {

// What a cycle decided, in the order the core committed it: evictions first,
// then the array elements it spawned (each array's in order), then binds.
struct CycleDecisions {
  Time now = 0;
  std::vector<sched::Eviction> evicted;
  std::vector<std::pair<model::JobId, model::JobId>> spawned;  // (array job, element)
  std::vector<std::pair<model::JobId, std::vector<model::TaskPlacement>>> bound;
};

// The binder a cycle on the copy runs with: it records the decisions.
class DecisionRecorder final : public sched::Binder {
 public:
  explicit DecisionRecorder(CycleDecisions& decisions) : decisions_(decisions) {}
  void Bind(const model::Job& job) override { decisions_.bound.emplace_back(job.id, job.placements); }
  void Evict(const model::Job& victim, const model::Job& preemptor, sched::EvictReason reason) override {
    decisions_.evicted.push_back({victim.id, preemptor.id, reason});
  }
  void Spawn(const model::Job& element) override { decisions_.spawned.emplace_back(element.array_parent, element.id); }

 private:
  CycleDecisions& decisions_;
};

class StateMirror {
 public:
  // --- the live state: under the control plane's mutex ---------------------------
  explicit operator bool() const { return live_ != nullptr; }
  const sched::SchedulerState* operator->() const { return live_.get(); }
  const sched::SchedulerState& operator*() const { return *live_; }
  // A new live state (nodes joined, queues changed): the copy is made anew.
  void Replace(std::unique_ptr<sched::SchedulerState> live);

  // The changes, as SchedulerState's methods of the same names.
  model::JobId Submit(model::Job job, Time now);
  model::JobId Restore(model::Job job);
  void Finish(model::JobId id, model::JobState end, Time now);
  bool Requeue(model::JobId id, Time now);
  void Unbind(model::JobId id, Time now);
  // Not a conflict for a running cycle: one that chose its victims by an
  // older checkpoint only thought one of them costlier than it was.
  void Checkpointed(model::JobId id, Time at);
  void Learn(model::QueueId queue, std::int64_t gpu_milli, Seconds ran);
  void Forget(const std::vector<model::JobId>& ended);
  void SkipIds(model::JobId next);  // the job table's
  model::JobId CancelUnstarted(model::JobId parent, std::int32_t position);
  void SetSchedulable(model::NodeId node, bool schedulable);
  // Not a conflict either: which images a node holds only orders placement.
  void SetImages(model::NodeId node, const std::vector<std::uint64_t>& images);
  std::vector<model::JobId> SetGpuHealthy(model::GpuId gpu, bool healthy);

  // --- the cycle ----------------------------------------------------------------
  // What the copy must catch up on: the changes since the last cycle, or a
  // whole new copy (at the start, after a rebuild or a conflict).
  struct CatchUp {
    std::unique_ptr<sched::SchedulerState> fresh;
    std::vector<std::function<void(sched::SchedulerState&)>> changes;
  };
  // Under the mutex, as a cycle begins.
  CatchUp BeginCycle();
  // On the scheduling thread, without the mutex: the copy, caught up, for the
  // cycle to run on.
  sched::SchedulerState& CatchUpCopy(CatchUp catch_up);
  // Under the mutex, after the cycle: applies its decisions to the live state
  // and returns true, or, when a change during the cycle conflicts with them,
  // applies none and returns false.
  bool EndCycle(const CycleDecisions& decisions);

 private:
  using Change = std::function<void(sched::SchedulerState&)>;
  void Record(Change change);
  void TouchJob(model::JobId id);
  void TouchNode(model::NodeId node);

  std::unique_ptr<sched::SchedulerState> live_;
  std::unique_ptr<sched::SchedulerState> copy_;  // the scheduling thread's
  std::vector<Change> changes_;                  // made to live_ since the copy last caught up
  bool copy_stale_ = true;                       // the copy must be made anew from live_
  // While a cycle runs: what changes touched, which its decisions must not name.
  bool in_cycle_ = false;
  std::unordered_set<std::int32_t> touched_jobs_;
  std::unordered_set<std::int32_t> touched_nodes_;
};

}  // namespace tessera::controlplane
