#include "cli/slurm/sbatch_job.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>

#include "model/mig.h"

namespace tessera::cli::slurm {
namespace {

using nlohmann::json;

std::string Where(const SbatchOptions& o, const std::string& option) {
  const auto it = o.origin.find(option);
  return (it == o.origin.end() ? std::string("command line") : it->second) + ": --" + option;
}

Status Error(const SbatchOptions& o, const std::string& option, const std::string& message) {
  return InvalidArgument(Where(o, option) + ": " + message);
}

std::int32_t CeilDiv(std::int32_t a, std::int32_t b) { return (a + b - 1) / b; }

// A Slurm GPU type as a Tessera GPU model: "a100" -> "A100", "h100" -> "H100".
std::string ModelOf(std::string type) {
  for (char& c : type) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return type;
}

bool ValidEnvName(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// What --export=ALL leaves out: the submitter's secrets and whatever the
// node, the gang or the step sets for itself.
bool Exportable(const std::string& name) {
  static const std::set<std::string> kNodeOwn = {
      "MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "NODE_RANK", "GROUP_RANK",
      "NNODES", "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "LD_PRELOAD", "PWD", "OLDPWD",
      "SHLVL", "_", "HOSTNAME"};
  return ValidEnvName(name) && !name.starts_with("TESSERA_") && !name.starts_with("SLURM_") &&
         !name.starts_with("PET_") && !kNodeOwn.contains(name);
}

Result<std::map<std::string, std::string>> ExportedEnvironment(const SbatchOptions& o, const SubmitContext& c) {
  std::map<std::string, std::string> env;
  const std::string spec = o.export_spec.value_or("ALL");
  bool all = false;
  for (std::size_t start = 0; start <= spec.size();) {
    std::size_t comma = spec.find(',', start);
    if (comma == std::string::npos) comma = spec.size();
    const std::string item = spec.substr(start, comma - start);
    start = comma + 1;
    if (item == "ALL") {
      all = true;
    } else if (item == "NONE" || item == "NIL") {
      // Only what is named (and Slurm's own variables).
    } else {
      const std::size_t eq = item.find('=');
      const std::string name = item.substr(0, eq);
      if (!ValidEnvName(name)) return Error(o, "export", "'" + item + "' is not NAME or NAME=VALUE");
      if (eq != std::string::npos) {
        env[name] = item.substr(eq + 1);
      } else if (const auto it = c.environment.find(name); it != c.environment.end()) {
        env[name] = it->second;
      }
    }
  }
  if (all) {
    for (const auto& [name, value] : c.environment) {
      if (Exportable(name)) env.emplace(name, value);
    }
  }
  return env;
}

struct Gpus {
  std::int32_t per_node = 0;
  std::string type;
  std::string option;  // which option set it
};

// GPUs per node from whichever of --gres, --gpus-per-node, --gpus-per-task and
// --gpus is given; two that disagree are an error naming both.
Result<Gpus> GpusPerNode(const SbatchOptions& o, std::int32_t nodes, std::int32_t tasks_per_node) {
  std::vector<Gpus> asked;
  if (o.gres) asked.push_back({o.gres->count, o.gres->type, "gres"});
  if (o.gpus_per_node) asked.push_back({o.gpus_per_node->count, o.gpus_per_node->type, "gpus-per-node"});
  if (o.gpus_per_task) asked.push_back({o.gpus_per_task->count * tasks_per_node, o.gpus_per_task->type, "gpus-per-task"});
  if (o.gpus) {
    if (o.gpus->count % nodes != 0) {
      return Error(o, "gpus", std::to_string(o.gpus->count) + " GPUs do not divide evenly over " + std::to_string(nodes) +
                                  " nodes; every node of a Tessera allocation holds the same GPUs (use --gpus-per-node)");
    }
    asked.push_back({o.gpus->count / nodes, o.gpus->type, "gpus"});
  }
  if (asked.empty()) return Gpus{};
  for (const Gpus& g : asked) {
    if (g.per_node != asked.front().per_node) {
      return Error(o, g.option, "asks " + std::to_string(g.per_node) + " GPUs per node, but " + Where(o, asked.front().option) +
                                    " asks " + std::to_string(asked.front().per_node));
    }
    if (!g.type.empty() && !asked.front().type.empty() && g.type != asked.front().type) {
      return Error(o, g.option, "GPU type '" + g.type + "' differs from '" + asked.front().type + "'");
    }
  }
  Gpus g = asked.front();
  for (const Gpus& other : asked) {
    if (g.type.empty()) g.type = other.type;
  }
  return g;
}

// -C: GPU models, '|' for alternatives. Tessera nodes carry no other features.
Result<std::string> ModelsOfConstraint(const SbatchOptions& o) {
  if (o.constraint.empty()) return std::string();
  std::string text = o.constraint;
  if (text.front() == '[' && text.back() == ']') text = text.substr(1, text.size() - 2);
  if (text.find('&') != std::string::npos || text.find(',') != std::string::npos) {
    return Error(o, "constraint", "'" + o.constraint +
                                      "' asks for several features at once; Tessera nodes have one feature, their GPU model "
                                      "(write alternatives with '|')");
  }
  if (text.find_first_of("*()[]") != std::string::npos) {
    return Error(o, "constraint", "'" + o.constraint + "': counts and brackets are not supported; name GPU models, '|' between");
  }
  std::string models;
  for (std::size_t start = 0; start <= text.size();) {
    std::size_t bar = text.find('|', start);
    if (bar == std::string::npos) bar = text.size();
    const std::string feature = text.substr(start, bar - start);
    start = bar + 1;
    if (feature.empty()) return Error(o, "constraint", "'" + o.constraint + "' has an empty feature");
    models += (models.empty() ? "" : "|") + ModelOf(feature);
  }
  return models;
}

std::string Megabytes(std::int64_t bytes) { return std::to_string(bytes >> 20); }

}  // namespace

std::string TesseraName(const std::string& slurm_name) {
  std::string name;
  for (const char c : slurm_name) {
    const char lower = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (std::isalnum(static_cast<unsigned char>(lower))) {
      name += lower;
    } else if (!name.empty() && name.back() != '-') {
      name += '-';
    }
  }
  if (name.size() > 63) name.resize(63);
  while (!name.empty() && name.back() == '-') name.pop_back();
  return name.empty() ? "sbatch" : name;
}

Result<std::int32_t> PriorityOfQos(const std::string& qos) {
  static const std::map<std::string, std::int32_t> kPriority = {
      {"standby", -100}, {"scavenger", -100}, {"low", -100}, {"normal", 0}, {"high", 100}, {"urgent", 1000}};
  const auto it = kPriority.find(qos);
  if (it == kPriority.end()) {
    return InvalidArgument("'" + qos + "' is not a QOS Tessera knows (standby, scavenger, low, normal, high, urgent)");
  }
  return it->second;
}

std::string WrapScript(const std::string& command) { return "#!/bin/sh\n# This script was created by tessera sbatch --wrap.\n\n" + command + "\n"; }

Result<Allocation> Allocate(const SbatchOptions& o, const SubmitContext& c) {
  Allocation a;
  if (o.nodes) {
    a.nodes = *o.nodes;
  } else if (o.ntasks && o.ntasks_per_node) {
    a.nodes = CeilDiv(*o.ntasks, *o.ntasks_per_node);
  }
  if (o.ntasks) {
    a.ntasks = *o.ntasks;
    if (a.ntasks < a.nodes) {
      return Error(o, "ntasks", std::to_string(a.ntasks) + " tasks cannot cover " + std::to_string(a.nodes) + " nodes");
    }
  } else {
    a.ntasks = a.nodes * o.ntasks_per_node.value_or(1);
  }
  a.tasks_per_node = o.ntasks_per_node.value_or(CeilDiv(a.ntasks, a.nodes));
  if (a.tasks_per_node * a.nodes < a.ntasks) {
    return Error(o, "ntasks-per-node", std::to_string(a.tasks_per_node) + " tasks per node on " + std::to_string(a.nodes) +
                                           " nodes cannot hold " + std::to_string(a.ntasks) + " tasks");
  }
  Result<Gpus> gpus = GpusPerNode(o, a.nodes, a.tasks_per_node);
  if (!gpus.ok()) return gpus.status();
  a.gpus_per_node = gpus->per_node;
  a.gpu_model = gpus->type.empty() ? "" : ModelOf(gpus->type);
  Result<std::string> constrained = ModelsOfConstraint(o);
  if (!constrained.ok()) return constrained.status();
  if (!constrained->empty()) {
    if (!a.gpu_model.empty() && a.gpu_model != *constrained) {
      return Error(o, "constraint", "GPU model '" + *constrained + "' differs from the GPU type '" + a.gpu_model +
                                        "' of " + Where(o, gpus->option));
    }
    a.gpu_model = *constrained;
  }
  if (o.exclusive) {
    if (!c.node_gpus) return Error(o, "exclusive", "needs the server to know how many GPUs a node has");
    if (a.gpus_per_node != 0 && a.gpus_per_node != *c.node_gpus) {
      return Error(o, "exclusive", "a whole node holds " + std::to_string(*c.node_gpus) + " GPUs, but " +
                                       Where(o, gpus->option) + " asks " + std::to_string(a.gpus_per_node));
    }
    a.gpus_per_node = *c.node_gpus;
  }
  if (o.cpus_per_task) a.cpu_per_node = std::int64_t{*o.cpus_per_task} * a.tasks_per_node;
  if (o.cpus_per_gpu) {
    if (o.cpus_per_task) return Error(o, "cpus-per-gpu", "give --cpus-per-task or --cpus-per-gpu, not both");
    a.cpu_per_node = std::int64_t{*o.cpus_per_gpu} * a.gpus_per_node;
  }
  const int memory_options = (o.mem ? 1 : 0) + (o.mem_per_gpu ? 1 : 0) + (o.mem_per_cpu ? 1 : 0);
  if (memory_options > 1) {
    return Error(o, o.mem_per_cpu ? "mem-per-cpu" : "mem-per-gpu", "--mem, --mem-per-gpu and --mem-per-cpu exclude each other");
  }
  if (o.mem) a.memory_per_node = *o.mem;
  if (o.mem_per_gpu) {
    if (a.gpus_per_node == 0) return Error(o, "mem-per-gpu", "the job asks no GPUs");
    a.memory_per_node = *o.mem_per_gpu * a.gpus_per_node;
  }
  if (o.mem_per_cpu) {
    const std::int64_t cpus = a.cpu_per_node > 0 ? a.cpu_per_node : a.tasks_per_node;  // Slurm's default: a CPU per task
    a.memory_per_node = *o.mem_per_cpu * cpus;
  }
  return a;
}

Result<json> TranslateToJob(const SbatchOptions& o, const SubmitContext& c) {
  Result<Allocation> allocation = Allocate(o, c);
  if (!allocation.ok()) return allocation.status();
  const Allocation& a = *allocation;
  const std::string slurm_name = !o.job_name.empty() ? o.job_name
                                 : !c.script_name.empty() ? std::filesystem::path(c.script_name).filename().string()
                                                          : "wrap";

  json resources = json::object();
  // --gres=gpu:1g.10gb:1, as Slurm's NVML autodetection names MIG devices:
  // a MIG device of that profile (docs/gpu-sharing.md, "MIG").
  std::string profile = a.gpu_model;
  std::transform(profile.begin(), profile.end(), profile.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  if (!profile.empty() && model::ParseMigProfile(profile).ok()) {
    if (a.gpus_per_node != 1) {
      return Error(o, "gres", "asks " + std::to_string(a.gpus_per_node) + " MIG devices of " + profile +
                                  " per node; a Tessera allocation holds one MIG device on each node (CUDA shows a process one)");
    }
    resources["mig"] = profile;
  } else if (a.gpus_per_node > 0) {
    resources["gpus"] = a.gpus_per_node;
  }
  if (!a.gpu_model.empty() && !resources.contains("mig")) {
    if (a.gpus_per_node == 0) return Error(o, o.constraint.empty() ? "gres" : "constraint", "names a GPU model, but the job asks no GPUs");
    resources["gpuModel"] = a.gpu_model;
  }
  if (a.cpu_per_node > 0) resources["cpus"] = a.cpu_per_node;
  if (a.memory_per_node > 0) resources["memory"] = std::to_string(a.memory_per_node);

  Result<std::map<std::string, std::string>> exported = ExportedEnvironment(o, c);
  if (!exported.ok()) return exported.status();
  json env = *exported;
  // What Slurm sets that is known at submission; the step adds the rest.
  env["SLURM_JOB_NAME"] = slurm_name;
  env["SLURM_NNODES"] = env["SLURM_JOB_NUM_NODES"] = std::to_string(a.nodes);
  env["SLURM_NTASKS"] = env["SLURM_NPROCS"] = std::to_string(a.ntasks);
  env["SLURM_NTASKS_PER_NODE"] = env["SLURM_TASKS_PER_NODE"] = std::to_string(a.tasks_per_node);
  if (o.cpus_per_task) env["SLURM_CPUS_PER_TASK"] = std::to_string(*o.cpus_per_task);
  if (a.cpu_per_node > 0) env["SLURM_CPUS_ON_NODE"] = std::to_string(a.cpu_per_node);
  if (o.cpus_per_gpu) env["SLURM_CPUS_PER_GPU"] = std::to_string(*o.cpus_per_gpu);
  if (a.gpus_per_node > 0) {
    env["SLURM_GPUS_ON_NODE"] = std::to_string(a.gpus_per_node);
    env["SLURM_GPUS_PER_NODE"] = std::to_string(a.gpus_per_node);
    env["SLURM_GPUS"] = std::to_string(a.gpus_per_node * a.nodes);
  }
  if (o.gpus_per_task) env["SLURM_GPUS_PER_TASK"] = std::to_string(o.gpus_per_task->count);
  if (a.memory_per_node > 0) env["SLURM_MEM_PER_NODE"] = Megabytes(a.memory_per_node);
  if (o.mem_per_gpu) env["SLURM_MEM_PER_GPU"] = Megabytes(*o.mem_per_gpu);
  if (o.mem_per_cpu) env["SLURM_MEM_PER_CPU"] = Megabytes(*o.mem_per_cpu);
  const std::string queue = !o.partition.empty() ? o.partition : o.account;
  env["SLURM_JOB_PARTITION"] = queue.empty() ? "default" : queue;
  if (!o.account.empty()) env["SLURM_JOB_ACCOUNT"] = o.account;
  if (!o.qos.empty()) env["SLURM_JOB_QOS"] = o.qos;
  env["SLURM_SUBMIT_DIR"] = c.submit_dir;
  env["SLURM_SUBMIT_HOST"] = c.submit_host;
  env["SLURM_JOB_USER"] = c.user;
  env["SLURM_CLUSTER_NAME"] = "tessera";
  if (o.exclusive) env["SLURM_EXCLUSIVE"] = "1";

  std::string working_dir = c.submit_dir;
  if (!o.chdir.empty()) {
    const std::filesystem::path dir(o.chdir);
    working_dir = (dir.is_absolute() ? dir : std::filesystem::path(c.submit_dir) / dir).lexically_normal().string();
  }
  json step = {{"script", c.script}, {"args", c.args}, {"output", o.output}, {"error", o.error}, {"openMode", o.open_mode}};
  if (o.time_limit && *o.time_limit > 0) step["timeLimit"] = *o.time_limit;
  if (o.signal) step["signal"] = {{"name", o.signal->name}, {"seconds", o.signal->seconds}, {"batchOnly", o.signal->batch_only}};
  env["TESSERA_SLURM_STEP"] = step.dump();

  json task = {{"name", "node"}, {"replicas", a.nodes}, {"command", {c.tessera_binary, "slurm-step"}}, {"env", env},
               {"workingDir", working_dir}};
  if (a.nodes > 1) task["onePerNode"] = true;
  if (!resources.empty()) task["resources"] = resources;

  json spec = {{"tasks", json::array({task})}};
  if (o.time_limit && *o.time_limit > 0) spec["walltime"] = std::to_string(*o.time_limit) + "s";
  if (!o.qos.empty()) {
    Result<std::int32_t> priority = PriorityOfQos(o.qos);
    if (!priority.ok()) return Error(o, "qos", priority.status().message());
    if (*priority != 0) spec["priority"] = *priority;
  }
  if (o.requeue) spec["restart"] = {{"maxRestarts", *o.requeue ? 3 : 0}};
  if (o.signal) spec["checkpoint"] = {{"signal", o.signal->name}, {"gracePeriod", std::to_string(o.signal->seconds) + "s"}};
  json depends = json::array();
  for (const SbatchDependency& d : o.dependencies) {
    if (c.job_exists) {
      if (Status exists = c.job_exists(d.job_id); !exists.ok()) return Error(o, "dependency", exists.message());
    }
    const char* when = d.kind == SbatchDependency::Kind::kAfterOk    ? "succeeded"
                       : d.kind == SbatchDependency::Kind::kAfterAny ? "ended"
                                                                     : "failed";
    depends.push_back({{"jobId", d.job_id}, {"when", when}});
  }
  if (!depends.empty()) spec["dependsOn"] = depends;
  if (o.singleton) spec["singleton"] = true;
  if (!o.array.empty()) spec["array"] = o.array;

  json metadata = {{"name", TesseraName(slurm_name)}};
  if (!queue.empty()) metadata["queue"] = queue;
  return json{{"apiVersion", "tessera/v1"}, {"kind", "Job"}, {"metadata", metadata}, {"spec", spec}};
}

}  // namespace tessera::cli::slurm
