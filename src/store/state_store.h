// Where the control plane keeps everything it must not forget: a small
// key-value interface over typed collections, so that the embedded SQLite
// default and a distributed backend (etcd v3) are interchangeable.
//
// Values are JSON documents (the API's own representation of the object).
// Apply() is atomic and durable when it returns: a crash after it keeps the
// whole batch, a crash before it keeps none of it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace tessera::store {

// kQuarantine holds records that recovery found damaged and set aside
// (`tessera server --quarantine-damaged`), keyed "collection/key".
// kRegistryCredentials holds queues' registry logins, their passwords sealed.
enum class Collection { kJobs, kJobSpecs, kNodes, kQueues, kEvents, kMeta, kTokens, kAudit, kUsage, kQuarantine, kRegistryCredentials };
std::string_view ToString(Collection collection);

struct Mutation {
  Collection collection = Collection::kMeta;
  std::string key;
  std::string value;  // ignored for deletes
  bool erase = false;

  static Mutation Put(Collection c, std::string key, std::string value) { return {c, std::move(key), std::move(value), false}; }
  static Mutation Delete(Collection c, std::string key) { return {c, std::move(key), {}, true}; }
};

struct Entry {
  std::string key;
  std::string value;
};

class StateStore {
 public:
  virtual ~StateStore() = default;
  // One line for the server's log: "sqlite /var/lib/tessera/state.db (WAL, synchronous=FULL)".
  virtual std::string Describe() const = 0;
  virtual Status Apply(const std::vector<Mutation>& batch) = 0;
  // Every entry of a collection, ordered by key.
  virtual Result<std::vector<Entry>> List(Collection collection) = 0;
};

// Keys that sort numerically: events and jobs are listed in id order.
std::string NumericKey(std::int64_t id);

}  // namespace tessera::store
