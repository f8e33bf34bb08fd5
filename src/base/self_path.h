// Files installed beside the running program (the vGPU shim, the task
// supervisor): found through /proc/self/exe, so wherever tessera is installed
// or built, what was built with it is found with it.
#pragma once

#include <filesystem>
#include <string>

namespace tessera {

// `file` in the running program's directory; `file` itself when that is unknown.
inline std::string BesideThisProgram(const std::string& file) {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? file : (self.parent_path() / file).string();
}

}  // namespace tessera
