// The quick form of a job, from flags and the command after "--": what
// `tessera submit --gpus 2 -- python train.py` and `tessera run` share.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace tessera::cli {

struct QuickJobArgs {
  std::vector<std::string> command;
  std::string name, queue, gpus = "0", gpu_memory, gpu_model, gpu_sharing, gpu_memory_burst, mig, cpus, memory, walltime;
  std::string checkpoint_signal;
  std::string array;
  int tasks = 1;
  int priority = 0;
  int max_restarts = 0;
  std::vector<std::string> env;
  bool interactive = false;  // spec.interactive: a terminal for `tessera attach`
  std::string idle_timeout;  // ...and how long it may sit unused ("" : the server's default)
};

// --name, --queue, --gpus and the rest of the quick form's flags.
void AddQuickJobFlags(CLI::App* cmd, QuickJobArgs* a);
// The job as a Job document (JSON, which the server reads as YAML).
std::string QuickJob(const QuickJobArgs& a);

}  // namespace tessera::cli
