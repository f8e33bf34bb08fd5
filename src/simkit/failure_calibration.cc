#include "simkit/failure_calibration.h"

#include <algorithm>
#include <cmath>
#include <fstream>

#include "simkit/philly_trace.h"

namespace tessera::simkit {
namespace {

using nlohmann::json;

// The q-quantile of `values` (sorted here), the nearest rank; 0 for none.
Seconds Quantile(std::vector<Seconds> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[static_cast<std::size_t>(std::llround(q * static_cast<double>(values.size() - 1)))];
}

void SetGaps(RetryStats& stats, const std::vector<Seconds>& gaps) {
  stats.gap_p10 = Quantile(gaps, 0.1);
  stats.gap_p50 = Quantile(gaps, 0.5);
  stats.gap_p90 = Quantile(gaps, 0.9);
}

void Count(RetryStats& stats, std::int64_t attempts) {
  ++stats.jobs;
  ++stats.attempts[static_cast<std::size_t>(std::clamp<std::int64_t>(attempts, 1, 5) - 1)];
}

void Finish(RetryStats& stats, std::int64_t failures) {
  stats.retried_share = stats.jobs == 0 ? 0 : 1.0 - static_cast<double>(stats.attempts[0]) / static_cast<double>(stats.jobs);
  stats.failures_per_gpu_hour = stats.gpu_hours > 0 ? static_cast<double>(failures) / stats.gpu_hours : 0;
}

}  // namespace

Result<std::vector<AttemptedJob>> LoadPhillyAttempts(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status(StatusCode::kNotFound, path + ": cannot read");
  const json all = json::parse(in, nullptr, false);
  if (all.is_discarded()) return InvalidArgument(path + ": not JSON");
  if (!all.is_array()) return InvalidArgument(path + ": expected a list of jobs");
  std::vector<AttemptedJob> jobs;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const json& j = all[i];
    const std::string where = path + ": job " + std::to_string(i) +
                              (j.is_object() && j.contains("id") && j["id"].is_string() ? " (" + j["id"].get<std::string>() + ")" : "");
    if (!j.is_object()) return InvalidArgument(where + ": not an object");
    AttemptedJob job;
    if (!j.contains("id") || !j["id"].is_string()) return InvalidArgument(where + ": id: a string is required");
    job.id = j["id"].get<std::string>();
    if (!j.contains("num_gpus") || !j["num_gpus"].is_number_integer() || j["num_gpus"].get<std::int64_t>() < 1) {
      return InvalidArgument(where + ": num_gpus: a positive integer is required");
    }
    job.gpus = j["num_gpus"].get<std::int64_t>();
    const auto time_of = [&](const json& object, const std::string& key, const std::string& field) -> Result<Time> {
      if (!object.contains(key) || !object[key].is_string()) return InvalidArgument(where + ": " + field + ": a timestamp is required");
      Result<Time> t = ParseTimestamp(object[key].get<std::string>());
      if (!t.ok()) return InvalidArgument(where + ": " + field + ": " + t.status().message());
      return t;
    };
    Result<Time> submit = time_of(j, "submitted_time", "submitted_time");
    if (!submit.ok()) return submit.status();
    job.submit = *submit;
    if (!j.contains("attempts") || !j["attempts"].is_array() || j["attempts"].empty()) {
      return InvalidArgument(where + ": attempts: a non-empty list is required");
    }
    for (std::size_t a = 0; a < j["attempts"].size(); ++a) {
      const json& attempt = j["attempts"][a];
      const std::string field = "attempts[" + std::to_string(a) + "]";
      if (!attempt.is_object()) return InvalidArgument(where + ": " + field + ": not an object");
      Result<Time> start = time_of(attempt, "start_time", field + ".start_time");
      if (!start.ok()) return start.status();
      Result<Time> end = time_of(attempt, "end_time", field + ".end_time");
      if (!end.ok()) return end.status();
      if (*end < *start) return InvalidArgument(where + ": " + field + ": ends before it starts");
      if (!job.attempts.empty() && *start < job.attempts.back().second) {
        return InvalidArgument(where + ": " + field + ": starts before the attempt before it ended");
      }
      job.attempts.emplace_back(*start, *end);
    }
    jobs.push_back(std::move(job));
  }
  if (jobs.empty()) return InvalidArgument(path + ": no job");
  return jobs;
}

Workload AttemptsWorkload(const std::vector<AttemptedJob>& jobs, const std::string& source, Seconds checkpoint_interval) {
  Workload workload{source, {}, {}};
  for (const AttemptedJob& a : jobs) {
    WorkloadJob job;
    job.job = PhillyGang("philly-" + a.id, a.gpus);
    job.job.checkpoint_interval = checkpoint_interval;
    job.submit = std::min(a.submit, a.attempts.front().first);
    job.duration = std::max<Seconds>(1, a.attempts.back().second - a.attempts.back().first);
    workload.jobs.push_back(std::move(job));
  }
  std::stable_sort(workload.jobs.begin(), workload.jobs.end(), [](const WorkloadJob& a, const WorkloadJob& b) { return a.submit < b.submit; });
  return workload;
}

