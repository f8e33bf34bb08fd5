#include "ha/leader_election.h"

#include <cstdio>
#include <utility>

namespace tessera::ha {

using nlohmann::json;
using store::Base64Decode;
using store::Base64Encode;
using store::EtcdInt;

LeaderElection::LeaderElection(std::vector<net::Endpoint> etcd_members, ElectionOptions options)
    : options_(std::move(options)), etcd_(std::move(etcd_members)) {}

LeaderElection::~LeaderElection() { Resign(); }

std::int64_t LeaderElection::NowNs() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void LeaderElection::Start(std::function<void(std::int64_t)> elected, std::function<void(const std::string&)> lost) {
  elected_ = std::move(elected);
  lost_ = std::move(lost);
  thread_ = std::thread([this] { Run(); });
}

bool LeaderElection::Leading() const { return leading_ && NowNs() < deadline_ns_; }

std::string LeaderElection::Leader() const {
  std::lock_guard lock(mu_);
  return leader_;
}

void LeaderElection::Run() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    lock.unlock();
    bool renewed = false, watched = false;
    if (leading_) {
      renewed = Renew();
    } else {
      watched = Campaign();
    }
    lock.lock();
    // A leader renews three times per TTL, and retries sooner after a
    // failure; a follower that has just watched the key looks again at once.
    const auto pause = renewed   ? std::chrono::duration_cast<std::chrono::milliseconds>(options_.lease_ttl) / 3
                       : watched ? std::chrono::milliseconds(0)
                                 : options_.retry;
    wake_.wait_for(lock, pause, [this] { return stopping_; });
  }
}

bool LeaderElection::Campaign() {
  const std::string key = Base64Encode(options_.key);
  Result<json> current = etcd_.Call("/v3/kv/range", {{"key", key}}, std::chrono::seconds(2));
  if (!current.ok()) return false;  // etcd is unreachable: nobody can win; try again
  if (const json& kvs = current->value("kvs", json::array()); !kvs.empty()) {
    Result<std::string> value = Base64Decode(kvs[0].value("value", ""));
    {
      std::lock_guard lock(mu_);
      leader_ = value.ok() ? *value : "";
    }
    // Wait for the key to change (the leader's lease expired, it resigned)
    // on an etcd watch, so that the next campaign starts at once; a while
    // without change only reads the key again.
    const std::int64_t seen = EtcdInt(current->value("header", json::object()), "revision");
    return etcd_.WaitForChange(options_.key, seen + 1, options_.watch).ok();
  }
  {
    std::lock_guard lock(mu_);
    leader_.clear();
  }
  const std::int64_t sent = NowNs();
  Result<json> grant = etcd_.Call("/v3/lease/grant", {{"TTL", std::to_string(options_.lease_ttl.count())}}, std::chrono::seconds(2));
  if (!grant.ok()) return false;
  const std::int64_t lease = EtcdInt(*grant, "ID");
  const std::int64_t ttl_s = EtcdInt(*grant, "TTL");
  if (lease == 0 || ttl_s <= 0) return false;
  const json put = {{"request_put", {{"key", key}, {"value", Base64Encode(options_.identity)}, {"lease", std::to_string(lease)}}}};
  const json create_only = {{"key", key}, {"target", "CREATE"}, {"create_revision", "0"}, {"result", "EQUAL"}};
  Result<json> txn = etcd_.Call("/v3/kv/txn", {{"compare", json::array({create_only})}, {"success", json::array({put})},
                                                {"failure", json::array({{{"request_range", {{"key", key}}}}})}},
                                std::chrono::seconds(2));
  std::int64_t epoch = 0;
  if (txn.ok() && txn->value("succeeded", false)) {
    epoch = EtcdInt(txn->value("header", json::object()), "revision");  // the put's revision: the key's creation
  } else if (txn.ok()) {
    // Someone else won, or this very put landed on a member before a retry
    // on another one: then the key carries our lease.
    const json responses = txn->value("responses", json::array());
    const json kvs = responses.empty() ? json::array() : responses[0].value("response_range", json::object()).value("kvs", json::array());
    if (!kvs.empty() && EtcdInt(kvs[0], "lease") == lease) epoch = EtcdInt(kvs[0], "create_revision");
  }
  if (epoch == 0) {
    (void)etcd_.Call("/v3/lease/revoke", {{"ID", std::to_string(lease)}}, std::chrono::seconds(2));
    return false;
  }
  lease_ = lease;
  epoch_ = epoch;
  deadline_ns_ = sent + std::chrono::nanoseconds(std::chrono::seconds(ttl_s)).count();
  {
    std::lock_guard lock(mu_);
    leader_ = options_.identity;
  }
  leading_ = true;
  elected_(epoch);
  return false;
}

bool LeaderElection::Renew() {
  const std::int64_t sent = NowNs();
  const auto timeout = std::max(std::chrono::milliseconds(200), std::chrono::duration_cast<std::chrono::milliseconds>(options_.lease_ttl) / 3);
  Result<json> reply = etcd_.Call("/v3/lease/keepalive", {{"ID", std::to_string(lease_)}}, timeout);
  std::string why;
  if (reply.ok()) {
    const json result = reply->value("result", json::object());
    const std::int64_t ttl_s = EtcdInt(result, "TTL");
    if (ttl_s > 0) {
      deadline_ns_ = sent + std::chrono::nanoseconds(std::chrono::seconds(ttl_s)).count();
      // The lease lives; the key should too, unless someone deleted it by hand.
      Result<json> key = etcd_.Call("/v3/kv/range", {{"key", Base64Encode(options_.key)}}, timeout);
      if (!key.ok()) return false;
      const json kvs = key->value("kvs", json::array());
      if (!kvs.empty() && EtcdInt(kvs[0], "create_revision") == epoch_) return true;
      why = "the leader key " + options_.key + " is no longer the one it created";
    } else {
      why = "etcd says its lease has expired";
    }
  } else if (NowNs() >= deadline_ns_) {
    why = "its lease could not be renewed in time: " + reply.status().message();
  } else {
    return false;  // try again soon, before the deadline
  }
  leading_ = false;
  {
    std::lock_guard lock(mu_);
    leader_.clear();
    stopping_ = true;  // a replica that lost does not campaign again: it restarts
  }
  lost_(why);
  return false;
}

void LeaderElection::Resign() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (leading_.exchange(false)) {
    (void)etcd_.Call("/v3/lease/revoke", {{"ID", std::to_string(lease_)}}, std::chrono::seconds(2));
  }
}

}  // namespace tessera::ha
