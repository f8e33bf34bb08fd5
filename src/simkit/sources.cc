#include "simkit/sources.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/quantity.h"
#include "base/random.h"
#include "simkit/alibaba_trace.h"
#include "simkit/jsonl_trace.h"
#include "simkit/philly_trace.h"
#include "simkit/synthetic_workload.h"
#include "spec/cluster_yaml.h"

namespace tessera::simkit {
namespace {

Result<Workload> Philly(const std::string& path, const SourceOptions& options) {
  PhillyOptions philly;
  philly.load = options.load;
  if (options.helios) {
    philly.window_start = *ParseTimestamp("2017-10-01 00:00:00");
    philly.window_end = *ParseTimestamp("2017-12-01 00:00:00");
    for (const auto& [vc, nodes] : HeliosVcNodes()) philly.vcs.insert(vc);
  }
  return LoadPhillyCsv(path, philly);
}

Result<Workload> Synthetic(const std::string& count_text, const SourceOptions& options) {
  const long count = std::atol(count_text.c_str());
  if (count <= 0) return InvalidArgument("--workload synthetic:N needs a positive job count");
  Workload workload{"synthetic", {}, {}};
  Rng arrivals(options.seed ^ 0x9e3779b97f4a7c15ULL);
  double t = 0;
  for (auto& g : GenerateWorkload(static_cast<std::size_t>(count), {model::QueueId(0)}, {}, options.seed)) {
    t += arrivals.Exponential(1.0 / options.rate);
    workload.jobs.push_back({std::move(g.job), "default", static_cast<Time>(t), g.duration, ""});
  }
  return workload;
}

// gang:GPUS:DURATION: one job of GPUS/8 tasks of 8 GPUs.
Result<Workload> Gang(const std::string& arg) {
  const std::size_t colon = arg.find(':');
  const long gpus = std::atol(arg.substr(0, colon).c_str());
  auto duration = ParseDuration(colon == std::string::npos ? "" : arg.substr(colon + 1));
  if (gpus <= 0 || gpus % 8 || !duration.ok()) {
    return InvalidArgument("--workload gang:GPUS:DURATION, GPUS a multiple of 8 (gang:16000:30d)");
  }
  WorkloadJob job;
  job.job.name = "gang";
  model::TaskGroup group;
  group.name = "worker";
  group.replicas = group.min_replicas = static_cast<std::int32_t>(gpus / 8);
  group.request.gpu_milli = 8000;
  job.job.groups.push_back(group);
  job.duration = *duration;
  return Workload{"gang", {std::move(job)}, {}};
}

}  // namespace

const std::map<std::string, std::int32_t>& HeliosVcNodes() {
  static const std::map<std::string, std::int32_t> kNodes = {
      {"6214e9", 64}, {"7f04ca", 32}, {"11cb48", 16}, {"b436b2", 64}, {"ee9e8c", 64}, {"e13805", 16},
      {"6c71a0", 32}, {"2869ce", 16}, {"ed69ec", 8},  {"103959", 8},  {"0e4a51", 32}};
  return kNodes;
}

Result<Workload> LoadWorkloadSource(const std::string& source, const SourceOptions& options) {
  const std::size_t colon = source.find(':');
  const std::string kind = source.substr(0, colon);
  const std::string arg = colon == std::string::npos ? "" : source.substr(colon + 1);
  if (kind == "philly") return Philly(arg, options);
  if (kind == "alibaba") return LoadAlibabaPods(arg);
  if (kind == "jsonl") return LoadJsonLines(arg);
  if (kind == "synthetic") return Synthetic(arg, options);
  if (kind == "gang") return Gang(arg);
  return InvalidArgument("--workload: write philly:PATH, alibaba:PODS.csv, jsonl:PATH, synthetic:N or gang:GPUS:DURATION");
}

Result<std::vector<model::NodeSpec>> LoadNodeSource(const std::string& source) {
  if (source.starts_with("alibaba:")) return LoadAlibabaNodes(source.substr(8));
  if (std::filesystem::exists(source)) {
    std::stringstream text;
    text << std::ifstream(source).rdbuf();
    return spec::ParseClusterYaml(text.str(), source);
  }
  auto shape = spec::ParseClusterShape(source);
  if (!shape.ok()) return shape.status();
  return model::GenerateNodes(*shape);
}

Result<model::Cluster> LoadClusterSource(const std::string& source) {
  auto nodes = LoadNodeSource(source);
  if (!nodes.ok()) return nodes.status();
  return model::Cluster::Build(*nodes);
}

}  // namespace tessera::simkit
