#include "cli/slurm/slurm_env.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>

#include "cli/slurm/hostlist.h"

extern char** environ;

namespace tessera::cli::slurm {
namespace {

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> parts;
  if (text.empty()) return parts;
  for (std::size_t start = 0;;) {
    const std::size_t comma = text.find(',', start);
    parts.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return parts;
    start = comma + 1;
  }
}

std::string Get(const Environment& env, const std::string& name) {
  const auto it = env.find(name);
  return it == env.end() ? std::string() : it->second;
}

std::string Compress(const StepLayout& layout) {
  std::string out;
  for (std::size_t i = 0; i < layout.tasks_on_node.size();) {
    std::size_t j = i;
    while (j + 1 < layout.tasks_on_node.size() && layout.tasks_on_node[j + 1] == layout.tasks_on_node[i]) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(layout.tasks_on_node[i]);
    if (j > i) out += "(x" + std::to_string(j - i + 1) + ")";
    i = j + 1;
  }
  return out;
}

}  // namespace

Environment CurrentEnvironment() {
  Environment env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view text(*e);
    const std::size_t eq = text.find('=');
    if (eq != std::string_view::npos) env.emplace(text.substr(0, eq), text.substr(eq + 1));
  }
  return env;
}

Result<AllocationView> ReadAllocation(const Environment& env) {
  AllocationView a;
  for (const char* name : {"TESSERA_JOB_ID", "TESSERA_NODES", "TESSERA_NODE_ADDRESSES", "TESSERA_STEP_SECRET"}) {
    if (Get(env, name).empty()) {
      return FailedPrecondition(std::string(name) +
                                " is not set: the Slurm step runs only as a task started by a Tessera agent of a server that "
                                "provides it (docs/slurm.md)");
    }
  }
  a.job_id = Get(env, "TESSERA_JOB_ID");
  a.nodes = SplitList(Get(env, "TESSERA_NODES"));
  a.addresses = SplitList(Get(env, "TESSERA_NODE_ADDRESSES"));
  a.secret = Get(env, "TESSERA_STEP_SECRET");
  if (a.nodes.size() != a.addresses.size()) {
    return FailedPrecondition("TESSERA_NODES and TESSERA_NODE_ADDRESSES differ in length");
  }
  const std::string rank = Get(env, "NODE_RANK");
  const auto [p, error] = std::from_chars(rank.data(), rank.data() + rank.size(), a.node_rank);
  if (error != std::errc() || a.node_rank < 0 || a.node_rank >= static_cast<std::int32_t>(a.nodes.size())) {
    return FailedPrecondition("NODE_RANK '" + rank + "' is not a node of TESSERA_NODES");
  }
  const std::string attempt = Get(env, "TESSERA_ATTEMPT");
  std::from_chars(attempt.data(), attempt.data() + attempt.size(), a.attempt);
  return a;
}

