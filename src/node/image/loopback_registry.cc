#include "node/image/loopback_registry.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

extern char** environ;

namespace tessera::node {
namespace {

sockaddr_in Loopback(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  return addr;
}

int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr = Loopback(0);
  socklen_t length = sizeof addr;
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

bool Accepts(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr = Loopback(port);
  const bool accepted = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  close(fd);
  return accepted;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

Result<std::unique_ptr<LoopbackRegistry>> LoopbackRegistry::Start(const std::string& dir, const std::string& htpasswd) {
  auto registry = std::unique_ptr<LoopbackRegistry>(new LoopbackRegistry);
  const int port = FreePort();
  if (port <= 0) return FailedPrecondition("no free loopback port for docker-registry");
  registry->host_ = "127.0.0.1:" + std::to_string(port);
  std::string config = "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: " + dir +
                       "/storage\nhttp:\n  addr: " + registry->host_ + "\n";
  if (!htpasswd.empty()) {
    std::ofstream(dir + "/htpasswd") << htpasswd;
    config += "auth:\n  htpasswd:\n    realm: tessera\n    path: " + dir + "/htpasswd\n";
  }
  const std::string config_path = dir + "/config.yml";
  std::ofstream(config_path) << config;
  registry->log_ = dir + "/registry.log";

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, registry->log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::vector<char*> argv = {const_cast<char*>(kBinary), const_cast<char*>("serve"), const_cast<char*>(config_path.c_str()), nullptr};
  const int spawned = posix_spawn(&registry->pid_, kBinary, &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    registry->pid_ = -1;
    return FailedPrecondition(std::string("cannot start ") + kBinary + ": " + std::strerror(spawned) +
                              " (Debian package docker-registry)");
  }
  for (const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);;) {
    if (Accepts(port)) return registry;
    int status = 0;
    if (waitpid(registry->pid_, &status, WNOHANG) == registry->pid_) {
      registry->pid_ = -1;
      return Internal("docker-registry exited at start: " + Slurp(registry->log_));
    }
    if (std::chrono::steady_clock::now() > deadline) {
      return FailedPrecondition("docker-registry did not listen on " + registry->host_ + " within 10 s: " + Slurp(registry->log_));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void LoopbackRegistry::Stop() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
}

}  // namespace tessera::node
