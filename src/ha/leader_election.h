// Leader election among `tessera server` replicas that share one etcd
// cluster, on an etcd lease (the same recipe as etcd's own concurrency
// package and Kubernetes' lease locks):
//
//   * a follower reads the leader key and watches it (an etcd watch); when
//     there is none it takes a lease of `lease_ttl` and creates the key with
//     it, in a transaction that succeeds only if the key still does not exist;
//   * the winner renews its lease every third of the TTL. Its `deadline` is
//     the time it SENT its last successful renewal plus the TTL: etcd counts
//     the TTL from when it received it, so the lease cannot expire in etcd
//     before the deadline passes here. Leading() is false past the deadline;
//   * a leader that cannot renew before its deadline, or hears that its lease
//     is gone, has lost: `lost` runs and the server exits (a supervisor
//     starts it again as a follower). A lease that is not renewed expires in
//     etcd after the TTL, which deletes the key and lets a follower win;
//   * the key's creation revision is the leader's epoch. The store compares
//     it in every transaction (store/etcd_store.h), and agents drop an
//     assignment set from an older epoch, so a replica that lost the lease
//     while paused can neither write nor direct a node.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "net/http_client.h"
#include "store/etcd_client.h"

namespace tessera::ha {

struct ElectionOptions {
  std::string key;       // the leader key, "<prefix>leader"
  std::string identity;  // what the key holds: this replica's URL, which followers give clients
  // The lease's time to live, in whole seconds as etcd counts it. etcd raises
  // it to its own minimum (1.5 election timeouts, rounded up).
  std::chrono::seconds lease_ttl{2};
  std::chrono::milliseconds retry{100};  // how soon a follower tries again after a failed campaign
  std::chrono::milliseconds watch{500};  // how long it waits on the key's watch before reading it again
};

class LeaderElection {
 public:
  LeaderElection(std::vector<net::Endpoint> etcd_members, ElectionOptions options);
  ~LeaderElection();  // resigns when leading, then stops
  LeaderElection(const LeaderElection&) = delete;
  LeaderElection& operator=(const LeaderElection&) = delete;

  // Campaigns on a thread of its own. `elected(epoch)` runs once, when this
  // replica wins; `lost(why)` runs once, when it led and cannot any more.
  // Both run on the election's thread and must return quickly (hand long
  // work such as recovery to another thread: renewals wait for them).
  void Start(std::function<void(std::int64_t epoch)> elected, std::function<void(const std::string& why)> lost);
  // This replica leads and its lease is certainly alive.
  bool Leading() const;
  // The leader's identity as last read (this replica's own while it leads);
  // empty while there is none.
  std::string Leader() const;
  std::int64_t epoch() const { return epoch_; }
  // Gives the leadership up now (revokes the lease), so that a follower
  // takes over without waiting for the TTL. Campaigning stops.
  void Resign();

 private:
  void Run();
  bool Campaign();  // true: it watched the key and may look again at once
  bool Renew();  // false: not renewed this time (retry soon), or lost
  std::int64_t NowNs() const;

  ElectionOptions options_;
  store::EtcdClient etcd_;
  std::function<void(std::int64_t)> elected_;
  std::function<void(const std::string&)> lost_;

  std::int64_t lease_ = 0;  // this replica's lease ID while it leads (etcd's, a 64-bit integer)
  std::atomic<std::int64_t> epoch_{0};
  std::atomic<bool> leading_{false};
  std::atomic<std::int64_t> deadline_ns_{0};  // steady clock: the lease surely lives until then

  mutable std::mutex mu_;
  std::string leader_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace tessera::ha