Environment BatchEnvironment(const Environment& env, const AllocationView& a) {
  Environment out;
  const std::string& node = a.nodes[a.node_rank];
  out["SLURM_JOB_ID"] = out["SLURM_JOBID"] = a.job_id;
  out["SLURM_JOB_NODELIST"] = out["SLURM_NODELIST"] = CompressHostlist(a.nodes);
  out["SLURM_NODEID"] = std::to_string(a.node_rank);
  out["SLURMD_NODENAME"] = out["SLURM_TOPOLOGY_ADDR"] = node;
  out["SLURM_PROCID"] = out["SLURM_LOCALID"] = "0";
  out["SLURM_RESTART_COUNT"] = Get(env, "TESSERA_RESTART_COUNT").empty() ? "0" : Get(env, "TESSERA_RESTART_COUNT");
  out["SLURM_TASK_PID"] = std::to_string(getpid());
  out["SLURM_JOB_UID"] = std::to_string(getuid());
  out["SLURM_JOB_GID"] = std::to_string(getgid());
  out["ENVIRONMENT"] = "BATCH";
  if (const auto it = env.find("CUDA_VISIBLE_DEVICES"); it != env.end()) {
    const std::string& visible = it->second;
    out["SLURM_GPUS_ON_NODE"] = std::to_string(SplitList(visible).size());
    if (!visible.empty()) out["SLURM_JOB_GPUS"] = out["SLURM_STEP_GPUS"] = visible;
  }
  if (const std::string cpus = Get(env, "SLURM_CPUS_ON_NODE"); !cpus.empty()) out["SLURM_JOB_CPUS_PER_NODE"] = cpus;
  if (const std::string array = Get(env, "TESSERA_ARRAY_JOB_ID"); !array.empty()) {
    out["SLURM_ARRAY_JOB_ID"] = array;
    out["SLURM_ARRAY_TASK_ID"] = Get(env, "TESSERA_ARRAY_INDEX");
    out["SLURM_ARRAY_TASK_COUNT"] = Get(env, "TESSERA_ARRAY_COUNT");
    out["SLURM_ARRAY_TASK_MIN"] = Get(env, "TESSERA_ARRAY_MIN");
    out["SLURM_ARRAY_TASK_MAX"] = Get(env, "TESSERA_ARRAY_MAX");
    out["SLURM_ARRAY_TASK_STEP"] = Get(env, "TESSERA_ARRAY_STEP");
  }
  return out;
}

std::string ExpandOutputPattern(const std::string& pattern, const Environment& env) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 == pattern.size()) {
      out += pattern[i];
      continue;
    }
    std::size_t j = i + 1;
    std::size_t width = 0;
    while (j < pattern.size() && std::isdigit(static_cast<unsigned char>(pattern[j]))) width = width * 10 + (pattern[j++] - '0');
    if (j == pattern.size()) {
      out += pattern.substr(i);
      break;
    }
    const auto pad = [&](std::string s) { return width > s.size() ? std::string(width - s.size(), '0') + s : s; };
    switch (pattern[j]) {
      case '%': out += '%'; break;
      case 'j': out += pad(Get(env, "SLURM_JOB_ID")); break;
      case 'A': out += pad(Get(env, env.contains("SLURM_ARRAY_JOB_ID") ? "SLURM_ARRAY_JOB_ID" : "SLURM_JOB_ID")); break;
      case 'a': out += pad(env.contains("SLURM_ARRAY_TASK_ID") ? Get(env, "SLURM_ARRAY_TASK_ID") : "4294967294"); break;
      case 'x': out += Get(env, "SLURM_JOB_NAME"); break;
      case 'N': out += Get(env, "SLURMD_NODENAME"); break;
      case 'u': out += Get(env, "SLURM_JOB_USER"); break;
      case 'n':
      case 't': out += pad("0"); break;
      case 's': out += "batch"; break;
      default: out += pattern.substr(i, j - i + 1); break;  // as Slurm: unknown ones stay
    }
    i = j;
  }
  return out;
}

