#include "store/etcd_store.h"

#include <openssl/evp.h>

#include <map>
#include <utility>

namespace tessera::store {

using nlohmann::json;

std::string Base64Encode(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3), '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), reinterpret_cast<const unsigned char*>(bytes.data()),
                                static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

Result<std::string> Base64Decode(std::string_view text) {
  if (text.size() % 4 != 0) return InvalidArgument("base64: length " + std::to_string(text.size()) + " is not a multiple of 4");
  std::string out(text.size() / 4 * 3, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()), reinterpret_cast<const unsigned char*>(text.data()),
                                static_cast<int>(text.size()));
  if (n < 0) return InvalidArgument("base64: malformed");
  // EVP_DecodeBlock counts the padding as zero bytes.
  std::size_t size = static_cast<std::size_t>(n);
  for (std::size_t i = text.size(); i > 0 && text[i - 1] == '='; --i) --size;
  out.resize(size);
  return out;
}

namespace {

// The first key after every key that starts with `prefix` (etcd's range_end).
std::string PrefixEnd(std::string prefix) {
  while (!prefix.empty() && static_cast<unsigned char>(prefix.back()) == 0xff) prefix.pop_back();
  if (!prefix.empty()) prefix.back() = static_cast<char>(static_cast<unsigned char>(prefix.back()) + 1);
  return prefix;
}

}  // namespace

EtcdStore::EtcdStore(net::Endpoint endpoint, std::string prefix)
    : endpoint_(std::move(endpoint)), prefix_(std::move(prefix)), client_(endpoint_) {
  client_.SetPeer("etcd", std::uint64_t{256} << 20);  // a page of job specs can be large
}

Result<std::unique_ptr<EtcdStore>> EtcdStore::Open(const std::string& url) {
  constexpr std::string_view kScheme = "etcd://";
  if (!url.starts_with(kScheme)) return InvalidArgument("store '" + url + "': expected etcd://HOST:PORT[/PREFIX]");
  const std::string rest = url.substr(kScheme.size());
  const std::size_t slash = rest.find('/');
  Result<net::Endpoint> endpoint = net::ParseEndpoint(rest.substr(0, slash));
  if (!endpoint.ok()) return InvalidArgument("store '" + url + "': " + endpoint.status().message());
  std::string prefix = slash == std::string::npos ? "/tessera/" : rest.substr(slash);
  if (!prefix.ends_with('/')) prefix += '/';
  std::unique_ptr<EtcdStore> store(new EtcdStore(*endpoint, prefix));
  // A cheap read proves etcd is there and speaks the v3 gateway.
  if (Result<json> probe = store->Call("/v3/kv/range", {{"key", Base64Encode(prefix)}, {"limit", 1}}); !probe.ok()) {
    return probe.status();
  }
  return store;
}

std::string EtcdStore::Describe() const { return "etcd http://" + endpoint_.ToString() + " (keys under " + prefix_ + ")"; }

std::string EtcdStore::KeyOf(Collection collection, const std::string& key) const {
  return prefix_ + std::string(ToString(collection)) + "/" + key;
}

Result<json> EtcdStore::Call(const std::string& path, const json& body) {
  std::lock_guard lock(mu_);
  Result<net::HttpResponse> r = client_.Send("POST", path, body.dump());
  if (!r.ok()) return r.status();
  json reply = json::parse(r->body, nullptr, false);
  if (r->status != 200 || reply.is_discarded()) {
    const std::string message = reply.is_object() ? reply.value("message", reply.value("error", r->body)) : r->body;
    std::string hint;
    if (message.find("too many operations in txn request") != std::string::npos) {
      hint = " (run etcd with a larger --max-txn-ops, e.g. 100000: docs/fault-tolerance.md)";
    } else if (message.find("request is too large") != std::string::npos) {
      hint = " (run etcd with a larger --max-request-bytes, e.g. 67108864: docs/fault-tolerance.md)";
    }
    return Status(StatusCode::kFailedPrecondition, "etcd at " + endpoint_.ToString() + " answered " + std::to_string(r->status) +
                                                       " to " + path + ": " + message + hint);
  }
  return reply;
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
  Result<json> reply = Call("/v3/kv/txn", {{"success", ops}});
  if (!reply.ok()) return reply.status();
  return Status::Ok();
}

Result<std::vector<Entry>> EtcdStore::List(Collection collection) {
  const std::string prefix = prefix_ + std::string(ToString(collection)) + "/";
  const std::string end = PrefixEnd(prefix);
  std::vector<Entry> entries;
  std::string from = prefix;
  for (;;) {  // in pages, so a large collection is never one huge response
    Result<json> reply = Call("/v3/kv/range", {{"key", Base64Encode(from)}, {"range_end", Base64Encode(end)}, {"limit", 1000}});
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
