#include "simkit/simulator.h"

#include <algorithm>
#include <queue>
#include <tuple>

#include "sched/scheduler.h"

namespace tessera::simkit {
namespace {

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

  sched::SchedulerState state_;
  const Workload& workload_;
  const SimOptions& options_;
  sched::Scheduler scheduler_;
  SimResult result_;
  std::priority_queue<End, std::vector<End>, std::greater<>> ends_;
  std::vector<Seconds> done_;          // work kept so far, per job
  std::vector<Time> started_;          // start of the current run, per job
  std::vector<std::int32_t> epoch_;
  Time next_sample_ = 0;
  std::size_t ended_ = 0;
};

Status Run::Submit(const WorkloadJob& w, Time now) {
  model::Job job = w.job;
  job.queue = state_.queues().Find(w.queue);
  if (!job.queue.valid()) return InvalidArgument(workload_.source + ": job " + job.name + ": unknown queue '" + w.queue + "'");
  job.oracle_duration = w.duration;
  JobRecord record{job.name, w.queue, w.group, now, -1, -1, w.duration, 0, job.TotalRequest().gpu_milli, 0};
  state_.Submit(std::move(job), now);
  result_.jobs.push_back(std::move(record));
  done_.push_back(0);
  started_.push_back(0);
  epoch_.push_back(0);
  return Status::Ok();
}

void Run::Cycle(Time now) {
  sched::NullBinder binder;
  const sched::CycleResult cycle = scheduler_.RunCycle(state_, now, binder);
  ++result_.cycles;
  for (const sched::Eviction& e : cycle.evictions) {
    const std::size_t j = e.victim.index();
    const model::Job& job = state_.job(e.victim);
    const Seconds ran = now - started_[j];
    Seconds kept = ran;
    if (!options_.keep_progress_on_preempt) kept = job.checkpoint_interval > 0 ? ran / job.checkpoint_interval * job.checkpoint_interval : 0;
    done_[j] += kept;
    result_.jobs[j].ran += ran;
    result_.lost_gpu_seconds += static_cast<double>(result_.jobs[j].gpu_milli) / 1000.0 * static_cast<double>(ran - kept);
    ++result_.jobs[j].preemptions;
    ++result_.preemptions;
    ++epoch_[j];
  }
  for (const sched::Outcome& o : cycle.outcomes) {
    if (o.verdict != sched::Verdict::kPlaced || state_.job(o.job).state != model::JobState::kRunning) continue;
    const std::size_t j = o.job.index();
    started_[j] = now;
    if (result_.jobs[j].first_start < 0) result_.jobs[j].first_start = now;
    const Seconds remaining = std::max<Seconds>(0, result_.jobs[j].duration - done_[j]);
    ends_.push(End{now + remaining, o.job.value(), epoch_[j]});
  }
  Sample(now);
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
  std::size_t next_submit = 0;
  Time next_cycle = kNever;
  Time last = jobs.empty() ? 0 : jobs.front().submit;
  while (true) {
    Time now = next_cycle;
    if (next_submit < jobs.size()) now = std::min(now, jobs[next_submit].submit);
    if (!ends_.empty()) now = std::min(now, ends_.top().time);
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
      state_.Finish(id, model::JobState::kSucceeded);
      result_.jobs[id.index()].end = now;
      result_.jobs[id.index()].ran += now - started_[id.index()];
      ++result_.events;
      ++ended_;
      changed = true;
    }
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
