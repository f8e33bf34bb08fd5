#include "simkit/simulator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <tuple>

#include "base/random.h"
#include "sched/scheduler.h"

namespace tessera::simkit {
namespace {

struct Outage {
  Time time;
  std::int32_t gpu;  // a failed GPU, or any GPU of a failed node
  bool node;
  bool operator>(const Outage& o) const { return std::tie(time, gpu) > std::tie(o.time, o.gpu); }
};

struct End {
  Time time;
  std::int32_t job;
  std::int32_t epoch;  // a job's end is void once it was evicted (epoch moved on)
  bool operator>(const End& o) const { return std::tie(time, job) > std::tie(o.time, o.job); }
};

class Run {
 public:
  Run(sched::SchedulerState state, const Workload& workload, const SimOptions& options, sched::Scheduler scheduler)
      : state_(std::move(state)), workload_(workload), options_(options), scheduler_(std::move(scheduler)) {}

  Result<SimResult> Go();

 private:
  Status Submit(const WorkloadJob& w, Time now);
  void Cycle(Time now);
  void Sample(Time now);
  // What a job that ran `ran` keeps when stopped without warning: what its
  // periodic checkpoints saved.
  static Seconds Saved(const model::Job& job, Seconds ran) {
    return job.checkpoint_interval > 0 ? ran / job.checkpoint_interval * job.checkpoint_interval : 0;
  }
  // Ends a job's current run at `now`, keeping `kept` of it; the rest is lost work.
  void Halt(model::JobId id, Time now, Seconds kept);
  // Stops a job whose run was cut short at `now` (its GPUs failed, or it
  // failed on its own): it keeps what its periodic checkpoints saved and
  // goes back to pending.
  void Interrupt(model::JobId id, Time now);
  void Fail(Time now);          // one random interruption
  // When the run of `id` starting at `now`, `length` long, fails on its own,
  // if it does before it ends.
  void DrawJobFault(model::JobId id, Time now, Seconds length);
  void Restore(const Outage& outage);  // the repair of a GPU or node

