// The control plane's two loops: scheduling cycles on the real clock, and
// housekeeping (lost nodes, long-poll deadlines).
#include "controlplane/control_plane.h"

namespace tessera::controlplane {

// A cycle holds mu_ only to begin (take the changes since the last one) and
// to end (apply its decisions); in between, on the state's copy, the API
// goes on: reads, submissions (they enter the next cycle), cancels.
void ControlPlane::SchedulingLoop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    wake_scheduler_.wait_for(lock, options_.idle_cycle, [this] { return stopping_ || cycle_requested_; });
    if (stopping_) break;
    // Let a burst of submissions gather into one cycle.
    lock.unlock();
    std::this_thread::sleep_for(options_.cycle_interval);
    lock.lock();
    cycle_requested_ = false;
    EnsureState();
    const auto start = std::chrono::steady_clock::now();
    StateMirror::CatchUp catch_up = state_.BeginCycle();
    CycleDecisions decisions;
    decisions.now = NowSeconds();
    lock.unlock();
    const std::vector<WaitChange> waits = RunCycle(std::move(catch_up), decisions);
    lock.lock();
    ApplyCycle(decisions, waits, start);
  }
}

std::vector<ControlPlane::WaitChange> ControlPlane::RunCycle(StateMirror::CatchUp catch_up, CycleDecisions& decisions) {
  sched::SchedulerState& copy = state_.CatchUpCopy(std::move(catch_up));
  DecisionRecorder binder(decisions);
  const sched::CycleResult result = scheduler_.RunCycle(copy, decisions.now, binder);
  // Why each job still waits, sent on only where it changed: with 100,000
  // jobs waiting for capacity, nearly none does from one cycle to the next.
  std::vector<WaitChange> changed;
  std::unordered_map<std::int32_t, std::string> explained;
  explained.reserve(explained_.size());
  for (const sched::Outcome& outcome : result.outcomes) {
    if (outcome.verdict == sched::Verdict::kPlaced) continue;
    std::string message = sched::Explain(outcome, copy);
    const auto before = explained_.find(outcome.job.value());
    if (before == explained_.end() || before->second != message) {
      changed.push_back({outcome.job, message, std::string(sched::ToString(outcome.reason))});
    }
    explained.emplace(outcome.job.value(), std::move(message));
  }
  explained_.swap(explained);
  return changed;
}

