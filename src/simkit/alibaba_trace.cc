#include "simkit/alibaba_trace.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <map>
#include <sstream>

#include "base/quantity.h"

namespace tessera::simkit {
namespace {

// One CSV file read row by row, with errors that name file:line.
class CsvReader {
 public:
  CsvReader(const std::string& path, std::string header) : path_(path), header_(std::move(header)), in_(path) {}

  Status Open() {
    if (!in_) return NotFound("cannot read '" + path_ + "'");
    std::string line;
    line_ = 1;
    if (!std::getline(in_, line) || Trim(line) != header_) return Error("expected the header '" + header_ + "'");
    return Status::Ok();
  }
  // The next non-empty row split on commas; false at the end.
  bool Next(std::vector<std::string>& fields) {
    std::string line;
    while (std::getline(in_, line)) {
      ++line_;
      line = Trim(line);
      if (line.empty()) continue;
      fields.clear();
      std::stringstream row(line);
      std::string field;
      while (std::getline(row, field, ',')) fields.push_back(field);
      if (line.back() == ',') fields.emplace_back();
      return true;
    }
    return false;
  }
  Status Error(const std::string& reason) const { return InvalidArgument(path_ + ":" + std::to_string(line_) + ": " + reason); }
  // A non-negative integer field, or an error naming the column.
  Result<std::int64_t> Integer(const std::string& text, const char* column) const {
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < 0) {
      return Error(std::string(column) + " '" + text + "' is not a non-negative integer");
    }
    return value;
  }

 private:
  static std::string Trim(std::string s) {
    while (!s.empty() && (s.back() == '\r' || s.back() == ' ')) s.pop_back();
    return s;
  }
  std::string path_, header_;
  std::ifstream in_;
  std::size_t line_ = 0;
};

// GPU memory of the trace's models (not in the trace itself).
std::int64_t GpuMemory(const std::string& model) {
  static const std::map<std::string, std::int64_t> kMemory = {
      {"P100", 16 * kGiB}, {"T4", 16 * kGiB}, {"V100M16", 16 * kGiB}, {"V100M32", 32 * kGiB},
      {"A10", 24 * kGiB},  {"G2", 32 * kGiB}, {"G3", 32 * kGiB}};
  const auto it = kMemory.find(model);
  return it == kMemory.end() ? 32 * kGiB : it->second;
}

}  // namespace

Result<std::vector<model::NodeSpec>> LoadAlibabaNodes(const std::string& path) {
  CsvReader csv(path, "sn,cpu_milli,memory_mib,gpu,model");
  TESSERA_RETURN_IF_ERROR(csv.Open());
  std::vector<model::NodeSpec> nodes;
  std::vector<std::string> f;
  while (csv.Next(f)) {
    if (f.size() != 5) return csv.Error("expected 5 fields, got " + std::to_string(f.size()));
    if (f[0].empty()) return csv.Error("sn (the node name) is empty");
    auto cpu = csv.Integer(f[1], "cpu_milli");
    if (!cpu.ok()) return cpu.status();
    auto memory = csv.Integer(f[2], "memory_mib");
    if (!memory.ok()) return memory.status();
    auto gpus = csv.Integer(f[3], "gpu");
    if (!gpus.ok()) return gpus.status();
    if (*gpus > model::kMaxGpusPerNode) return csv.Error("gpu " + f[3] + " is more than a node can hold");
    if (*gpus > 0 && f[4].empty()) return csv.Error("model is empty for a node with GPUs");
    model::NodeSpec node;
    node.name = f[0];
    node.cpu_milli = *cpu;
    node.memory = *memory * kMiB;
    node.gpus = static_cast<std::int32_t>(*gpus);
    node.gpu_model = f[4].empty() ? "none" : f[4];
    node.gpu_memory = GpuMemory(f[4]);
    node.leaf = "leaf-" + std::to_string(nodes.size() / 32);
    nodes.push_back(std::move(node));
  }
  if (nodes.empty()) return InvalidArgument(path + ": no nodes");
  return nodes;
}

Result<Workload> LoadAlibabaPods(const std::string& path) {
  CsvReader csv(path, "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time");
  TESSERA_RETURN_IF_ERROR(csv.Open());
  Workload workload;
  workload.source = path;
  // Each pod's run: (start, deletion time or -1 while running at the trace's end).
  std::vector<std::pair<Time, Time>> runs;
  std::vector<std::string> f;
  while (csv.Next(f)) {
    if (f.size() != 11) return csv.Error("expected 11 fields, got " + std::to_string(f.size()));
    if (f[0].empty()) return csv.Error("name is empty");
    auto cpu = csv.Integer(f[1], "cpu_milli");
    if (!cpu.ok()) return cpu.status();
    auto memory = csv.Integer(f[2], "memory_mib");
    if (!memory.ok()) return memory.status();
    auto num_gpu = csv.Integer(f[3], "num_gpu");
    if (!num_gpu.ok()) return num_gpu.status();
    auto gpu_milli = csv.Integer(f[4], "gpu_milli");
    if (!gpu_milli.ok()) return gpu_milli.status();
    if (*num_gpu == 0 && *gpu_milli != 0) return csv.Error("gpu_milli " + f[4] + " for a pod without GPUs");
    if (*num_gpu == 1 && (*gpu_milli == 0 || *gpu_milli > 1000)) return csv.Error("gpu_milli " + f[4] + " is not a share of one GPU (1..1000)");
    if (*num_gpu > 1 && *gpu_milli != 1000) return csv.Error("gpu_milli " + f[4] + " with " + f[3] + " GPUs: whole GPUs are 1000");
    auto created = csv.Integer(f[8], "creation_time");
    if (!created.ok()) return created.status();
    Time scheduled = *created;
    if (!f[10].empty()) {
      auto s = csv.Integer(f[10], "scheduled_time");
      if (!s.ok()) return s.status();
      scheduled = *s;
    }
    Time end = -1;
    if (!f[9].empty()) {
      auto d = csv.Integer(f[9], "deletion_time");
      if (!d.ok()) return d.status();
      end = *d;
      if (end < scheduled) return csv.Error("deletion_time is before the pod started");
    }
    WorkloadJob job;
    job.job.name = f[0];
    model::TaskGroup group;
    group.name = "main";
    group.request.gpu_milli = *num_gpu == 1 ? *gpu_milli : *num_gpu * 1000;
    group.request.cpu_milli = *cpu;
    group.request.memory = *memory * kMiB;
    group.request.gpu_model = f[5];
    job.job.groups.push_back(std::move(group));
    job.submit = *created;
    job.group = f[6];
    runs.emplace_back(scheduled, end);
    workload.jobs.push_back(std::move(job));
  }
  if (workload.jobs.empty()) return InvalidArgument(path + ": no pods");
  Time trace_end = 0;
  for (const auto& [start, end] : runs) trace_end = std::max({trace_end, start, end});
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto [start, end] = runs[i];
    workload.jobs[i].duration = (end < 0 ? trace_end : end) - start;
  }
  std::stable_sort(workload.jobs.begin(), workload.jobs.end(),
                   [](const WorkloadJob& a, const WorkloadJob& b) { return a.submit < b.submit; });
  return workload;
}

}  // namespace tessera::simkit