RetryStats ObservedRetries(const std::vector<AttemptedJob>& jobs) {
  RetryStats stats;
  std::vector<Seconds> gaps;
  std::int64_t failures = 0;
  for (const AttemptedJob& job : jobs) {
    Count(stats, static_cast<std::int64_t>(job.attempts.size()));
    failures += static_cast<std::int64_t>(job.attempts.size()) - 1;
    for (std::size_t a = 0; a < job.attempts.size(); ++a) {
      stats.gpu_hours += static_cast<double>(job.gpus * (job.attempts[a].second - job.attempts[a].first)) / 3600.0;
      if (a > 0) gaps.push_back(job.attempts[a].first - job.attempts[a - 1].second);
    }
  }
  SetGaps(stats, gaps);
  Finish(stats, failures);
  return stats;
}

RetryStats SimulatedRetries(const SimResult& result) {
  RetryStats stats;
  std::int64_t failures = 0;
  for (const JobRecord& job : result.jobs) {
    Count(stats, job.failures + 1);
    failures += job.failures;
    stats.gpu_hours += static_cast<double>(job.gpu_milli) / 1000.0 * static_cast<double>(job.ran) / 3600.0;
  }
  SetGaps(stats, result.restart_gaps);
  Finish(stats, failures);
  return stats;
}

json ToJson(const RetryStats& s) {
  return {{"jobs", s.jobs},
          {"attempts_1_2_3_4_5plus", s.attempts},
          {"retried_share", s.retried_share},
          {"failures_per_gpu_hour", s.failures_per_gpu_hour},
          {"gpu_hours", s.gpu_hours},
          {"gap_p10_s", s.gap_p10},
          {"gap_p50_s", s.gap_p50},
          {"gap_p90_s", s.gap_p90}};
}

Result<Calibration> Calibrate(const std::vector<AttemptedJob>& jobs, const std::string& source, const model::Cluster& cluster,
                              FailureModel model, double per_gpu_hour, Seconds checkpoint_interval,
                              const sched::SchedulerConfig& scheduler) {
  if (checkpoint_interval <= 0) return InvalidArgument("calibration: jobs must checkpoint (a positive interval), or the longest never end");
  if (!(model.job_fault_shape > 0)) return InvalidArgument("calibration: the failure shape must be positive");
  Calibration out;
  out.observed = ObservedRetries(jobs);
  out.target_per_gpu_hour = per_gpu_hour > 0 ? per_gpu_hour : out.observed.failures_per_gpu_hour;
  model.per_gpu_hour = 0;  // the job fails, not the hardware: nothing to repair
  const Workload workload = AttemptsWorkload(jobs, source, checkpoint_interval);
  SimOptions options;
  options.scheduler = scheduler;
  options.sample_interval = 3600;
  const auto simulate = [&](double scale) -> Result<RetryStats> {
    options.failures = model;
    options.failures.job_fault_scale = scale;
    Result<SimResult> result = Simulate(sched::SchedulerState(cluster, model::QueueTree::Default(cluster.capacity().gpu_milli)), workload, options);
    if (!result.ok()) return result.status();
    return SimulatedRetries(*result);
  };
  // The scale at which the jobs fail at the target rate depends on how long
  // and how wide their runs are, so it is searched: down from a scale far too
  // large (few failures, cheap to simulate) in steps of 4 until the jobs fail
  // too often, then by bisection of the logarithm. Never from below: a scale
  // far too small fails every run at once, and that simulation never ends.
  double high = std::log(3600.0 / out.target_per_gpu_hour) + 40 * std::log(4.0), low = high;
  for (int step = 0;; ++step) {
    if (step == 80) return InvalidArgument("calibration: no failure scale gives the target rate");
    Result<RetryStats> stats = simulate(std::exp(low));
    if (!stats.ok()) return stats.status();
    if (stats->failures_per_gpu_hour > out.target_per_gpu_hour) break;
    high = low;
    low -= std::log(4.0);
  }
  for (int i = 0; i < 12; ++i) {
    const double mid = (low + high) / 2;
    Result<RetryStats> stats = simulate(std::exp(mid));
    if (!stats.ok()) return stats.status();
    (stats->failures_per_gpu_hour > out.target_per_gpu_hour ? low : high) = mid;
  }
  const double scale = std::exp((low + high) / 2);
  Result<RetryStats> simulated = simulate(scale);
  if (!simulated.ok()) return simulated.status();
  out.simulated = *simulated;
  out.model = options.failures;
  return out;
}

}  // namespace tessera::simkit
