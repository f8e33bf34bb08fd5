#include "cli/quick_job.h"

#include <cctype>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "cli/api_client.h"
#include "cli/commands.h"

namespace tessera::cli {

using nlohmann::json;

void AddQuickJobFlags(CLI::App* cmd, QuickJobArgs* a) {
  cmd->add_option("--name", a->name, "Job name (quick form; default from the command)");
  cmd->add_option("-q,--queue", a->queue, "Queue (quick form; default: default)");
  cmd->add_option("--gpus", a->gpus, "GPUs per task: whole (2) or a fraction (0.25)");
  cmd->add_option("--gpu-memory", a->gpu_memory, "GPU memory per GPU, e.g. 20Gi (a fraction without it holds its share of the GPU's memory)");
  cmd->add_option("--gpu-model", a->gpu_model, "Accepted GPU models, e.g. H100|H200");
  cmd->add_option("--gpu-sharing", a->gpu_sharing, "How a fraction shares its GPU: vgpu (default), mps, timeslice");
  cmd->add_option("--gpu-memory-burst", a->gpu_memory_burst,
                  "How far past --gpu-memory a vGPU fraction may burst, e.g. 8Gi (needs --checkpoint-signal)");
  cmd->add_option("--mig", a->mig, "One MIG device of this profile per task, e.g. 1g.10gb (instead of --gpus)");
  cmd->add_option("--checkpoint-signal", a->checkpoint_signal,
                  "Signal that asks the job to checkpoint and give back burst memory, e.g. SIGUSR1");
  cmd->add_option("-n,--tasks", a->tasks, "Tasks (ranks) in the gang")->check(CLI::PositiveNumber);
  cmd->add_option("--cpus", a->cpus, "CPUs per task");
  cmd->add_option("--memory", a->memory, "Memory per task, e.g. 16Gi");
  cmd->add_option("--priority", a->priority, "Priority");
  cmd->add_option("--walltime", a->walltime, "Run-time estimate, e.g. 2h");
  cmd->add_option("--max-restarts", a->max_restarts, "Restarts after a failure")->check(CLI::NonNegativeNumber);
  cmd->add_option("-e,--env", a->env, "NAME=VALUE for every task");
  cmd->add_option("-a,--array", a->array,
                  "Run as an array of elements, e.g. 0-99%10 (at most 10 at a time); each gets TESSERA_ARRAY_INDEX");
}

namespace {

// A DNS label from a command: "python3 train.py" -> "python3-train-py".
std::string NameFrom(const std::vector<std::string>& command) {
  std::string base = std::filesystem::path(command.front()).filename().string();
  if (command.size() > 1) base += "-" + std::filesystem::path(command[1]).filename().string();
  std::string name;
  for (const char c : base) {
    const char lower = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (std::isalnum(static_cast<unsigned char>(lower))) {
      name += lower;
    } else if (!name.empty() && name.back() != '-') {
      name += '-';
    }
  }
  while (!name.empty() && name.back() == '-') name.pop_back();
  if (name.empty() || !std::isalpha(static_cast<unsigned char>(name.front()))) name = "job-" + name;
  return name.substr(0, 50);
}

}  // namespace

std::string QuickJob(const QuickJobArgs& a) {
  json resources = json::object();
  if (a.gpus != "0") resources["gpus"] = a.gpus;
  if (!a.gpu_memory.empty()) resources["gpuMemory"] = a.gpu_memory;
  if (!a.gpu_model.empty()) resources["gpuModel"] = a.gpu_model;
  if (!a.gpu_sharing.empty()) resources["gpuSharing"] = a.gpu_sharing;
  if (!a.gpu_memory_burst.empty()) resources["gpuMemoryBurst"] = a.gpu_memory_burst;
  if (!a.mig.empty()) resources["mig"] = a.mig;
  if (!a.cpus.empty()) resources["cpus"] = a.cpus;
  if (!a.memory.empty()) resources["memory"] = a.memory;
  json task = {{"name", "task"}, {"replicas", a.tasks}, {"command", a.command}};
  if (!resources.empty()) task["resources"] = resources;
  json env = json::object();
  for (const std::string& kv : a.env) {
    const std::size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) Fail(kExitBadInput, "--env: '" + kv + "' is not NAME=VALUE");
    env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  if (!env.empty()) task["env"] = env;
  json spec = {{"tasks", json::array({task})}};
  if (a.priority != 0) spec["priority"] = a.priority;
  if (a.max_restarts != 0) spec["restart"] = {{"maxRestarts", a.max_restarts}};
  if (!a.walltime.empty()) spec["walltime"] = a.walltime;
  if (!a.checkpoint_signal.empty()) spec["checkpoint"] = {{"signal", a.checkpoint_signal}};
  if (!a.array.empty()) spec["array"] = a.array;
  if (a.interactive) spec["interactive"] = a.idle_timeout.empty() ? json::object() : json{{"idleTimeout", a.idle_timeout}};
  json metadata = {{"name", a.name.empty() ? NameFrom(a.command) : a.name}};
  if (!a.queue.empty()) metadata["queue"] = a.queue;
  return json{{"apiVersion", "tessera/v1"}, {"kind", "Job"}, {"metadata", metadata}, {"spec", spec}}.dump();
}


}  // namespace tessera::cli
