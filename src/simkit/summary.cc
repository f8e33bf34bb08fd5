#include "simkit/summary.h"

#include <algorithm>
#include <fstream>
#include <map>

namespace tessera::simkit {
namespace {

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const auto index = static_cast<std::size_t>(p * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(index, values.size() - 1)];
}

double Mean(const std::vector<double>& values) {
  double sum = 0;
  for (double v : values) sum += v;
  return values.empty() ? 0 : sum / static_cast<double>(values.size());
}

// JCT, queueing delay and wait of the finished jobs among `records`.
nlohmann::json JobFigures(const std::vector<const JobRecord*>& records) {
  std::vector<double> jct, delay, wait;
  std::int64_t unfinished = 0;
  for (const JobRecord* r : records) {
    if (r->end < 0) {
      ++unfinished;
      continue;
    }
    jct.push_back(static_cast<double>(r->end - r->submit));
    delay.push_back(static_cast<double>(r->first_start - r->submit));
    wait.push_back(static_cast<double>(r->end - r->submit - r->ran));
  }
  return {{"jobs", jct.size()},
          {"unfinished_jobs", unfinished},
          {"avg_jct_s", Mean(jct)},
          {"p50_jct_s", Percentile(jct, 0.50)},
          {"p99_jct_s", Percentile(jct, 0.99)},
          {"avg_queue_delay_s", Mean(delay)},
          {"avg_wait_s", Mean(wait)}};
}

}  // namespace

nlohmann::json Summarize(const SimResult& result, double wall_s) {
  std::vector<const JobRecord*> all;
  std::map<std::string, std::vector<const JobRecord*>> by_queue, by_group;
  Time first = kNever, last = 0;
  for (const JobRecord& r : result.jobs) {
    all.push_back(&r);
    by_queue[r.queue].push_back(&r);
    if (!r.group.empty()) by_group[r.group].push_back(&r);
    first = std::min(first, r.submit);
    last = std::max(last, r.end);
  }
  nlohmann::json summary = JobFigures(all);
  summary["makespan_s"] = result.jobs.empty() ? 0 : last - first;
  summary["gpu_alloc_ratio"] =
      result.capacity_while_pending > 0 ? result.allocated_while_pending / result.capacity_while_pending : 0.0;
  summary["preemptions"] = result.preemptions;
  summary["failures"] = result.failures;
  // Over finished jobs, useful GPU time (their true durations) over the GPU
  // time they ran (lost work and restarts count against it), and over their
  // span from first start to end (waits for capacity after a preemption or a
  // failure count too: a training run's "effective training time").
  double useful = 0, ran = 0, span = 0;
  for (const JobRecord& r : result.jobs) {
    if (r.end < 0) continue;
    const double gpus = static_cast<double>(r.gpu_milli);
    useful += gpus * static_cast<double>(r.duration);
    ran += gpus * static_cast<double>(r.ran);
    span += gpus * static_cast<double>(r.end - r.first_start);
  }
  summary["goodput_ratio"] = ran > 0 ? useful / ran : 0.0;
  summary["effective_time_ratio"] = span > 0 ? useful / span : 0.0;
  summary["lost_gpu_hours"] = result.lost_gpu_seconds / 3600.0;
  summary["burst_gib_hours"] = result.bursts.byte_seconds / 3600.0 / static_cast<double>(std::int64_t{1} << 30);
  summary["bursts"] = result.bursts.bursts;
  summary["bursts_given_back"] = result.bursts.given_back;
  summary["cycles"] = result.cycles;
  summary["events"] = result.events;
  summary["wall_s"] = wall_s;
  summary["events_per_s"] = wall_s > 0 ? static_cast<double>(result.events) / wall_s : 0.0;
  for (const auto& [queue, records] : by_queue) summary["queues"][queue] = JobFigures(records);
  for (const auto& [group, records] : by_group) summary["groups"][group] = JobFigures(records);
  return summary;
}

void Merge(SimResult& total, SimResult part) {
  for (JobRecord& r : part.jobs) total.jobs.push_back(std::move(r));
  total.capacity_milli += part.capacity_milli;
  total.allocated_while_pending += part.allocated_while_pending;
  total.capacity_while_pending += part.capacity_while_pending;
  total.lost_gpu_seconds += part.lost_gpu_seconds;
  total.preemptions += part.preemptions;
  total.failures += part.failures;
  total.restart_gaps.insert(total.restart_gaps.end(), part.restart_gaps.begin(), part.restart_gaps.end());
  total.bursts.byte_seconds += part.bursts.byte_seconds;
  total.bursts.bursts += part.bursts.bursts;
  total.bursts.given_back += part.bursts.given_back;
  total.events += part.events;
  total.cycles += part.cycles;
  // Each series is a step function: at every sample time of either, the sum
  // of both at that time.
  std::vector<Sample> merged;
  std::size_t a = 0, b = 0;
  Sample last_a, last_b;
  while (a < total.series.size() || b < part.series.size()) {
    const Time ta = a < total.series.size() ? total.series[a].time : kNever;
    const Time tb = b < part.series.size() ? part.series[b].time : kNever;
    const Time t = std::min(ta, tb);
    if (ta == t) last_a = total.series[a++];
    if (tb == t) last_b = part.series[b++];
    merged.push_back({t, last_a.allocated_milli + last_b.allocated_milli, last_a.pending + last_b.pending,
                      last_a.running + last_b.running});
  }
  total.series = std::move(merged);
}

Status WriteJobsCsv(const SimResult& result, const std::string& path) {
  std::ofstream out(path);
  if (!out) return Internal("cannot write '" + path + "'");
  out << "name,queue,group,gpus,submit,first_start,end,duration,ran,preemptions,failures\n";
  for (const JobRecord& r : result.jobs) {
    out << r.name << ',' << r.queue << ',' << r.group << ',' << static_cast<double>(r.gpu_milli) / 1000.0 << ','
        << r.submit << ',' << r.first_start << ',' << r.end << ',' << r.duration << ',' << r.ran << ','
        << r.preemptions << ',' << r.failures << '\n';
  }
  return out ? Status::Ok() : Internal("failed writing '" + path + "'");
}

Status WriteSeriesCsv(const SimResult& result, const std::string& path) {
  std::ofstream out(path);
  if (!out) return Internal("cannot write '" + path + "'");
  out << "time,allocated_gpus,capacity_gpus,pending_jobs,running_jobs\n";
  for (const Sample& s : result.series) {
    out << s.time << ',' << static_cast<double>(s.allocated_milli) / 1000.0 << ','
        << static_cast<double>(result.capacity_milli) / 1000.0 << ',' << s.pending << ',' << s.running << '\n';
  }
  return out ? Status::Ok() : Internal("failed writing '" + path + "'");
}

}  // namespace tessera::simkit
