// EtcdStore against real etcd members (Debian's etcd-server) that the test
// starts on free loopback ports.
#include "store/etcd_store.h"

#include <gtest/gtest.h>

#include <thread>

#include "store/commit_queue.h"
#include "store/testing/etcd_cluster.h"

namespace tessera::store {
namespace {

class EtcdStoreTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { etcd_ = new testing::EtcdCluster(1); }
  static void TearDownTestSuite() {
    delete etcd_;
    etcd_ = nullptr;
  }
  std::unique_ptr<EtcdStore> Open(const std::string& prefix) {
    auto store = EtcdStore::Open(etcd_->url() + prefix);
    EXPECT_TRUE(store.ok()) << store.status().message();
    return store.ok() ? std::move(*store) : nullptr;
  }
  static inline testing::EtcdCluster* etcd_ = nullptr;
};

TEST_F(EtcdStoreTest, PutsDeletesAndNumericOrderAsInSqlite) {
  auto store = Open("/puts");
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Apply({Mutation::Put(Collection::kJobs, NumericKey(2), "{\"b\":2}"),
                            Mutation::Put(Collection::kJobs, NumericKey(10), "{\"c\":3}"),
                            Mutation::Put(Collection::kNodes, "n1", "{}")}).ok());
  ASSERT_TRUE(store->Apply({Mutation::Put(Collection::kJobs, NumericKey(2), "{\"b\":22}"), Mutation::Delete(Collection::kNodes, "n1")}).ok());
  auto jobs = Open("/puts")->List(Collection::kJobs);  // a second client sees the same
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[0].key, NumericKey(2));
  EXPECT_EQ((*jobs)[0].value, "{\"b\":22}");
  EXPECT_EQ((*jobs)[1].value, "{\"c\":3}");
  EXPECT_TRUE(store->List(Collection::kNodes)->empty());
  EXPECT_TRUE(Open("/other")->List(Collection::kJobs)->empty()) << "prefixes keep clusters apart";
}

TEST_F(EtcdStoreTest, AKeyWrittenTwiceInABatchKeepsTheLastWrite) {
  auto store = Open("/twice");
  ASSERT_TRUE(store->Apply({Mutation::Put(Collection::kMeta, "k", "1"), Mutation::Put(Collection::kMeta, "k", "2"),
                            Mutation::Put(Collection::kMeta, "gone", "x"), Mutation::Delete(Collection::kMeta, "gone")}).ok());
  auto meta = store->List(Collection::kMeta);
  ASSERT_EQ(meta->size(), 1u);
  EXPECT_EQ((*meta)[0].value, "2");
}

TEST_F(EtcdStoreTest, LargeBatchesAndListsInPages) {
  auto store = Open("/large");
  std::vector<Mutation> batch;
  const std::string value(2000, 'v');
  for (int i = 0; i < 12'000; ++i) batch.push_back(Mutation::Put(Collection::kEvents, NumericKey(i), value + std::to_string(i)));
  ASSERT_TRUE(store->Apply(batch).ok());
  auto events = store->List(Collection::kEvents);
  ASSERT_TRUE(events.ok()) << events.status().message();
  ASSERT_EQ(events->size(), 12'000u);  // twelve pages
  EXPECT_EQ(events->back().value, value + "11999");
}

TEST_F(EtcdStoreTest, GroupCommitOverEtcd) {
  auto store = Open("/queue");
  {
    CommitQueue queue(*store);
    for (int i = 0; i < 300; ++i) {
      queue.Submit({Mutation::Put(Collection::kJobs, NumericKey(i), std::to_string(i)), Mutation::Put(Collection::kMeta, "last", std::to_string(i))},
                   [](const Status& s) { EXPECT_TRUE(s.ok()) << s.message(); });
    }
    queue.Flush();
  }
  EXPECT_EQ(store->List(Collection::kJobs)->size(), 300u);
  EXPECT_EQ(store->List(Collection::kMeta)->at(0).value, "299");
}

TEST(EtcdStoreErrors, NoEtcdAndBadUrlsAreClearErrors) {
  auto none = EtcdStore::Open("etcd://127.0.0.1:1");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("cannot reach etcd at 127.0.0.1:1"), std::string::npos) << none.status().message();
  auto bad = EtcdStore::Open("http://127.0.0.1:2379");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("expected etcd://HOST:PORT[,HOST:PORT...][/PREFIX]"), std::string::npos);
}

