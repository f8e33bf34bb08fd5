// sbatch options -> a Tessera Job document (JSON, which the server reads as
// its YAML). The allocation becomes one task group, "node", with one task
// per allocated node (replicas = nodes, placed one per node: onePerNode);
// each task holds that node's GPUs, CPUs and memory. Every task runs
// `tessera slurm-step` (step_runner.h): node rank 0 runs the script as the
// batch step, the others wait for srun. What the step needs travels in the
// task's environment: the SLURM_* values known at submission, and
// TESSERA_SLURM_STEP (the script, its arguments, -o/-e, the time limit and
// signal) as JSON.
//
// How each option maps, and what is refused, is docs/slurm.md's table.
// Errors name the option and where it was written ("train.sh:4: --gpus=3:
// ..."); dependencies are by job id (spec.dependsOn[].jobId), checked to
// exist by the caller's `job_exists`.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "cli/slurm/sbatch_options.h"

namespace tessera::cli::slurm {

struct SubmitContext {
  std::string script;       // the batch script's text (for --wrap, the script made from it)
  std::string script_name;  // its file name, the default job name; empty for --wrap
  std::vector<std::string> args;
  std::string submit_dir;   // absolute
  std::string submit_host;
  std::string user;
  std::string tessera_binary;  // what each task runs (absolute: the nodes share the install)
  std::map<std::string, std::string> environment;  // the submitter's, for --export
  // Checks that a dependency's job exists (through the API); an error says why not.
  std::function<Status(std::int64_t)> job_exists;
  // The GPUs of the largest node (of the asked model), for --exclusive; unset: unknown.
  std::optional<std::int32_t> node_gpus;
};

// The sizes the translation settled on, which the step environment repeats.
struct Allocation {
  std::int32_t nodes = 1;
  std::int32_t ntasks = 1;
  std::int32_t tasks_per_node = 1;
  std::int32_t gpus_per_node = 0;
  std::int64_t cpu_per_node = 0;       // whole CPUs; 0: none asked
  std::int64_t memory_per_node = 0;    // bytes; 0: none asked
  std::string gpu_model;
};

Result<Allocation> Allocate(const SbatchOptions& options, const SubmitContext& context);

// The Job document, or the first error.
Result<nlohmann::json> TranslateToJob(const SbatchOptions& options, const SubmitContext& context);

// A DNS label from a Slurm job name: "My_Train run" -> "my-train-run".
std::string TesseraName(const std::string& slurm_name);

// The priority a --qos names (docs/slurm.md): low -100, normal 0, high 100,
// urgent 1000; standby and scavenger are low and preemptible.
Result<std::int32_t> PriorityOfQos(const std::string& qos);

// The script --wrap runs: "#!/bin/sh\n" + the command.
std::string WrapScript(const std::string& command);

}  // namespace tessera::cli::slurm
