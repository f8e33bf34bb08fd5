#include "simkit/jsonl_trace.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "base/quantity.h"

namespace tessera::simkit {
namespace {

using nlohmann::json;

// Reads a quantity written as a JSON number or a string ("20Gi", "250m", "6h").
template <typename Parse>
Result<std::int64_t> Quantity(const json& value, Parse parse, double scale) {
  if (value.is_number()) {
    const double v = value.get<double>() * scale;
    if (!(v >= 0)) return InvalidArgument("must not be negative");
    return static_cast<std::int64_t>(std::llround(v));
  }
  if (value.is_string()) return parse(value.get<std::string>());
  return InvalidArgument("expected a number or a string, got " + std::string(value.type_name()));
}

Result<WorkloadJob> ParseJob(const json& line) {
  static const std::set<std::string> kFields = {"name", "submit", "duration", "queue", "gpus", "gpuMemory", "gpuModel",
                                                "cpus", "memory", "tasks", "priority", "preemptible", "walltime",
                                                "topology", "topologyMode", "checkpointInterval", "group"};
  if (!line.is_object()) return InvalidArgument("expected a JSON object");
  for (const auto& [key, value] : line.items()) {
    if (!kFields.contains(key)) return InvalidArgument(key + ": unknown field");
  }
  for (const char* required : {"name", "submit", "duration", "gpus"}) {
    if (!line.contains(required)) return InvalidArgument(std::string(required) + ": required field is missing");
  }
  WorkloadJob w;
  model::TaskGroup group;
  group.name = "main";
  const auto field = [&](const char* key, auto read) -> Status {
    if (!line.contains(key)) return Status::Ok();
    Status status = read(line.at(key));
    return status.ok() ? status : InvalidArgument(std::string(key) + ": " + status.message());
  };
  const auto duration = [](const json& v, std::int64_t* out) -> Status {
    auto r = Quantity(v, ParseDuration, 1.0);
    if (!r.ok()) return r.status();
    *out = *r;
    return Status::Ok();
  };
  const auto text = [](const json& v, std::string* out) -> Status {
    if (!v.is_string() || v.get<std::string>().empty()) return InvalidArgument("expected a non-empty string");
    *out = v.get<std::string>();
    return Status::Ok();
  };
  const auto integer = [](const json& v, std::int64_t min, std::int64_t* out) -> Status {
    if (!v.is_number_integer() || v.get<std::int64_t>() < min) {
      return InvalidArgument("expected an integer of at least " + std::to_string(min));
    }
    *out = v.get<std::int64_t>();
    return Status::Ok();
  };
  std::int64_t tasks = 1, priority = 0, submit = 0;
  std::string topology, mode = "preferred";
  TESSERA_RETURN_IF_ERROR(field("name", [&](const json& v) { return text(v, &w.job.name); }));
  TESSERA_RETURN_IF_ERROR(field("submit", [&](const json& v) { return duration(v, &submit); }));
  TESSERA_RETURN_IF_ERROR(field("duration", [&](const json& v) { return duration(v, &w.duration); }));
  TESSERA_RETURN_IF_ERROR(field("walltime", [&](const json& v) { return duration(v, &w.job.walltime); }));
  TESSERA_RETURN_IF_ERROR(field("checkpointInterval", [&](const json& v) { return duration(v, &w.job.checkpoint_interval); }));
  TESSERA_RETURN_IF_ERROR(field("queue", [&](const json& v) { return text(v, &w.queue); }));
  TESSERA_RETURN_IF_ERROR(field("group", [&](const json& v) { return text(v, &w.group); }));
  TESSERA_RETURN_IF_ERROR(field("gpuModel", [&](const json& v) { return text(v, &group.request.gpu_model); }));
  TESSERA_RETURN_IF_ERROR(field("topology", [&](const json& v) { return text(v, &topology); }));
  TESSERA_RETURN_IF_ERROR(field("topologyMode", [&](const json& v) { return text(v, &mode); }));
  TESSERA_RETURN_IF_ERROR(field("tasks", [&](const json& v) { return integer(v, 1, &tasks); }));
  TESSERA_RETURN_IF_ERROR(field("priority", [&](const json& v) { return integer(v, -1000000, &priority); }));
  TESSERA_RETURN_IF_ERROR(field("preemptible", [&](const json& v) -> Status {
    if (!v.is_boolean()) return InvalidArgument("expected true or false");
    w.job.preemptible = v.get<bool>();
    return Status::Ok();
  }));
  const auto quantity = [&](const char* key, auto parse, double scale, std::int64_t* out) {
    return field(key, [&](const json& v) -> Status {
      auto r = Quantity(v, parse, scale);
      if (!r.ok()) return r.status();
      *out = *r;
      return Status::Ok();
    });
  };
  TESSERA_RETURN_IF_ERROR(quantity("gpus", ParseMilli, 1000.0, &group.request.gpu_milli));
  TESSERA_RETURN_IF_ERROR(quantity("cpus", ParseMilli, 1000.0, &group.request.cpu_milli));
  TESSERA_RETURN_IF_ERROR(quantity("memory", ParseBytes, 1.0, &group.request.memory));
  TESSERA_RETURN_IF_ERROR(quantity("gpuMemory", ParseBytes, 1.0, &group.request.gpu_memory));
  TESSERA_RETURN_IF_ERROR(quantity("gpuMemoryBurst", ParseBytes, 1.0, &group.request.gpu_memory_burst));
  const auto read_sharing = [&](const json& v) -> Status {
    std::string name;
    if (Status s = text(v, &name); !s.ok()) return s;
    Result<model::GpuSharing> sharing = model::ParseGpuSharing(name);
    if (!sharing.ok()) return sharing.status();
    group.request.sharing = *sharing;
    return Status::Ok();
  };
  const auto read_signal = [&](const json& v) -> Status {
    std::string name;
    if (Status s = text(v, &name); !s.ok()) return s;
    const std::optional<std::int32_t> signal = model::ParseCheckpointSignal(name);
    if (!signal) return InvalidArgument("unknown checkpoint signal '" + name + "' (" + model::kCheckpointSignalNames + ")");
    w.job.checkpoint_signal = *signal;
    return Status::Ok();
  };
  TESSERA_RETURN_IF_ERROR(field("gpuSharing", read_sharing));
  TESSERA_RETURN_IF_ERROR(field("checkpointSignal", read_signal));
  if (group.request.gpu_milli > 1000 && group.request.gpu_milli % 1000) {
    return InvalidArgument("gpus: above one GPU, ask for whole GPUs");
  }
  if (group.request.gpu_memory_burst > 0 && (!group.request.fractional() || group.request.sharing != model::GpuSharing::kVgpu)) {
    return InvalidArgument("gpuMemoryBurst: a memory burst is for a fraction of a GPU shared as vgpu");
  }
  if (group.request.gpu_memory_burst > 0 && w.job.checkpoint_signal == 0) {
    return InvalidArgument("gpuMemoryBurst: a burst must be given back on request: name a checkpointSignal");
  }
  if (!topology.empty()) {
    const auto level = model::ParseTopologyLevel(topology);
    if (!level) return InvalidArgument("topology: unknown level '" + topology + "' (nvlink-domain, node, leaf, spine, cluster)");
    if (mode != "required" && mode != "preferred") return InvalidArgument("topologyMode: required or preferred");
    w.job.topology = {*level, mode == "required"};
  }
  group.replicas = group.min_replicas = static_cast<std::int32_t>(tasks);
  w.job.groups.push_back(std::move(group));
  w.job.priority = static_cast<std::int32_t>(priority);
  w.submit = submit;
  return w;
}

}  // namespace

Result<Workload> LoadJsonLines(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound("cannot read workload '" + path + "'");
  Workload workload;
  workload.source = path;
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos || line.front() == '#') continue;
    const json parsed = json::parse(line, nullptr, false);
    if (parsed.is_discarded()) return InvalidArgument(path + ":" + std::to_string(number) + ": malformed JSON");
    auto job = ParseJob(parsed);
    if (!job.ok()) return InvalidArgument(path + ":" + std::to_string(number) + ": " + job.status().message());
    workload.jobs.push_back(std::move(job).value());
  }
  if (workload.jobs.empty()) return InvalidArgument(path + ": no jobs");
  std::stable_sort(workload.jobs.begin(), workload.jobs.end(),
                   [](const WorkloadJob& a, const WorkloadJob& b) { return a.submit < b.submit; });
  return workload;
}

}  // namespace tessera::simkit
