// A client of an etcd v3 cluster through its JSON gateway (POST /v3/...),
// shared by the state store and the leader election. It is given every
// member of the cluster ("etcd://h1:2379,h2:2379,h3:2379/prefix") and talks
// to one at a time: a member that cannot be reached, or that answers that it
// has lost its quorum, is left for the next one, so a dead etcd member costs
// one retry, not an outage.
//
// A call retried on another member may have been applied by the first one.
// Callers make their calls safe to repeat: the store's transactions write
// whole values, and the election recognises its own key by its lease.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "net/http_client.h"

namespace tessera::store {

struct EtcdUrl {
  std::vector<net::Endpoint> members;
  std::string prefix = "/tessera/";  // every key of this cluster starts with it; ends with '/'
};
// "etcd://HOST:PORT[,HOST:PORT...][/PREFIX]".
Result<EtcdUrl> ParseEtcdUrl(const std::string& url);

class EtcdClient {
 public:
  explicit EtcdClient(std::vector<net::Endpoint> members);
  // "http://127.0.0.1:2379,http://127.0.0.1:2381"
  std::string Describe() const;
  // One gateway call, e.g. Call("/v3/kv/range", {...}); the reply's JSON when
  // etcd answered 200, otherwise an error naming the member and etcd's reason.
  Result<nlohmann::json> Call(const std::string& path, const nlohmann::json& body,
                              std::chrono::milliseconds timeout = std::chrono::seconds(30));
  // Watches `key` from `revision` on and returns true as soon as it changes
  // (an etcd watch through the gateway's stream); false when nothing
  // happened for `idle`. Errors: the member cannot be reached (the next
  // call tries another).
  Result<bool> WaitForChange(const std::string& key, std::int64_t revision, std::chrono::milliseconds idle);

 private:
  std::vector<net::Endpoint> members_;
  std::mutex mu_;  // one call at a time: HttpClient is not thread-safe
  std::size_t current_ = 0;
  std::unique_ptr<net::HttpClient> client_;  // to members_[current_]
};

// Base64 (RFC 4648, with padding), as etcd's JSON gateway carries keys and values.
std::string Base64Encode(std::string_view bytes);
Result<std::string> Base64Decode(std::string_view text);
// The first key after every key that starts with `prefix` (etcd's range_end).
std::string PrefixEnd(std::string prefix);
// etcd's gateway writes 64-bit integers as JSON strings; absent means 0.
std::int64_t EtcdInt(const nlohmann::json& object, const char* field);

}  // namespace tessera::store
