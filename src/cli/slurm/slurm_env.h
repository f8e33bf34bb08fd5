// The Slurm environment of a batch step and of srun's tasks, computed from
// what the Tessera agent gives every task (the gang variables and
// TESSERA_NODES, TESSERA_NODE_ADDRESSES, TESSERA_JOB_ID, ...; docs/agent.md)
// and what sbatch put in the job (the SLURM_* values known at submission).
// Pure functions of their inputs, so that they are unit-tested; the step
// runner and srun (step_runner.h, srun.h) apply them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace tessera::cli::slurm {

using Environment = std::map<std::string, std::string>;

// The allocation as the agent describes it to each task.
struct AllocationView {
  std::string job_id;
  std::vector<std::string> nodes;      // node names in node-rank order
  std::vector<std::string> addresses;  // their addresses, same order
  std::int32_t node_rank = 0;          // this task's node
  std::string secret;                  // TESSERA_STEP_SECRET
  std::int32_t attempt = 0;
};

// This process's environment (environ) as a map.
Environment CurrentEnvironment();

// Reads TESSERA_JOB_ID, TESSERA_NODES, TESSERA_NODE_ADDRESSES,
// TESSERA_STEP_SECRET, NODE_RANK and TESSERA_ATTEMPT; an error names what is
// missing (a server older than the step runner, or a process not started by
// a Tessera agent).
Result<AllocationView> ReadAllocation(const Environment& env);

// What the batch step adds to its own environment: SLURM_JOB_ID,
// SLURM_JOB_NODELIST (compressed), SLURM_NODEID, SLURMD_NODENAME,
// SLURM_GPUS_ON_NODE and SLURM_JOB_GPUS (from CUDA_VISIBLE_DEVICES),
// SLURM_RESTART_COUNT, ENVIRONMENT=BATCH, and for an array element
// SLURM_ARRAY_JOB_ID, SLURM_ARRAY_TASK_ID, _COUNT, _MIN and _MAX (from
// TESSERA_ARRAY_*), ...
Environment BatchEnvironment(const Environment& env, const AllocationView& allocation);

// -o/-e file names: %j job id (an array element's own), %x job name, %N the
// node, %u user, %A the array's id (the job id when not an array), %a the
// array index (4294967294 when not an array, as Slurm writes), %n node id,
// %t task id, %s step ("batch"), %% a percent sign. A digit between % and
// the letter pads numbers (%5j).
std::string ExpandOutputPattern(const std::string& pattern, const Environment& env);

// Which srun task runs where: for each task, its node index (in the
// allocation). Block distribution as Slurm's default: the first nodes get
// one more when the tasks do not divide evenly.
struct StepLayout {
  std::vector<std::int32_t> node_of_task;
  std::int32_t nodes = 0;
  std::vector<std::int32_t> tasks_on_node;  // per step node
};
Result<StepLayout> LayoutStep(std::optional<std::int32_t> ntasks, std::optional<std::int32_t> nodes,
                              std::optional<std::int32_t> tasks_per_node, std::int32_t allocation_nodes,
                              std::int32_t default_ntasks);

// The variables srun sets for task `task` of a step (SLURM_PROCID,
// SLURM_LOCALID, SLURM_NODEID, SLURM_STEP_ID, SLURM_STEP_*, and the gang
// variables RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, NODE_RANK,
// NNODES, MASTER_ADDR, MASTER_PORT and torchrun's PET_*).
Environment SrunTaskEnvironment(const StepLayout& layout, std::int32_t task, std::int32_t step_id,
                                const AllocationView& allocation, const std::string& master_port);

// Whether a variable belongs to the node it is set on (CUDA_VISIBLE_DEVICES,
// TESSERA_NODE_NAME, ...): a step worker keeps its own value over the one
// srun sends from node 0.
bool NodeLocal(const std::string& name);

}  // namespace tessera::cli::slurm
