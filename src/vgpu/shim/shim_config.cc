#include "vgpu/shim/shim_config.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>

namespace tessera::vgpu {
namespace {

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

std::int64_t EnvInt(const char* name, std::int64_t fallback) {
  const std::string value = Env(name);
  if (value.empty()) return fallback;
  char* end = nullptr;
  const long long parsed = std::strtoll(value.c_str(), &end, 10);  // NOLINT(google-runtime-int)
  return end && *end == '\0' && parsed >= 0 ? parsed : fallback;
}

std::vector<std::string> Split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= text.size() && !text.empty()) {
    const std::size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return parts;
}

}  // namespace

ShimConfig ShimConfig::FromEnvironment() {
  ShimConfig c;
  c.task = Env("TESSERA_VGPU_TASK");
  if (c.task.empty()) c.task = "pid-" + std::to_string(getpid());
  c.memory_limit = EnvInt("TESSERA_VGPU_MEMORY_LIMIT", 0);
  c.burst_limit = EnvInt("TESSERA_VGPU_BURST_LIMIT", 0);
  c.compute_percent = static_cast<int>(std::clamp<std::int64_t>(EnvInt("TESSERA_VGPU_COMPUTE_PERCENT", 100), 1, 100));
  c.reclaim_wait_ms = EnvInt("TESSERA_VGPU_RECLAIM_WAIT_MS", c.reclaim_wait_ms);
  c.verbose = Env("TESSERA_VGPU_VERBOSE") == "1";
  c.ledgers = Split(Env("TESSERA_VGPU_LEDGERS"), ':');
  for (const std::string& index : Split(Env("TESSERA_VGPU_NVML_INDICES"), ',')) {
    c.nvml_indices.push_back(static_cast<unsigned int>(std::strtoul(index.c_str(), nullptr, 10)));
  }
  // Without a ledger from the agent a process still gets its cap, in a ledger
  // of its own (a task of one process run by hand).
  if (c.ledgers.empty() && c.memory_limit > 0) {
    const std::string dir = Env("TMPDIR").empty() ? "/tmp" : Env("TMPDIR");
    c.ledgers.push_back(dir + "/tessera-vgpu-" + c.task + ".ledger");
  }
  return c;
}

}  // namespace tessera::vgpu
