// Real etcd members (Debian's etcd-server) for tests: a cluster of one or
// three on free loopback ports, each with a data directory of its own under
// the system's temporary directory, with the limits and the fast election
// timing docs/fault-tolerance.md recommends. Members can be killed (SIGKILL)
// and started again.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

namespace tessera::store::testing {

class EtcdCluster {
 public:
  // Starts `members` members and waits until the cluster answers; the test
  // fails (gtest ASSERT) when etcd is missing or does not come up.
  explicit EtcdCluster(int members);
  ~EtcdCluster();  // stops every member and removes the data
  EtcdCluster(const EtcdCluster&) = delete;
  EtcdCluster& operator=(const EtcdCluster&) = delete;

  // "etcd://127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3" (no prefix).
  std::string url() const;
  void Kill(int member);   // SIGKILL, as a crash
  void Start(int member);  // again, with the data it had

 private:
  struct Member {
    std::string name;
    int client_port = 0;
    int peer_port = 0;
    pid_t pid = -1;
  };
  void Launch(Member& member, bool fresh);
  std::filesystem::path dir_;
  std::string initial_cluster_;
  std::vector<Member> members_;
};

// A free TCP port on the loopback interface.
int FreePort();

}  // namespace tessera::store::testing
