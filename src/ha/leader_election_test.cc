// Leader election against real etcd members.
#include "ha/leader_election.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <thread>

#include "store/etcd_store.h"
#include "store/testing/etcd_cluster.h"

namespace tessera::ha {
namespace {

using namespace std::chrono_literals;

// One replica's election, with what its callbacks saw.
struct Replica {
  Replica(const std::string& etcd, const std::string& name) {
    auto url = store::ParseEtcdUrl(etcd);
    ElectionOptions options;
    options.key = "/test/leader";
    options.identity = name;
    options.lease_ttl = 1s;
    options.retry = 50ms;
    election = std::make_unique<LeaderElection>(url->members, options);
    election->Start([this](std::int64_t e) { epoch = e; }, [this](const std::string& why) { lost = why; });
  }
  std::unique_ptr<LeaderElection> election;
  std::atomic<std::int64_t> epoch{0};
  std::string lost;  // written on the election's thread, read after it stopped
};

template <typename Predicate>
bool WaitFor(Predicate predicate, std::chrono::milliseconds limit = 10s) {
  for (auto end = std::chrono::steady_clock::now() + limit; std::chrono::steady_clock::now() < end;) {
    if (predicate()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return predicate();
}

TEST(LeaderElection, OneLeadsTheOthersKnowWhoAndAResignationHandsOverAtOnce) {
  store::testing::EtcdCluster etcd(1);
  Replica a(etcd.url(), "http://a:7070");
  ASSERT_TRUE(WaitFor([&] { return a.election->Leading(); }));
  Replica b(etcd.url(), "http://b:7070");
  Replica c(etcd.url(), "http://c:7070");
  ASSERT_TRUE(WaitFor([&] { return b.election->Leader() == "http://a:7070" && c.election->Leader() == "http://a:7070"; }));
  EXPECT_FALSE(b.election->Leading());
  EXPECT_FALSE(c.election->Leading());
  const std::int64_t first = a.epoch;
  EXPECT_GT(first, 0);

  const auto resigned = std::chrono::steady_clock::now();
  a.election->Resign();
  ASSERT_TRUE(WaitFor([&] { return b.election->Leading() || c.election->Leading(); }));
  // The key went with the lease: no TTL to wait out.
  EXPECT_LT(std::chrono::steady_clock::now() - resigned, 800ms);
  Replica& winner = b.election->Leading() ? b : c;
  Replica& loser = b.election->Leading() ? c : b;
  EXPECT_GT(winner.epoch, first) << "a new leader has a newer epoch";
  ASSERT_TRUE(WaitFor([&] { return loser.election->Leader() == winner.election->Leader(); }));
  EXPECT_FALSE(loser.election->Leading());
}

TEST(LeaderElection, ALeaderWhoseLeaseIsGoneKnowsItHasLostAndAnotherWins) {
  store::testing::EtcdCluster etcd(1);
  Replica a(etcd.url(), "a");
  ASSERT_TRUE(WaitFor([&] { return a.election->Leading(); }));
  Replica b(etcd.url(), "b");
  ASSERT_TRUE(WaitFor([&] { return b.election->Leader() == "a"; }));
  // What a paused leader meets when it wakes: its lease was revoked (as if
  // it had expired) and its key deleted with it.
  store::EtcdClient client(store::ParseEtcdUrl(etcd.url())->members);
  auto key = client.Call("/v3/kv/range", {{"key", store::Base64Encode("/test/leader")}});
  ASSERT_TRUE(key.ok());
  ASSERT_TRUE(client.Call("/v3/lease/revoke", {{"ID", (*key)["kvs"][0]["lease"]}}).ok());
  ASSERT_TRUE(WaitFor([&] { return b.election->Leading(); }));
  ASSERT_TRUE(WaitFor([&] { return !a.election->Leading(); }, 3s));
  a.election->Resign();  // joins its thread: `lost` has run
  EXPECT_NE(a.lost.find("lease has expired"), std::string::npos) << a.lost;
  EXPECT_GT(b.epoch, a.epoch);
}

TEST(LeaderElection, TheLeaderKeepsLeadingWhenAnEtcdMemberDies) {
  store::testing::EtcdCluster etcd(3);
  Replica a(etcd.url(), "a");
  ASSERT_TRUE(WaitFor([&] { return a.election->Leading(); }));
  etcd.Kill(0);  // the member its client talks to first
  std::this_thread::sleep_for(3s);  // three TTLs: renewals went to another member
  EXPECT_TRUE(a.election->Leading());
  a.election->Resign();
  EXPECT_TRUE(a.lost.empty()) << a.lost;
}

}  // namespace
}  // namespace tessera::ha
