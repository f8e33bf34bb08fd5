// Job specs in YAML, Kubernetes style, strictly validated (docs/job-spec.md).
//
//   apiVersion: tessera/v1
//   kind: Job
//   metadata: {name: llama-finetune, queue: research/nlp}
//   spec:
//     priority: 100
//     preemptible: true
//     walltime: 6h
//     tasks:
//       - name: worker
//         replicas: 4
//         minReplicas: 4
//         resources: {gpus: 8, cpus: 64, memory: 512Gi, gpuModel: H100, gpuMemory: 80Gi}
//         command: [torchrun, train.py]
//         env: {NCCL_DEBUG: INFO}
//         workingDir: /home/alice/llama
//     topology: {level: leaf, mode: required}
//     checkpoint: {interval: 30m}
//     restart: {maxRestarts: 5}
//     dependsOn: [{job: data-prep, when: succeeded}]
//
// A file may hold several documents separated by "---". Every error names the
// source, line and column, the field path and the reason:
//   "jobs.yaml:9:20: spec.tasks[0].resources.gpus: 9 GPUs per task, but the largest node has 8"
// Unknown fields, wrong types, bad names, unknown queues, and requests this
// cluster can never satisfy (model/feasibility.h) are all rejected.
#pragma once

#include <string_view>
#include <vector>

#include "base/status.h"
#include "model/cluster.h"
#include "model/job.h"
#include "model/queue.h"
#include "spec/yaml_util.h"

namespace tessera::spec {

struct JobParseOptions {
  // Off when reloading jobs that were accepted earlier (server recovery): the
  // cluster may have changed since, and an accepted job is never dropped; it
  // waits with the reason instead.
  bool check_feasible = true;
  // Reloading jobs accepted earlier (server recovery): a queue that no
  // longer exists (deleted once it held only ended jobs) leaves the job at
  // the root of the tree instead of refusing it; the caller keeps its path.
  bool reload = false;
  // When set, receives each job's own document as YAML text, in job order,
  // so that one document of a multi-job file can be stored and shown alone.
  std::vector<std::string>* documents = nullptr;
};

// Returns the jobs with every spec field set (queue resolved to its id),
// runtime state left at its defaults; ids are left invalid for the caller.
Result<std::vector<model::Job>> ParseJobYaml(std::string_view text, std::string_view source,
                                             const model::Cluster& cluster,
                                             const model::QueueTree& queues,
                                             const JobParseOptions& options = {});

// The same in two steps, for callers that must hold a lock only while the
// cluster is read: the YAML syntax (most of the cost) needs no cluster.
// A body that is one JSON object is read by ReadJsonObject (json_document.h),
// several times faster, into values without line and column; when
// ParseJobDocuments rejects those, load again with `positions` for an error
// that says where.
Result<std::vector<YamlValue>> LoadJobDocuments(std::string_view text, std::string_view source, bool positions = false);
Result<std::vector<model::Job>> ParseJobDocuments(const std::vector<YamlValue>& documents, std::string_view source,
                                                  const model::Cluster& cluster, const model::QueueTree& queues,
                                                  const JobParseOptions& options = {});

}  // namespace tessera::spec
