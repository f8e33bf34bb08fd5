#include "store/etcd_client.h"

#include <openssl/evp.h>

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

std::string PrefixEnd(std::string prefix) {
  while (!prefix.empty() && static_cast<unsigned char>(prefix.back()) == 0xff) prefix.pop_back();
  if (!prefix.empty()) prefix.back() = static_cast<char>(static_cast<unsigned char>(prefix.back()) + 1);
  return prefix;
}

std::int64_t EtcdInt(const json& object, const char* field) {
  const auto it = object.find(field);
  if (it == object.end()) return 0;
  if (it->is_number_integer()) return it->get<std::int64_t>();
  if (it->is_string()) {
    try {
      return std::stoll(it->get<std::string>());
    } catch (const std::exception&) {
      return 0;
    }
  }
  return 0;
}

Result<EtcdUrl> ParseEtcdUrl(const std::string& url) {
  constexpr std::string_view kScheme = "etcd://";
  const std::string expected = "store '" + url + "': expected etcd://HOST:PORT[,HOST:PORT...][/PREFIX]";
  if (!url.starts_with(kScheme)) return InvalidArgument(expected);
  const std::string rest = url.substr(kScheme.size());
  const std::size_t slash = rest.find('/');
  const std::string members = rest.substr(0, slash);
  EtcdUrl out;
  std::size_t from = 0;
  for (;;) {
    const std::size_t comma = members.find(',', from);
    Result<net::Endpoint> member = net::ParseEndpoint(members.substr(from, comma == std::string::npos ? std::string::npos : comma - from));
    if (!member.ok()) return InvalidArgument(expected + ": " + member.status().message());
    out.members.push_back(*member);
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  if (slash != std::string::npos) out.prefix = rest.substr(slash);
  if (!out.prefix.ends_with('/')) out.prefix += '/';
  return out;
}

EtcdClient::EtcdClient(std::vector<net::Endpoint> members) : members_(std::move(members)) {}

std::string EtcdClient::Describe() const {
  std::string out;
  for (const net::Endpoint& m : members_) out += (out.empty() ? "http://" : ",http://") + m.ToString();
  return out;
}

namespace {

// etcd answers these when the member, not the request, is the problem: it has
// no leader or cannot reach its quorum in time. Another member may do better.
bool MemberUnavailable(int status, const std::string& message) {
  return status == 503 || message.find("etcdserver: no leader") != std::string::npos ||
         message.find("etcdserver: request timed out") != std::string::npos ||
         message.find("etcdserver: leader changed") != std::string::npos;
}

}  // namespace

Result<json> EtcdClient::Call(const std::string& path, const json& body, std::chrono::milliseconds timeout) {
  std::lock_guard lock(mu_);
  const std::string request = body.dump();
  Status last = Internal("no etcd member");
  for (std::size_t tried = 0; tried < members_.size(); ++tried) {
    if (!client_) {
      client_ = std::make_unique<net::HttpClient>(members_[current_]);
      client_->SetPeer("etcd", std::uint64_t{256} << 20);  // a page of job specs can be large
    }
    const std::string member = members_[current_].ToString();
    Result<net::HttpResponse> r = client_->Send("POST", path, request, "application/json", timeout);
    json reply = r.ok() ? json::parse(r->body, nullptr, false) : json();
    if (r.ok() && r->status == 200 && !reply.is_discarded()) return reply;
    std::string message;
    if (!r.ok()) {
      message = r.status().message();
    } else {
      message = reply.is_object() ? reply.value("message", reply.value("error", r->body)) : r->body;
      if (!MemberUnavailable(r->status, message)) {
        std::string hint;
        if (message.find("too many operations in txn request") != std::string::npos) {
          hint = " (run etcd with a larger --max-txn-ops, e.g. 100000: docs/fault-tolerance.md)";
        } else if (message.find("request is too large") != std::string::npos) {
          hint = " (run etcd with a larger --max-request-bytes, e.g. 67108864: docs/fault-tolerance.md)";
        }
        return Status(StatusCode::kFailedPrecondition,
                      "etcd at " + member + " answered " + std::to_string(r->status) + " to " + path + ": " + message + hint);
      }
      message = "etcd at " + member + " is unavailable: " + message;
    }
    last = Status(StatusCode::kFailedPrecondition, message);
    current_ = (current_ + 1) % members_.size();
    client_.reset();
  }
  return last;
}

Result<bool> EtcdClient::WaitForChange(const std::string& key, std::int64_t revision, std::chrono::milliseconds idle) {
  net::Endpoint member;
  {
    std::lock_guard lock(mu_);
    member = members_[current_];
  }
  // Its own connection: a watch holds it for as long as it lasts.
  net::HttpClient client(member);
  client.SetPeer("etcd", std::uint64_t{1} << 20);
  const json watch = {{"create_request", {{"key", Base64Encode(key)}, {"start_revision", std::to_string(revision)}}}};
  // The gateway writes one JSON message per line: first {"result": {"created": true}}, then events.
  std::string pending;
  bool changed = false;
  const Status status = client.Stream("POST", "/v3/watch", watch.dump(), [&](std::string_view data) {
    pending.append(data);
    for (std::size_t end; !changed && (end = pending.find('\n')) != std::string::npos; pending.erase(0, end + 1)) {
      const json message = json::parse(pending.substr(0, end), nullptr, false);
      if (message.is_object() && !message.value("result", json::object()).value("events", json::array()).empty()) changed = true;
    }
    return !changed;
  }, idle);
  if (!status.ok()) {
    std::lock_guard lock(mu_);
    if (members_[current_].ToString() == member.ToString()) {
      current_ = (current_ + 1) % members_.size();
      client_.reset();
    }
    return status;
  }
  return changed;
}

}  // namespace tessera::store
