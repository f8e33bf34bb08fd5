// A real `tessera server` as a child process, for the benchmarks that load
// the control plane from outside (control-plane, api), and what the
// benchmarks read of a process (that one, or their own): peak memory and CPU
// time from /proc.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "base/status.h"

namespace tessera::bench {

struct ServerProcess {
  pid_t pid = -1;
  std::string url;
  std::string log;  // its stderr
};

// Starts `binary` (empty: this one) as `tessera server --listen 127.0.0.1:0
// --data-dir DIR/data ARGS...`, its stderr in DIR/server.log, and waits until it listens.
Result<ServerProcess> StartServerProcess(const std::string& binary, const std::string& dir, const std::vector<std::string>& args);
// SIGTERM, then waits for it to exit.
void StopServerProcess(const ServerProcess& server);

double PeakRssMb(pid_t pid);   // VmHWM
double CpuSeconds(pid_t pid);  // user + system

// The q-quantile (0..1) of `values`, the nearest rank; 0 when empty.
double Percentile(std::vector<double> values, double q);

}  // namespace tessera::bench
