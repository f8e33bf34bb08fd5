#include "node/sharing/mps_daemons.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <vector>

extern char** environ;

namespace tessera::node {
namespace {

namespace fs = std::filesystem;

// Runs the control program with `extra` added to our environment and `input`
// on its stdin; its exit code, or -1 when it could not be started.
int RunControl(const std::string& program, const std::vector<std::string>& args,
               const std::map<std::string, std::string>& extra, const std::string& input) {
  std::vector<std::string> env_storage;
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    if (!extra.contains(entry.substr(0, entry.find('=')))) env_storage.push_back(entry);
  }
  for (const auto& [k, v] : extra) env_storage.push_back(k + "=" + v);
  std::vector<std::string> argv_storage{program};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv, envp;
  for (auto& s : argv_storage) argv.push_back(s.data());
  for (auto& s : env_storage) envp.push_back(s.data());
  argv.push_back(nullptr);
  envp.push_back(nullptr);
  int in[2];
  if (pipe2(in, O_CLOEXEC) != 0) return -1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(in[0]);
  if (rc == 0 && !input.empty()) {
    [[maybe_unused]] const ssize_t n = write(in[1], input.data(), input.size());
  }
  close(in[1]);
  if (rc != 0) return -1;
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

std::optional<std::string> MpsDaemons::FindControl() {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const std::size_t end = dirs.find(':', start);
    const fs::path candidate = fs::path(dirs.substr(start, end - start)) / "nvidia-cuda-mps-control";
    if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return std::nullopt;
}

Result<MpsDaemons::Paths> MpsDaemons::Ensure(int gpu, const std::string& uuid) {
  if (auto it = running_.find(gpu); it != running_.end()) return it->second;
  const fs::path base = dir_ / ("gpu-" + std::to_string(gpu));
  Paths paths{(base / "pipe").string(), (base / "log").string()};
  std::error_code ec;
  fs::create_directories(paths.pipe_dir, ec);
  fs::create_directories(paths.log_dir, ec);
  if (ec) return Status(StatusCode::kFailedPrecondition, "cannot create " + base.string() + ": " + ec.message());
  const std::map<std::string, std::string> env{{"CUDA_VISIBLE_DEVICES", uuid.empty() ? std::to_string(gpu) : uuid},
                                               {"CUDA_MPS_PIPE_DIRECTORY", paths.pipe_dir},
                                               {"CUDA_MPS_LOG_DIRECTORY", paths.log_dir}};
  // A daemon a previous agent started (it crashed before telling it to quit)
  // still answers on its pipe: use it rather than fail to start a second.
  if (fs::exists(fs::path(paths.pipe_dir) / "control") && RunControl(control_, {}, env, "get_server_list\n") == 0) {
    running_[gpu] = paths;
    return paths;
  }
  const int rc = RunControl(control_, {"-d"}, env, "");
  if (rc != 0) {
    return Status(StatusCode::kFailedPrecondition, control_ + " -d for GPU " + std::to_string(gpu) +
                                                       " failed (exit " + std::to_string(rc) + "); see " + paths.log_dir);
  }
  running_[gpu] = paths;
  return paths;
}

void MpsDaemons::StopAll() {
  for (const auto& [gpu, paths] : running_) {
    RunControl(control_, {}, {{"CUDA_MPS_PIPE_DIRECTORY", paths.pipe_dir}, {"CUDA_MPS_LOG_DIRECTORY", paths.log_dir}},
               "quit\n");
  }
  running_.clear();
}

}  // namespace tessera::node
