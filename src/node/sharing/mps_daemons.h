// NVIDIA's Multi-Process Service on the node: one MPS control daemon per GPU
// that a task shares as `mps`, started on first use with the GPU (by UUID)
// as its only visible device and pipe and log directories of its own under
// the agent's data directory, and told to quit when the agent stops.
// A client (the task) finds its daemon through CUDA_MPS_PIPE_DIRECTORY.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "base/status.h"

namespace tessera::node {

class MpsDaemons {
 public:
  // The control program on PATH; nullopt when MPS is not installed.
  static std::optional<std::string> FindControl();

  MpsDaemons(std::string control, std::filesystem::path dir) : control_(std::move(control)), dir_(std::move(dir)) {}
  ~MpsDaemons() { StopAll(); }
  MpsDaemons(const MpsDaemons&) = delete;
  MpsDaemons& operator=(const MpsDaemons&) = delete;

  struct Paths {
    std::string pipe_dir;
    std::string log_dir;
  };
  // The daemon of local GPU `gpu` (UUID `uuid`), started if it is not running yet.
  Result<Paths> Ensure(int gpu, const std::string& uuid);
  void StopAll();

 private:
  std::string control_;
  std::filesystem::path dir_;
  std::map<int, Paths> running_;
};

}  // namespace tessera::node
