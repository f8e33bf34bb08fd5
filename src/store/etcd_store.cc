#include "store/etcd_store.h"

#include <map>
#include <utility>

namespace tessera::store {

using nlohmann::json;

EtcdStore::EtcdStore(EtcdUrl url) : url_(std::move(url)), client_(url_.members) {}

Result<std::unique_ptr<EtcdStore>> EtcdStore::Open(const std::string& url) {
  Result<EtcdUrl> parsed = ParseEtcdUrl(url);
  if (!parsed.ok()) return parsed.status();
  std::unique_ptr<EtcdStore> store(new EtcdStore(std::move(*parsed)));
  // A cheap read proves etcd is there and speaks the v3 gateway.
  if (Result<json> probe = store->client_.Call("/v3/kv/range", {{"key", Base64Encode(store->url_.prefix)}, {"limit", 1}}); !probe.ok()) {
    return probe.status();
  }
  return store;
}

std::string EtcdStore::Describe() const { return "etcd " + client_.Describe() + " (keys under " + url_.prefix + ")"; }

std::string EtcdStore::KeyOf(Collection collection, const std::string& key) const {
  return url_.prefix + std::string(ToString(collection)) + "/" + key;
}

void EtcdStore::Fence(std::string key, std::int64_t create_revision) {
  fence_key_ = std::move(key);
  fence_revision_ = create_revision;
}

Status EtcdStore::Apply(const std::vector<Mutation>& batch) {
  if (batch.empty()) return Status::Ok();
  // etcd refuses a key twice in one transaction; the last write of a key is
  // the one that counts, as in a transaction applied in order.
  std::map<std::string, const Mutation*> last;
  std::vector<std::string> order;
  for (const Mutation& m : batch) {
    std::string key = KeyOf(m.collection, m.key);
    if (last.find(key) == last.end()) order.push_back(key);
    last[key] = &m;
  }
  json ops = json::array();
  for (const std::string& key : order) {
    const Mutation& m = *last[key];
    if (m.erase) {
      ops.push_back({{"request_delete_range", {{"key", Base64Encode(key)}}}});
    } else {
      ops.push_back({{"request_put", {{"key", Base64Encode(key)}, {"value", Base64Encode(m.value)}}}});
    }
  }
  json txn = {{"success", ops}};
  const std::int64_t fence = fence_revision_;
  if (fence != 0) {
    txn["compare"] = json::array(
        {{{"key", Base64Encode(fence_key_)}, {"target", "CREATE"}, {"create_revision", std::to_string(fence)}, {"result", "EQUAL"}}});
  }
  Result<json> reply = client_.Call("/v3/kv/txn", txn);
  if (!reply.ok()) return reply.status();
  if (fence != 0 && !reply->value("succeeded", false)) {
    return Status(StatusCode::kFailedPrecondition, "fenced off: the leader key " + fence_key_ + " is no longer the one this replica won (revision " +
                                                       std::to_string(fence) + "); another replica leads now");
  }
  return Status::Ok();
}

Result<std::vector<Entry>> EtcdStore::List(Collection collection) {
  const std::string prefix = url_.prefix + std::string(ToString(collection)) + "/";
  const std::string end = PrefixEnd(prefix);
  std::vector<Entry> entries;
  std::string from = prefix;
  for (;;) {  // in pages, so a large collection is never one huge response
    Result<json> reply = client_.Call("/v3/kv/range", {{"key", Base64Encode(from)}, {"range_end", Base64Encode(end)}, {"limit", 1000}});
    if (!reply.ok()) return reply.status();
    for (const json& kv : reply->value("kvs", json::array())) {
      Result<std::string> key = Base64Decode(kv.value("key", ""));
      Result<std::string> value = Base64Decode(kv.value("value", ""));
      if (!key.ok() || !value.ok()) return Internal("etcd returned a key or value that is not base64");
      entries.push_back({key->substr(prefix.size()), std::move(*value)});
    }
    if (!reply->value("more", false) || entries.empty()) break;
    from = prefix + entries.back().key + '\0';
  }
  return entries;
}

}  // namespace tessera::store
