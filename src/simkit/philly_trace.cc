#include "simkit/philly_trace.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <vector>

namespace tessera::simkit {
namespace {

std::vector<std::string> SplitCsv(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream in(line);
  std::string field;
  while (std::getline(in, field, ',')) fields.push_back(field);
  if (!line.empty() && line.back() == ',') fields.emplace_back();
  return fields;
}

std::optional<double> Number(const std::string& text) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

}  // namespace

model::Job PhillyGang(const std::string& name, std::int64_t gpus) {
  model::Job job;
  job.name = name;
  job.topology = {model::TopologyLevel::kCluster, false};  // as tight as possible, else anywhere
  const auto add = [&](std::string group_name, std::int32_t replicas, std::int64_t per_task) {
    model::TaskGroup group;
    group.name = std::move(group_name);
    group.replicas = group.min_replicas = replicas;
    group.request.gpu_milli = per_task * 1000;
    job.groups.push_back(std::move(group));
  };
  if (gpus <= 8) {
    add("main", 1, gpus);
  } else {
    add("worker", static_cast<std::int32_t>(gpus / 8), 8);
    if (gpus % 8) add("rest", 1, gpus % 8);
  }
  return job;
}


Result<Time> ParseTimestamp(const std::string& text) {
  std::tm tm{};
  std::istringstream in(text);
  in >> std::get_time(&tm, "%Y-%m-%d %H:%M:%S");
  if (in.fail() || in.peek() != EOF) return InvalidArgument("'" + text + "' is not a timestamp YYYY-MM-DD HH:MM:SS");
  return static_cast<Time>(timegm(&tm));
}

Result<Workload> LoadPhillyCsv(const std::string& path, const PhillyOptions& options) {
  std::ifstream in(path);
  if (!in) return NotFound("cannot read Philly trace '" + path + "'");
  if (!(options.load > 0)) return InvalidArgument("--load must be positive");
  Workload workload;
  workload.source = path;
  std::string line;
  std::size_t number = 0;
  const auto error = [&](const std::string& reason) { return InvalidArgument(path + ":" + std::to_string(number) + ": " + reason); };
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (number == 1) {
      if (line != "timestamp,duration,num_gpus,gpu_time,cluster") {
        return error("expected the header 'timestamp,duration,num_gpus,gpu_time,cluster', got '" + line + "'");
      }
      continue;
    }
    if (line.empty()) continue;
    const std::vector<std::string> f = SplitCsv(line);
    if (f.size() != 5) return error("expected 5 fields, got " + std::to_string(f.size()));
    auto submit = ParseTimestamp(f[0]);
    if (!submit.ok()) return error(submit.status().message());
    const auto duration = Number(f[1]);
    if (!duration || *duration < 0) return error("duration '" + f[1] + "' is not a non-negative number of seconds");
    const auto gpus = Number(f[2]);
    if (!gpus || *gpus < 1 || *gpus != std::floor(*gpus)) return error("num_gpus '" + f[2] + "' is not a positive integer");
    if (f[4].empty()) return error("cluster (the VC) is empty");
    if (options.window_end && *submit >= *options.window_end) continue;
    if (!options.vcs.empty() && !options.vcs.contains(f[4])) continue;
    WorkloadJob job;
    job.job = PhillyGang("philly-" + std::to_string(number), static_cast<std::int64_t>(*gpus));
    job.submit = *submit;
    job.duration = std::max<Seconds>(1, std::llround(*duration));
    job.group = f[4];
    if (options.window_start && *submit < *options.window_start) {
      // Ended before the window opens: history. Still running then: neither.
      if (*submit + job.duration <= *options.window_start) workload.history.push_back(std::move(job));
      continue;
    }
    workload.jobs.push_back(std::move(job));
  }
  if (workload.jobs.empty()) return InvalidArgument(path + ": no job in the selected window and VCs");
  std::stable_sort(workload.jobs.begin(), workload.jobs.end(),
                   [](const WorkloadJob& a, const WorkloadJob& b) { return a.submit < b.submit; });
  const Time origin = options.window_start.value_or(workload.jobs.front().submit);
  for (WorkloadJob& job : workload.jobs) {
    job.submit = static_cast<Time>(std::llround(static_cast<double>(job.submit - origin) / options.load));
  }
  return workload;
}

}  // namespace tessera::simkit
