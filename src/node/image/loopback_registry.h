// A real registry on loopback for tests and benchmarks: Debian's
// docker-registry (the CNCF distribution registry) on a free port, over
// plain HTTP, optionally behind htpasswd authentication, its storage and
// log under a directory of the caller's. Stopped (SIGKILL) when destroyed.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "base/status.h"

namespace tessera::node {

class LoopbackRegistry {
 public:
  static constexpr const char* kBinary = "/usr/bin/docker-registry";

  // Starts it and waits (at most 10 s) until it accepts connections. With
  // `htpasswd` (a file's content) clients must log in.
  static Result<std::unique_ptr<LoopbackRegistry>> Start(const std::string& dir, const std::string& htpasswd = "");
  ~LoopbackRegistry() { Stop(); }
  LoopbackRegistry(const LoopbackRegistry&) = delete;
  LoopbackRegistry& operator=(const LoopbackRegistry&) = delete;

  void Stop();
  const std::string& host() const { return host_; }  // "127.0.0.1:PORT"

 private:
  LoopbackRegistry() = default;

  pid_t pid_ = -1;
  std::string host_, log_;
};

}  // namespace tessera::node
