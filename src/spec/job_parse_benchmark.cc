// What reading a job submission costs, by reader: the YAML path (libyaml's
// syntax check, then yaml-cpp) against the JSON path (json_document.h) on
// the same JSON body, then the spec parse that follows either.
// Run: build/release/src/spec/spec_job_parse_benchmark
#include <benchmark/benchmark.h>

#include <string>

#include "spec/cluster_yaml.h"
#include "spec/job_yaml.h"

namespace tessera::spec {
namespace {

// What `tessera bench control-plane` posts, and a larger gang with env.
const std::string kSmall =
    R"({"apiVersion":"tessera/v1","kind":"Job","metadata":{"name":"bench-1"},)"
    R"("spec":{"tasks":[{"name":"t","command":["sleep","1"],"resources":{"gpus":1.0}}]}})";
const std::string kGang =
    R"({"apiVersion":"tessera/v1","kind":"Job","metadata":{"name":"llama-70b","queue":"default"},)"
    R"("spec":{"priority":100,"walltime":"6h","topology":{"level":"leaf","mode":"required"},)"
    R"("checkpoint":{"interval":"30m"},"restart":{"maxRestarts":5},)"
    R"("tasks":[{"name":"worker","replicas":4,"command":["torchrun","--nproc-per-node=8","train.py","--config","70b.yaml"],)"
    R"("env":{"NCCL_DEBUG":"WARN","LR":"0.0003","DATA":"/datasets/pile"},)"
    R"("resources":{"gpus":8,"cpus":64,"memory":"512Gi","gpuMemory":"80Gi"}}]}})";

void Load(benchmark::State& state, const std::string& text, bool yaml) {
  for (auto _ : state) benchmark::DoNotOptimize(LoadJobDocuments(text, "body", /*positions=*/yaml));
}

void LoadAndParse(benchmark::State& state, const std::string& text, bool yaml) {
  const model::Cluster cluster = *model::Cluster::Build(model::GenerateNodes(*ParseClusterShape("64 nodes x 8 GPUs, 8 nodes per leaf")));
  const model::QueueTree queues = *model::QueueTree::Build({{"default", 0, model::kUnlimited, 1.0}});
  for (auto _ : state) {
    Result<std::vector<YamlValue>> documents = LoadJobDocuments(text, "body", /*positions=*/yaml);
    benchmark::DoNotOptimize(ParseJobDocuments(*documents, "body", cluster, queues));
  }
}

BENCHMARK_CAPTURE(Load, small_yaml_reader, kSmall, true);
BENCHMARK_CAPTURE(Load, small_json_reader, kSmall, false);
BENCHMARK_CAPTURE(Load, gang_yaml_reader, kGang, true);
BENCHMARK_CAPTURE(Load, gang_json_reader, kGang, false);
BENCHMARK_CAPTURE(LoadAndParse, small_yaml_reader, kSmall, true);
BENCHMARK_CAPTURE(LoadAndParse, small_json_reader, kSmall, false);
BENCHMARK_CAPTURE(LoadAndParse, gang_yaml_reader, kGang, true);
BENCHMARK_CAPTURE(LoadAndParse, gang_json_reader, kGang, false);

}  // namespace
}  // namespace tessera::spec