Result<StepLayout> LayoutStep(std::optional<std::int32_t> ntasks, std::optional<std::int32_t> nodes,
                              std::optional<std::int32_t> tasks_per_node, std::int32_t allocation_nodes,
                              std::int32_t default_ntasks) {
  StepLayout layout;
  if (nodes && *nodes > allocation_nodes) {
    return InvalidArgument("-N " + std::to_string(*nodes) + ": the allocation has only " + std::to_string(allocation_nodes) + " nodes");
  }
  std::int32_t n = 0;
  if (ntasks) {
    n = *ntasks;
  } else if (tasks_per_node) {
    n = *tasks_per_node * nodes.value_or(allocation_nodes);
  } else if (nodes) {
    n = *nodes;  // srun -N 2 without -n: a task per node
  } else {
    n = default_ntasks;
  }
  if (n < 1) return InvalidArgument("a step needs at least one task");
  layout.nodes = nodes.value_or(std::min(allocation_nodes, tasks_per_node ? (n + *tasks_per_node - 1) / *tasks_per_node : n));
  if (n < layout.nodes) {
    return InvalidArgument(std::to_string(n) + " tasks cannot cover " + std::to_string(layout.nodes) + " nodes");
  }
  if (tasks_per_node && *tasks_per_node * layout.nodes < n) {
    return InvalidArgument("--ntasks-per-node=" + std::to_string(*tasks_per_node) + " on " + std::to_string(layout.nodes) +
                           " nodes cannot hold " + std::to_string(n) + " tasks");
  }
  layout.tasks_on_node.assign(layout.nodes, 0);
  for (std::int32_t node = 0; node < layout.nodes; ++node) {
    // Block: the first n % nodes nodes take one more (or fill to tasks_per_node in order).
    layout.tasks_on_node[node] = tasks_per_node ? std::min(*tasks_per_node, n - node * *tasks_per_node)
                                                : n / layout.nodes + (node < n % layout.nodes ? 1 : 0);
    layout.tasks_on_node[node] = std::max(layout.tasks_on_node[node], 0);
    for (std::int32_t t = 0; t < layout.tasks_on_node[node]; ++t) layout.node_of_task.push_back(node);
  }
  return layout;
}

Environment SrunTaskEnvironment(const StepLayout& layout, std::int32_t task, std::int32_t step_id, const AllocationView& a,
                                const std::string& master_port) {
  Environment env;
  const std::int32_t node = layout.node_of_task[task];
  const std::int32_t local = static_cast<std::int32_t>(
      std::count(layout.node_of_task.begin(), layout.node_of_task.begin() + task, node));
  const std::vector<std::string> step_nodes(a.nodes.begin(), a.nodes.begin() + layout.nodes);
  const std::string ntasks = std::to_string(layout.node_of_task.size());
  env["SLURM_PROCID"] = env["RANK"] = std::to_string(task);
  env["SLURM_LOCALID"] = env["LOCAL_RANK"] = std::to_string(local);
  env["SLURM_NODEID"] = env["NODE_RANK"] = env["GROUP_RANK"] = env["PET_NODE_RANK"] = std::to_string(node);
  env["SLURM_STEP_ID"] = env["SLURM_STEPID"] = std::to_string(step_id);
  env["SLURM_STEP_NUM_TASKS"] = env["SLURM_NTASKS"] = env["SLURM_NPROCS"] = env["WORLD_SIZE"] = ntasks;
  env["SLURM_STEP_NUM_NODES"] = env["SLURM_NNODES"] = env["NNODES"] = env["PET_NNODES"] = std::to_string(layout.nodes);
  env["SLURM_STEP_NODELIST"] = CompressHostlist(step_nodes);
  env["SLURM_STEP_TASKS_PER_NODE"] = env["SLURM_TASKS_PER_NODE"] = Compress(layout);
  env["LOCAL_WORLD_SIZE"] = std::to_string(layout.tasks_on_node[node]);
  env["SLURMD_NODENAME"] = a.nodes[node];
  env["MASTER_ADDR"] = env["PET_MASTER_ADDR"] = a.addresses[0];
  env["MASTER_PORT"] = env["PET_MASTER_PORT"] = master_port;
  return env;
}

bool NodeLocal(const std::string& name) {
  static const char* const kPrefixes[] = {"TESSERA_", "CUDA_", "NVIDIA_", "GPU_DEVICE_ORDINAL"};
  static const char* const kNames[] = {"LD_PRELOAD", "SLURM_GPUS_ON_NODE", "SLURM_JOB_GPUS", "SLURM_STEP_GPUS",
                                       "SLURM_TOPOLOGY_ADDR", "HOSTNAME"};
  for (const char* p : kPrefixes) {
    if (name.starts_with(p)) return true;
  }
  return std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames);
}

}  // namespace tessera::cli::slurm
