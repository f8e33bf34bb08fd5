#include "bench/server_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace tessera::bench {

Result<ServerProcess> StartServerProcess(const std::string& binary_or_empty, const std::string& dir, const std::vector<std::string>& extra) {
  ServerProcess server;
  server.log = dir + "/server.log";
  const std::string binary = binary_or_empty.empty() ? std::filesystem::read_symlink("/proc/self/exe").string() : binary_or_empty;
  std::vector<std::string> args = {binary, "server", "--listen", "127.0.0.1:0", "--data-dir", dir + "/data"};
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  server.pid = fork();
  if (server.pid == 0) {
    const int fd = ::open(server.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 2);
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  for (int i = 0; i < 200; ++i) {  // 10 s
    std::ifstream in(server.log);
    std::stringstream text;
    text << in.rdbuf();
    const std::string s = text.str();
    const std::size_t at = s.find("listening on http");
    if (at != std::string::npos) {
      const std::size_t end = s.find(',', at);
      server.url = s.substr(at + 13, end - at - 13);
      return server;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(server.pid, SIGKILL);
  waitpid(server.pid, nullptr, 0);
  return Internal("the server did not start within 10 s; see " + server.log);
}

void StopServerProcess(const ServerProcess& server) {
  kill(server.pid, SIGTERM);
  waitpid(server.pid, nullptr, 0);
}

double PeakRssMb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  }
  return 0;
}

double CpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::stringstream text;
  text << in.rdbuf();
  const std::string stat = text.str();
  // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
  std::istringstream rest(stat.substr(stat.rfind(')') + 2));
  std::string field;
  double ticks = 0;
  for (int i = 1; i <= 13 && rest >> field; ++i) {
    if (i >= 12) ticks += std::stod(field);
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

double Percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const auto index = static_cast<std::size_t>(q * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(index, values.size() - 1)];
}

}  // namespace tessera::bench