void ControlPlane::ApplyCycle(const CycleDecisions& decisions, const std::vector<WaitChange>& waits,
                              std::chrono::steady_clock::time_point start) {
  std::map<model::JobId, model::JobState> arrays_before;  // of the arrays that spawned elements
  for (const auto& [parent, element] : decisions.spawned) arrays_before.emplace(parent, state_->job(parent).state);
  if (!state_.EndCycle(decisions)) {
    // Something the decisions depend on changed while the cycle ran: the
    // next cycle decides again, on a fresh copy.
    explained_.clear();
    metrics_->cycles_discarded.Increment();
    RequestCycle();
    return;
  }
  const std::int64_t now = NowMs();
  for (const WaitChange& w : waits) {
    JobRecord* record = FindRecord(w.job.value());
    if (record == nullptr || state_->job(w.job).state != model::JobState::kPending) continue;
    record->message = record->requeue_reason.empty() ? w.message : record->requeue_reason + "; " + w.message;
    record->wait_reason = w.reason;
  }
  // Evictions precede the binds that depend on them (binder.h).
  for (const sched::Eviction& e : decisions.evicted) {
    JobRecord& record = records_.at(e.victim);
    const std::string why = std::string(e.reason == sched::EvictReason::kPreempt ? "preempted" : "reclaimed") +
                            " by job " + std::to_string(e.preemptor.value());
    (e.reason == sched::EvictReason::kPreempt ? metrics_->preemptions : metrics_->reclaims).Increment();
    AccountLostWork(e.victim, e.reason == sched::EvictReason::kPreempt ? metrics_->lost_to_preemption : metrics_->lost_to_reclaim);
    Detach(e.victim);
    RetireRun(record);
    record.message = why;
    record.requeue_reason = why;
    Emit("JobPreempted", e.victim.value(), "", why);
    PersistJob(e.victim);
  }
  AddElementRecords(decisions.spawned);
  for (const auto& [parent, before] : arrays_before) ArrayFollowed(parent, before);
  std::vector<std::pair<model::JobId, std::int32_t>> runs;
  for (const auto& [id, placements] : decisions.bound) {
    const model::Job& job = state_->job(id);
    explained_.erase(id.value());  // a later wait is news
    JobRecord& record = records_.at(id);
    ++record.attempt;
    record.scheduled_ms = now;
    record.checkpoint_ms = 0;
    record.running_ms = 0;
    record.message.clear();
    record.wait_reason.clear();
    record.requeue_reason.clear();
    record.tasks.clear();
    metrics_->placements.Increment();
    metrics_->queue_wait.Observe(static_cast<double>(now - record.submit_ms) / 1000.0);
    std::string where;
    for (const model::TaskPlacement& p : job.placements) {
      TaskRecord t;
      t.group = p.group;
      t.index = p.index;
      t.name = job.groups[static_cast<std::size_t>(p.group)].name + "-" + std::to_string(p.index);
      const model::Node& node = state_->cluster().node(p.node);
      t.node = node.name;
      for (const model::GpuShare& share : p.gpus) {
        const std::int32_t local = state_->cluster().gpu(share.gpu).local_index;
        t.gpus.push_back(local);
        t.gpu_milli = share.milli;
        t.gpu_memory = share.memory;
        if (share.mig >= 0) t.mig_device = nodes_.at(node.name).inventory.gpus[local].mig[share.mig].uuid;
      }
      t.cpu_milli = p.cpu_milli;
      t.memory = p.memory;
      if (where.find(t.node) == std::string::npos) where += (where.empty() ? "" : ",") + t.node;
      record.tasks.push_back(std::move(t));
    }
    record.master_port = ports_.Take(record.tasks.front().node);
    Emit("JobScheduled", id.value(), "", "run " + std::to_string(record.attempt) + " on " + where);
    PersistJob(id);
    runs.emplace_back(id, record.attempt);
  }
  ++stats_.cycles;
  stats_.last_cycle_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  metrics_->cycles.Increment();
  metrics_->cycle_duration.Observe(stats_.last_cycle_ms / 1000.0);
  if (writes_.empty()) return;
  Commit([this, runs]() {
    for (const auto& [id, attempt] : runs) {
      JobRecord& record = records_.at(id);
      // Still the same run (not cancelled or preempted while being written)?
      if (record.attempt != attempt || state_->job(id).state != model::JobState::kRunning || record.dispatched) continue;
      record.dispatched = true;
      Attach(id);
    }
  });
}

void ControlPlane::HousekeepingLoop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    wake_housekeeping_.wait_for(lock, std::chrono::milliseconds(200), [this] { return stopping_; });
    if (stopping_) break;
    EnsureState();
    const std::int64_t now = NowMs();
    bool lost = false;
    for (auto& [name, node] : nodes_) {
      if (node.state == NodeState::kReady && now - node.last_heartbeat_ms > options_.heartbeat_timeout.count()) {
        MarkLost(node);
        lost = true;
      }
    }
    // Running jobs' GPU accounting reaches the disk once a minute (and at
    // every state change): a crash loses at most that much of it.
    const auto steady = std::chrono::steady_clock::now();
    if (steady - accounting_saved_ >= std::chrono::minutes(1)) {
      accounting_saved_ = steady;
      for (const model::JobId id : state_->jobs().running()) {
        if (records_.at(id).gpu_seconds > 0) PersistJob(id);
      }
    }
    if (history_.Due(now)) history_.Add(SampleCluster(now));
    ForgetEndedJobs(now);
    if (lost || !writes_.empty()) Commit(nullptr);
    if (lost) RequestCycle();
    ExpireWaiters(steady);
  }
  // Shutting down: answer every waiter so no connection hangs.
  ExpireWaiters(std::chrono::steady_clock::time_point::max());
}

void ControlPlane::ExpireWaiters(std::chrono::steady_clock::time_point now) {
  for (auto it = node_waiters_.begin(); it != node_waiters_.end();) {
    if (it->second.deadline > now) {
      ++it;
      continue;
    }
    const auto node = nodes_.find(it->first);
    it->second.done(node != nodes_.end() ? Result<std::string>(AssignmentsFor(node->second)) : NotFound("node " + it->first + " is gone"));
    it = node_waiters_.erase(it);
  }
  std::vector<EventWaiter> still;
  for (EventWaiter& w : event_waiters_) {
    if (w.deadline > now) {
      still.push_back(std::move(w));
      continue;
    }
    w.done(nlohmann::json{{"events", nlohmann::json::array()}, {"revision", events_.last_revision()}});
  }
  event_waiters_.swap(still);
}

}  // namespace tessera::controlplane
