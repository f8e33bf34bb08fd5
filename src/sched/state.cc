#include "sched/state.h"

#include <algorithm>
#include <atomic>

#include "model/feasibility.h"

namespace tessera::sched {

using model::Job;
using model::JobId;
using model::JobState;

JobId SchedulerState::Submit(Job job, Time now) {
  job.state = JobState::kPending;
  job.submit_time = now;
  job.placements.clear();
  for (model::TaskGroup& group : job.groups) {
    if (!group.request.gpu_model.empty()) group.request.models = cluster_.ResolveModels(group.request.gpu_model).value_or(0);
  }
  const std::uint64_t key = job.Shape() ^ (std::uint64_t{static_cast<std::uint32_t>(job.queue.value())} << 33) ^
                            (job.preemptible ? 0x5bd1e995ULL : 0);
  // An unknown GPU model resolves to "any model" in the fingerprint: judge such
  // jobs on their own rather than share another job's answer.
  const bool unknown_model = std::any_of(job.groups.begin(), job.groups.end(), [](const model::TaskGroup& g) {
    return !g.request.gpu_model.empty() && g.request.models == 0;
  });
  if (unknown_model) {
    job.never_reason = model::CheckFeasible(job, cluster_, queues_).message();
  } else {
    auto [it, inserted] = feasibility_cache_.try_emplace(key);
    if (inserted) it->second = model::CheckFeasible(job, cluster_, queues_).message();
    job.never_reason = it->second;
  }
  return jobs_.Add(std::move(job));
}

JobId SchedulerState::Restore(Job job) {
  for (model::TaskGroup& group : job.groups) {
    if (!group.request.gpu_model.empty()) group.request.models = cluster_.ResolveModels(group.request.gpu_model).value_or(0);
  }
  // The cluster may have changed since the job was judged (nodes joined).
  if (job.state == JobState::kPending) job.never_reason = model::CheckFeasible(job, cluster_, queues_).message();
  if (job.state == JobState::kRunning && !job.is_array_parent) {
    for (const model::TaskPlacement& task : job.placements) cluster_.Allocate(task);
    job.held = model::SumPlacements(job.placements);
    queues_.Charge(job.queue, job.Held(), +1, job.preemptible, job.user);
  }
  const JobId id = job.id;
  jobs_.Put(std::move(job));
  return id;
}

void SchedulerState::Bind(JobId id, std::vector<model::TaskPlacement> placements, Time now) {
  Job& job = jobs_.at(id);
  for (const model::TaskPlacement& task : placements) cluster_.Allocate(task);
  job.placements = std::move(placements);
  job.held = model::SumPlacements(job.placements);
  job.start_time = now;
  job.last_checkpoint = now;
  queues_.Charge(job.queue, job.Held(), +1, job.preemptible, job.user);
  jobs_.SetState(id, JobState::kRunning);
}

std::vector<model::TaskPlacement> SchedulerState::Unbind(JobId id, Time now) {
  Job& job = jobs_.at(id);
  job.attained_gpu_seconds = job.AttainedService(now);
  return Release(id);
}

std::uint64_t SchedulerState::NewReleaseBase() {
  static std::atomic<std::uint64_t> next{0};
  return next.fetch_add(std::uint64_t{1} << 40);  // 2^40 releases apart: a lifetime's worth
}

std::vector<model::TaskPlacement> SchedulerState::Release(JobId id) {
  ++releases_;
  Job& job = jobs_.at(id);
  queues_.Charge(job.queue, job.Held(), -1, job.preemptible, job.user);
  for (const model::TaskPlacement& task : job.placements) cluster_.Release(task);
  job.held = {};
  jobs_.SetState(id, JobState::kPending);
  return std::exchange(job.placements, {});
}

void SchedulerState::Finish(JobId id, JobState end, Time now) {
  const Job& job = jobs_.at(id);
  if (end == JobState::kSucceeded && job.state == JobState::kRunning && !job.is_array_parent) {
    history_.Record(job.queue, job.MinGpuMilli(), static_cast<Seconds>(TimeRun(job, now)));
  }
  if (job.state == JobState::kRunning && !job.is_array_parent) Release(id);
  jobs_.SetState(id, end);
}

bool SchedulerState::Requeue(JobId id, Time now) {
  Job& job = jobs_.at(id);
  if (job.restarts >= job.max_restarts) {
    Finish(id, JobState::kFailed, now);
    return false;
  }
  if (job.state == JobState::kRunning) Unbind(id, now);
  ++job.restarts;
  if (job.restart_backoff > 0) {
    const int doublings = std::min(job.restarts - 1, 30);
    job.not_before = now + std::min(job.restart_backoff << doublings, std::max(job.max_restart_backoff, job.restart_backoff));
  }
  return true;
}

std::vector<JobId> SchedulerState::SetGpuHealthy(model::GpuId gpu, bool healthy) {
  cluster_.SetGpuHealthy(gpu, healthy);
  std::vector<JobId> affected;
  for (JobId id : jobs_.running()) {
    for (const model::TaskPlacement& task : jobs_.at(id).placements) {
      if (std::any_of(task.gpus.begin(), task.gpus.end(), [&](const model::GpuShare& s) { return s.gpu == gpu; })) {
        affected.push_back(id);
        break;
      }
    }
  }
  return affected;
}

std::vector<JobId> SchedulerState::JobsOnNode(model::NodeId node) const {
  std::vector<JobId> on_node;
  for (JobId id : jobs_.running()) {
    const auto& placements = jobs_.at(id).placements;
    if (std::any_of(placements.begin(), placements.end(), [&](const model::TaskPlacement& t) { return t.node == node; })) {
      on_node.push_back(id);
    }
  }
  return on_node;
}

}  // namespace tessera::sched