TEST_F(EtcdStoreTest, AFencedStoreWritesOnlyWhileItsLeaderKeyStands) {
  auto store = Open("/fence");
  auto other = Open("/fence");
  ASSERT_TRUE(other->Apply({Mutation::Put(Collection::kMeta, "leader", "a")}).ok());
  // The key's creation revision, as the election would have it.
  EtcdClient client(store->url().members);
  auto kv = client.Call("/v3/kv/range", {{"key", Base64Encode("/fence/meta/leader")}});
  ASSERT_TRUE(kv.ok());
  const std::int64_t created = EtcdInt((*kv)["kvs"][0], "create_revision");
  store->Fence("/fence/meta/leader", created);
  EXPECT_TRUE(store->Apply({Mutation::Put(Collection::kJobs, "1", "x")}).ok());
  // Another replica wins: the key is deleted and created again.
  ASSERT_TRUE(other->Apply({Mutation::Delete(Collection::kMeta, "leader")}).ok());
  ASSERT_TRUE(other->Apply({Mutation::Put(Collection::kMeta, "leader", "b")}).ok());
  const Status fenced = store->Apply({Mutation::Put(Collection::kJobs, "1", "stale"), Mutation::Put(Collection::kJobs, "2", "y")});
  ASSERT_FALSE(fenced.ok());
  EXPECT_NE(fenced.message().find("fenced off"), std::string::npos) << fenced.message();
  auto jobs = other->List(Collection::kJobs);
  ASSERT_EQ(jobs->size(), 1u) << "nothing of the fenced batch was written";
  EXPECT_EQ((*jobs)[0].value, "x");
}

TEST_F(EtcdStoreTest, AWatchWakesOnTheChangeAndOtherwiseWaitsItsTime) {
  auto store = Open("/watch");
  EtcdClient client(store->url().members);
  ASSERT_TRUE(store->Apply({Mutation::Put(Collection::kMeta, "k", "1")}).ok());
  auto now = client.Call("/v3/kv/range", {{"key", Base64Encode("/watch/meta/k")}});
  ASSERT_TRUE(now.ok());
  const std::int64_t revision = EtcdInt((*now)["header"], "revision");

  auto start = std::chrono::steady_clock::now();
  Result<bool> quiet = client.WaitForChange("/watch/meta/k", revision + 1, std::chrono::milliseconds(300));
  ASSERT_TRUE(quiet.ok()) << quiet.status().message();
  EXPECT_FALSE(*quiet);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(250));

  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_TRUE(store->Apply({Mutation::Delete(Collection::kMeta, "k")}).ok());
  });
  start = std::chrono::steady_clock::now();
  Result<bool> changed = client.WaitForChange("/watch/meta/k", revision + 1, std::chrono::seconds(10));
  writer.join();
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_TRUE(*changed);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3)) << "woken by the delete, not the idle timeout";
}

TEST(EtcdStoreMembers, ADeadMemberCostsARetryNotAnOutage) {
  testing::EtcdCluster etcd(3);
  auto store = EtcdStore::Open(etcd.url() + "/ha");
  ASSERT_TRUE(store.ok()) << store.status().message();
  ASSERT_TRUE((*store)->Apply({Mutation::Put(Collection::kJobs, NumericKey(1), "one")}).ok());
  etcd.Kill(0);  // the member the store talks to
  const Status after = (*store)->Apply({Mutation::Put(Collection::kJobs, NumericKey(2), "two")});
  ASSERT_TRUE(after.ok()) << after.message();
  auto jobs = (*store)->List(Collection::kJobs);
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  EXPECT_EQ(jobs->size(), 2u);
  etcd.Start(0);  // it rejoins with its data
  etcd.Kill(1);
  etcd.Kill(2);   // no quorum: a clear error, not a hang
  const Status lost = (*store)->Apply({Mutation::Put(Collection::kJobs, NumericKey(3), "three")});
  EXPECT_FALSE(lost.ok());
}

TEST(EtcdUrls, MembersAndPrefix) {
  auto url = ParseEtcdUrl("etcd://a:1,b:2,c:3/team");
  ASSERT_TRUE(url.ok());
  ASSERT_EQ(url->members.size(), 3u);
  EXPECT_EQ(url->members[2].ToString(), "c:3");
  EXPECT_EQ(url->prefix, "/team/");
  EXPECT_EQ(ParseEtcdUrl("etcd://a:1")->prefix, "/tessera/");
  auto bad = ParseEtcdUrl("etcd://a:1,b");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'b' is not HOST:PORT"), std::string::npos) << bad.status().message();
}

TEST(Base64, RoundTripsEveryLengthAndRefusesGarbage) {
  for (const std::string& text : std::vector<std::string>{"", "a", "ab", "abc", "abcd", std::string("\0\xff\x10", 3)}) {
    auto back = Base64Decode(Base64Encode(text));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, text);
  }
  EXPECT_EQ(Base64Encode("tessera"), "dGVzc2VyYQ==");
  EXPECT_FALSE(Base64Decode("abc").ok());
  EXPECT_FALSE(Base64Decode("!!!!").ok());
}

}  // namespace
}  // namespace tessera::store
