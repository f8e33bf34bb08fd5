#include "store/testing/etcd_cluster.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "store/etcd_store.h"

namespace tessera::store::testing {

int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  socklen_t length = sizeof address;
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  close(fd);
  return ntohs(address.sin_port);
}

EtcdCluster::EtcdCluster(int members) {
  EXPECT_EQ(access("/usr/bin/etcd", X_OK), 0) << "etcd is missing: scripts/install-deps.sh installs etcd-server";
  dir_ = std::filesystem::temp_directory_path() / ("tessera-etcd-" + std::to_string(getpid()) + "-" + std::to_string(FreePort()));
  std::filesystem::remove_all(dir_);
  std::filesystem::create_directories(dir_);
  for (int i = 0; i < members; ++i) members_.push_back({"m" + std::to_string(i), FreePort(), FreePort()});
  for (const Member& m : members_) {
    initial_cluster_ += (initial_cluster_.empty() ? "" : ",") + m.name + "=http://127.0.0.1:" + std::to_string(m.peer_port);
  }
  for (Member& m : members_) Launch(m, true);
  // Up when a store can open through any member.
  for (int i = 0; i < 400 && !EtcdStore::Open(url()).ok(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_TRUE(EtcdStore::Open(url()).ok()) << "etcd did not come up; see " << dir_.string() << "/*.log";
}

EtcdCluster::~EtcdCluster() {
  for (Member& m : members_) {
    if (m.pid > 0) {
      kill(m.pid, SIGKILL);
      waitpid(m.pid, nullptr, 0);
    }
  }
  std::filesystem::remove_all(dir_);
}

std::string EtcdCluster::url() const {
  std::string out = "etcd://";
  for (std::size_t i = 0; i < members_.size(); ++i) out += (i ? ",127.0.0.1:" : "127.0.0.1:") + std::to_string(members_[i].client_port);
  return out;
}

void EtcdCluster::Launch(Member& m, bool fresh) {
  const std::string client = "http://127.0.0.1:" + std::to_string(m.client_port);
  const std::string peer = "http://127.0.0.1:" + std::to_string(m.peer_port);
  const std::string data = (dir_ / m.name).string();
  const std::string log = (dir_ / (m.name + ".log")).string();
  m.pid = fork();
  if (m.pid == 0) {
    if (std::freopen(log.c_str(), "a", stderr) == nullptr) _exit(126);
    execl("/usr/bin/etcd", "etcd", "--name", m.name.c_str(), "--data-dir", data.c_str(), "--listen-client-urls", client.c_str(),
          "--advertise-client-urls", client.c_str(), "--listen-peer-urls", peer.c_str(), "--initial-advertise-peer-urls", peer.c_str(),
          "--initial-cluster", initial_cluster_.c_str(), "--initial-cluster-state", fresh ? "new" : "existing",
          "--heartbeat-interval", "50", "--election-timeout", "500", "--max-txn-ops", "100000", "--max-request-bytes", "67108864",
          static_cast<char*>(nullptr));
    _exit(127);
  }
}

void EtcdCluster::Kill(int member) {
  Member& m = members_.at(static_cast<std::size_t>(member));
  kill(m.pid, SIGKILL);
  waitpid(m.pid, nullptr, 0);
  m.pid = -1;
}

void EtcdCluster::Start(int member) { Launch(members_.at(static_cast<std::size_t>(member)), false); }

}  // namespace tessera::store::testing
