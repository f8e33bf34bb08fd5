// The distributed store: etcd v3 through its JSON gateway (/v3/kv/...), for
// servers that must survive the loss of their machine. Every collection is a
// key prefix, <prefix><collection>/<key>; a batch is one etcd transaction,
// so it is atomic and durable (replicated to a quorum) when Apply returns.
//
// Fencing: once a replica leads (ha/leader_election.h), every transaction
// also compares the leader key's creation revision with the one it won. A
// replica that lost the leadership without knowing it (paused, cut off) can
// then write nothing: its transaction fails and Apply says so.
//
// etcd refuses a transaction with more than --max-txn-ops operations (128
// by default) or larger than --max-request-bytes (1.5 MiB); a server's
// group commit can exceed both, so etcd must run with larger limits
// (docs/fault-tolerance.md), and Apply says so when it meets them.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "store/etcd_client.h"
#include "store/state_store.h"

namespace tessera::store {

class EtcdStore final : public StateStore {
 public:
  // "etcd://127.0.0.1:2379", "etcd://h1:2379,h2:2379,h3:2379/prefix" (default
  // prefix "/tessera/"). Checks that etcd answers before returning.
  static Result<std::unique_ptr<EtcdStore>> Open(const std::string& url);

  std::string Describe() const override;
  Status Apply(const std::vector<Mutation>& batch) override;
  Result<std::vector<Entry>> List(Collection collection) override;

  // From now on a transaction succeeds only while `key` was created at
  // `create_revision`: the leader key this replica won.
  void Fence(std::string key, std::int64_t create_revision);
  const EtcdUrl& url() const { return url_; }

 private:
  explicit EtcdStore(EtcdUrl url);
  std::string KeyOf(Collection collection, const std::string& key) const;

  EtcdUrl url_;
  EtcdClient client_;
  std::string fence_key_;               // set once, before the first fenced Apply
  std::atomic<std::int64_t> fence_revision_{0};
};

}  // namespace tessera::store
