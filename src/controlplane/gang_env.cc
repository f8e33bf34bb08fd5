#include "controlplane/gang_env.h"

#include <algorithm>
#include <vector>

namespace tessera::controlplane {

std::map<std::string, std::string> GangEnvironment(const model::Job& job, std::int64_t job_id,
                                                   const std::string& queue_path, const JobRecord& record,
                                                   std::size_t task,
                                                   const std::function<std::string(const std::string&)>& address_of,
                                                   const std::string& step_secret) {
  const std::vector<TaskRecord>& tasks = record.tasks;
  const TaskRecord& self = tasks[task];
  std::vector<std::string> nodes;  // distinct nodes in rank order
  std::int32_t local_rank = 0;
  std::int32_t local_world = 0;
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    if (std::find(nodes.begin(), nodes.end(), tasks[i].node) == nodes.end()) nodes.push_back(tasks[i].node);
    if (tasks[i].node == self.node) {
      if (i < task) ++local_rank;
      ++local_world;
    }
  }
  const auto node_rank = std::find(nodes.begin(), nodes.end(), self.node) - nodes.begin();
  std::map<std::string, std::string> env;
  env["MASTER_ADDR"] = address_of(tasks.front().node);
  env["MASTER_PORT"] = std::to_string(record.master_port);
  env["WORLD_SIZE"] = std::to_string(tasks.size());
  env["RANK"] = std::to_string(task);
  env["LOCAL_RANK"] = std::to_string(local_rank);
  env["LOCAL_WORLD_SIZE"] = std::to_string(local_world);
  env["NODE_RANK"] = std::to_string(node_rank);
  env["GROUP_RANK"] = env["NODE_RANK"];
  env["NNODES"] = std::to_string(nodes.size());
  // torchrun reads its own flags from PET_* variables: one task per node
  // running `torchrun train.py` needs no flags at all.
  env["PET_NNODES"] = env["NNODES"];
  env["PET_NODE_RANK"] = env["NODE_RANK"];
  env["PET_MASTER_ADDR"] = env["MASTER_ADDR"];
  env["PET_MASTER_PORT"] = env["MASTER_PORT"];
  env["TESSERA_JOB_ID"] = std::to_string(job_id);
  env["TESSERA_JOB_NAME"] = job.name;
  env["TESSERA_QUEUE"] = queue_path;
  env["TESSERA_USER"] = record.user;
  env["TESSERA_TASK_NAME"] = self.name;
  env["TESSERA_TASK_INDEX"] = std::to_string(task);
  env["TESSERA_ATTEMPT"] = std::to_string(record.attempt);
  env["TESSERA_RESTART_COUNT"] = std::to_string(job.restarts);
  std::string names, addresses;
  for (const std::string& node : nodes) {
    names += (names.empty() ? "" : ",") + node;
    addresses += (addresses.empty() ? "" : ",") + address_of(node);
  }
  env["TESSERA_NODES"] = names;
  env["TESSERA_NODE_ADDRESSES"] = addresses;
  env["TESSERA_STEP_SECRET"] = step_secret;
  return env;
}

}  // namespace tessera::controlplane