  sched::SchedulerState state_;
  const Workload& workload_;
  const SimOptions& options_;
  sched::Scheduler scheduler_;
  SimResult result_;
  std::priority_queue<End, std::vector<End>, std::greater<>> ends_;
  std::vector<Seconds> done_;          // work kept so far, per job
  std::vector<Time> started_;          // start of the current run, per job
  std::vector<std::int32_t> epoch_;
  std::vector<std::uint8_t> restarting_;  // pays the restart cost when it next starts
  std::vector<Time> interrupted_;          // when it was last interrupted
  std::priority_queue<Outage, std::vector<Outage>, std::greater<>> repairs_;
  std::priority_queue<End, std::vector<End>, std::greater<>> job_faults_;  // voided, like ends, by the epoch
  Rng failure_rng_{options_.failures.seed};
  Time next_failure_ = kNever;
  Time next_sample_ = 0;
  std::size_t ended_ = 0;
  BurstModel bursts_{options_.max_burst};
};

Status Run::Submit(const WorkloadJob& w, Time now) {
  model::Job job = w.job;
  job.queue = state_.queues().Find(w.queue);
  if (!job.queue.valid()) return InvalidArgument(workload_.source + ": job " + job.name + ": unknown queue '" + w.queue + "'");
  // A run that must survive this many failures in a row to finish never
  // does (e^-20): say so rather than simulate forever.
  const double expected_failures = options_.failures.per_gpu_hour * static_cast<double>(job.TotalRequest().gpu_milli) / 1000.0 *
                                   static_cast<double>(w.duration) / 3600.0;
  if (job.checkpoint_interval == 0 && expected_failures > 20) {
    return InvalidArgument(workload_.source + ": job " + job.name + " expects " + std::to_string(std::lround(expected_failures)) +
                           " failures per run at this failure rate and keeps no checkpoint: it would never finish "
                           "(give --checkpoint-interval)");
  }
  job.oracle_duration = w.duration;
  // Under the failure model jobs restart from their checkpoints as often as needed.
  if (options_.failures.per_gpu_hour > 0 || options_.failures.job_fault_scale > 0) job.max_restarts = std::numeric_limits<std::int32_t>::max();
  JobRecord record{job.name, w.queue, w.group, now, -1, -1, w.duration, 0, job.TotalRequest().gpu_milli, 0};
  state_.Submit(std::move(job), now);
  result_.jobs.push_back(std::move(record));
  done_.push_back(0);
  restarting_.push_back(0);
  interrupted_.push_back(0);
  started_.push_back(0);
  epoch_.push_back(0);
  return Status::Ok();
}

void Run::Halt(model::JobId id, Time now, Seconds kept) {
  const std::size_t j = id.index();
  const Seconds ran = now - started_[j];
  done_[j] += kept;
  result_.jobs[j].ran += ran;
  result_.lost_gpu_seconds += static_cast<double>(result_.jobs[j].gpu_milli) / 1000.0 * static_cast<double>(ran - kept);
  ++epoch_[j];
  bursts_.Stop(id, now);
}

void Run::Cycle(Time now) {
  sched::NullBinder binder;
  const sched::CycleResult cycle = scheduler_.RunCycle(state_, now, binder);
  ++result_.cycles;
  for (const sched::Eviction& e : cycle.evictions) {
    const std::size_t j = e.victim.index();
    const Seconds ran = now - started_[j];
    Halt(e.victim, now, options_.keep_progress_on_preempt ? ran : Saved(state_.job(e.victim), ran));
    ++result_.jobs[j].preemptions;
    ++result_.preemptions;
  }
  for (const sched::Outcome& o : cycle.outcomes) {
    if (o.verdict != sched::Verdict::kPlaced || state_.job(o.job).state != model::JobState::kRunning) continue;
    const std::size_t j = o.job.index();
    started_[j] = now;
    if (result_.jobs[j].first_start < 0) result_.jobs[j].first_start = now;
    Seconds remaining = std::max<Seconds>(0, result_.jobs[j].duration - done_[j]);
    if (restarting_[j]) {  // startup and checkpoint loading: work that produces nothing
      result_.restart_gaps.push_back(now - interrupted_[j]);
      remaining += options_.failures.restart_cost;
      done_[j] -= options_.failures.restart_cost;
      result_.lost_gpu_seconds += static_cast<double>(result_.jobs[j].gpu_milli) / 1000.0 *
                                  static_cast<double>(options_.failures.restart_cost);
      restarting_[j] = 0;
    }
    ends_.push(End{now + remaining, o.job.value(), epoch_[j]});
    DrawJobFault(o.job, now, remaining);
    bursts_.Start(state_, o.job, now);
  }
  bursts_.Enforce(state_, now);  // new tenants may need what bursts borrowed
  Sample(now);
}

void Run::Interrupt(model::JobId id, Time now) {
  const std::size_t j = id.index();
  Halt(id, now, Saved(state_.job(id), now - started_[j]));
  ++result_.jobs[j].failures;
  restarting_[j] = 1;
  interrupted_[j] = now;
  static_cast<void>(state_.Requeue(id, now));  // unlimited restarts under the failure model
}

void Run::DrawJobFault(model::JobId id, Time now, Seconds length) {
  const FailureModel& m = options_.failures;
  if (m.job_fault_scale <= 0) return;
  // Inverse of the cumulative hazard: (t / scale)^shape = E, E ~ Exp(1).
  const double age = m.job_fault_scale * std::pow(failure_rng_.Exponential(1.0), 1.0 / m.job_fault_shape);
  if (age < static_cast<double>(length)) job_faults_.push(End{now + static_cast<Time>(age), id.value(), epoch_[id.index()]});
}

void Run::Fail(Time now) {
  const model::Cluster& cluster = state_.cluster();
  const auto gpu = model::GpuId(static_cast<std::int32_t>(failure_rng_.Uniform(0, static_cast<std::int64_t>(cluster.gpus().size()) - 1)));
  const bool node_fault = !failure_rng_.Bernoulli(options_.failures.gpu_share);
  const model::Node& node = cluster.node(cluster.gpu(gpu).node);
  ++result_.failures;
  std::vector<model::JobId> hit;
  if (node_fault) {
    if (!node.schedulable) return;  // already down
    hit = state_.JobsOnNode(node.id);
    state_.cluster().SetSchedulable(node.id, false);
    repairs_.push(Outage{now + options_.failures.node_repair, gpu.value(), true});
  } else {
    if (!cluster.gpu(gpu).healthy) return;
    hit = state_.SetGpuHealthy(gpu, false);
    repairs_.push(Outage{now + options_.failures.gpu_repair, gpu.value(), false});
  }
  for (model::JobId id : hit) Interrupt(id, now);
}

void Run::Restore(const Outage& outage) {
  const auto gpu = model::GpuId(outage.gpu);
  if (outage.node) {
    state_.cluster().SetSchedulable(state_.cluster().gpu(gpu).node, true);
  } else {
    state_.SetGpuHealthy(gpu, true);
  }
}

void Run::Sample(Time now) {
  if (now < next_sample_) return;
  result_.series.push_back({now, state_.cluster().allocated().gpu_milli,
                            static_cast<std::int64_t>(state_.jobs().pending().size()),
                            static_cast<std::int64_t>(state_.jobs().running().size())});
  next_sample_ = now + options_.sample_interval;
}

Result<SimResult> Run::Go() {
  result_.capacity_milli = state_.cluster().capacity().gpu_milli;
  const std::vector<WorkloadJob>& jobs = workload_.jobs;
  if (!std::is_sorted(jobs.begin(), jobs.end(), [](const WorkloadJob& a, const WorkloadJob& b) { return a.submit < b.submit; })) {
    return InvalidArgument(workload_.source + ": jobs must be sorted by submission time");
  }
  for (const WorkloadJob& w : workload_.history) {
    const model::QueueId queue = state_.queues().Find(w.queue);
    if (!queue.valid()) return InvalidArgument(workload_.source + ": job " + w.job.name + ": unknown queue '" + w.queue + "'");
    state_.Learn(queue, w.job.MinGpuMilli(), w.duration);
  }
  std::size_t next_submit = 0;
  Time next_cycle = kNever;
  Time last = jobs.empty() ? 0 : jobs.front().submit;
  const double failures_per_second = options_.failures.per_gpu_hour / 3600.0 *
                                     static_cast<double>(state_.cluster().gpus().size());
  const auto schedule_failure = [&](Time from) {
    next_failure_ = failures_per_second > 0 ? from + static_cast<Time>(failure_rng_.Exponential(1.0 / failures_per_second)) + 1
                                            : kNever;
  };
  schedule_failure(last);
  while (true) {
    Time now = next_cycle;
    if (next_submit < jobs.size()) now = std::min(now, jobs[next_submit].submit);
    if (!ends_.empty()) now = std::min(now, ends_.top().time);
    // Failures matter only while jobs run or are still to come; repairs also
    // while jobs wait (perhaps for the repaired capacity). Without either the
    // run is over, even if jobs that can never fit still wait.
    const bool busy = !state_.jobs().running().empty() || next_submit < jobs.size();
    if (busy) {
      if (next_failure_ < last) schedule_failure(last);  // the clock never goes back
      now = std::min(now, std::min(next_failure_, bursts_.next_expiry()));
    }
    if ((busy || !state_.jobs().pending().empty()) && !repairs_.empty()) now = std::min(now, repairs_.top().time);
    if (!job_faults_.empty()) now = std::min(now, job_faults_.top().time);
    if (now == kNever) break;
    if (!state_.jobs().pending().empty()) {
      const double dt = static_cast<double>(now - last);
      result_.allocated_while_pending += static_cast<double>(state_.cluster().allocated().gpu_milli) / 1000.0 * dt;
      result_.capacity_while_pending += static_cast<double>(result_.capacity_milli) / 1000.0 * dt;
    }
    last = now;
    bool changed = false;
    for (; !ends_.empty() && ends_.top().time == now; ends_.pop()) {
      const End end = ends_.top();
      const auto id = model::JobId(end.job);
      if (end.epoch != epoch_[id.index()] || state_.job(id).state != model::JobState::kRunning) continue;
      state_.Finish(id, model::JobState::kSucceeded, now);
      bursts_.Stop(id, now);
      result_.jobs[id.index()].end = now;
      result_.jobs[id.index()].ran += now - started_[id.index()];
      ++result_.events;
      ++ended_;
      changed = true;
    }
    for (; !job_faults_.empty() && job_faults_.top().time == now; job_faults_.pop()) {
      const End fault = job_faults_.top();
      const auto id = model::JobId(fault.job);
      if (fault.epoch != epoch_[id.index()] || state_.job(id).state != model::JobState::kRunning) continue;
      Interrupt(id, now);
      ++result_.failures;
      changed = true;
    }
    for (; !repairs_.empty() && repairs_.top().time == now; repairs_.pop()) {
      Restore(repairs_.top());
      changed = true;
    }
    if (now == next_failure_) {
      Fail(now);
      schedule_failure(now);
      changed = true;
    }
    if (now == bursts_.next_expiry()) bursts_.Enforce(state_, now);
    for (; next_submit < jobs.size() && jobs[next_submit].submit == now; ++next_submit) {
      TESSERA_RETURN_IF_ERROR(Submit(jobs[next_submit], now));
      ++result_.events;
      changed = true;
    }
    if (changed && next_cycle == kNever) {
      const Seconds step = options_.cycle_interval;
      next_cycle = step > 0 ? (now + step - 1) / step * step : now;
    }
    if (next_cycle == now) {
      next_cycle = kNever;
      Cycle(now);
    }
    if (options_.on_progress && (result_.events & 1023) == 0) {
      options_.on_progress(static_cast<double>(ended_) / static_cast<double>(std::max<std::size_t>(1, jobs.size())));
    }
  }
  if (options_.on_progress) options_.on_progress(1.0);
  bursts_.Stop(model::JobId(), last);  // accrues the borrowed memory up to the end
  result_.bursts = bursts_.stats();
  return std::move(result_);
}

}  // namespace

Result<SimResult> Simulate(sched::SchedulerState state, const Workload& workload, const SimOptions& options) {
  auto scheduler = sched::Scheduler::Create(options.scheduler);
  if (!scheduler.ok()) return scheduler.status();
  Run run(std::move(state), workload, options, std::move(scheduler).value());
  return run.Go();
}

}  // namespace tessera::simkit
