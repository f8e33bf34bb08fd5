// The distributed store: etcd v3 through its JSON gateway (/v3/kv/...), for
// servers that must survive the loss of their machine. Every collection is a
// key prefix, <prefix><collection>/<key>; a batch is one etcd transaction,
// so it is atomic and durable (replicated to a quorum) when Apply returns.
//
// etcd refuses a transaction with more than --max-txn-ops operations (128
// by default) or larger than --max-request-bytes (1.5 MiB); a server's
// group commit can exceed both, so etcd must run with larger limits
// (docs/fault-tolerance.md), and Apply says so when it meets them.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "net/http_client.h"
#include "store/state_store.h"

namespace tessera::store {

class EtcdStore final : public StateStore {
 public:
  // "etcd://127.0.0.1:2379" or "etcd://host:port/prefix" (default prefix
  // "/tessera/"). Checks that etcd answers before returning.
  static Result<std::unique_ptr<EtcdStore>> Open(const std::string& url);

  std::string Describe() const override;
  Status Apply(const std::vector<Mutation>& batch) override;
  Result<std::vector<Entry>> List(Collection collection) override;

 private:
  EtcdStore(net::Endpoint endpoint, std::string prefix);
  Result<nlohmann::json> Call(const std::string& path, const nlohmann::json& body);
  std::string KeyOf(Collection collection, const std::string& key) const;

  net::Endpoint endpoint_;
  std::string prefix_;
  std::mutex mu_;  // the client is not thread-safe: the commit thread and recovery share it
  net::HttpClient client_;
};

// Base64 (RFC 4648, with padding), as etcd's JSON gateway carries keys and values.
std::string Base64Encode(std::string_view bytes);
Result<std::string> Base64Decode(std::string_view text);

}  // namespace tessera::store
