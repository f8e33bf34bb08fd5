// The environment a task of a gang starts with, so that torchrun and PyTorch
// DDP work unchanged: every task is one rank.
//
//   MASTER_ADDR, MASTER_PORT   the node of rank 0 and the port the run holds there
//                              (record.master_port, rendezvous_ports.h)
//   WORLD_SIZE, RANK           all tasks of the job; this task's global index
//   LOCAL_RANK, LOCAL_WORLD_SIZE   among the job's tasks on this node
//   NODE_RANK, NNODES          this node among the job's nodes, in rank order
//   PET_NNODES, PET_NODE_RANK, PET_MASTER_ADDR, PET_MASTER_PORT
//                              the same, as torchrun reads its flags from the
//                              environment (one task per node runs torchrun)
//   TESSERA_JOB_ID, TESSERA_JOB_NAME, TESSERA_QUEUE, TESSERA_TASK_NAME,
//   TESSERA_TASK_INDEX, TESSERA_ATTEMPT, TESSERA_RESTART_COUNT
//   TESSERA_NODES, TESSERA_NODE_ADDRESSES
//                              the job's nodes and their addresses, in node rank
//                              order, comma-separated (Slurm's SLURM_JOB_NODELIST)
//   TESSERA_STEP_SECRET        a secret of this run alone, which only its tasks
//                              hold: how they know each other (srun's step
//                              launches between the run's nodes)
// The agent adds CUDA_VISIBLE_DEVICES, TESSERA_NODE_NAME and
// TESSERA_CHECKPOINT_DIR, which depend on the node.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "controlplane/records.h"
#include "model/job.h"

namespace tessera::controlplane {

std::map<std::string, std::string> GangEnvironment(const model::Job& job, std::int64_t job_id,
                                                   const std::string& queue_path, const JobRecord& record,
                                                   std::size_t task,
                                                   const std::function<std::string(const std::string&)>& address_of,
                                                   const std::string& step_secret);

}  // namespace tessera::controlplane
