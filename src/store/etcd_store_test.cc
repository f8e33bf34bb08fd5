// EtcdStore against a real etcd (Debian's etcd-server), started by the test
// on free loopback ports with a data directory of its own.
#include "store/etcd_store.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "store/commit_queue.h"

namespace tessera::store {
namespace {

int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  socklen_t length = sizeof address;
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  close(fd);
  return ntohs(address.sin_port);
}

class EtcdStoreTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ASSERT_EQ(access("/usr/bin/etcd", X_OK), 0) << "etcd is missing: scripts/install-deps.sh installs etcd-server";
    dir_ = std::filesystem::temp_directory_path() / ("tessera-etcd-test-" + std::to_string(getpid()));
    std::filesystem::remove_all(dir_);
    const std::string client = "http://127.0.0.1:" + std::to_string(FreePort());
    const std::string peer = "http://127.0.0.1:" + std::to_string(FreePort());
    pid_ = fork();
    if (pid_ == 0) {
      const std::string log = (dir_.string() + ".log");
      freopen(log.c_str(), "w", stderr);
      execl("/usr/bin/etcd", "etcd", "--data-dir", dir_.c_str(), "--listen-client-urls", client.c_str(), "--advertise-client-urls",
            client.c_str(), "--listen-peer-urls", peer.c_str(), "--initial-advertise-peer-urls", peer.c_str(), "--initial-cluster",
            ("default=" + peer).c_str(), "--max-txn-ops", "100000", "--max-request-bytes", "67108864", static_cast<char*>(nullptr));
      _exit(127);
    }
    url_ = "etcd://" + client.substr(7);
    for (int i = 0; i < 200 && !EtcdStore::Open(url_).ok(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  static void TearDownTestSuite() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
    std::filesystem::remove_all(dir_);
    std::filesystem::remove(dir_.string() + ".log");
  }
  std::unique_ptr<EtcdStore> Open(const std::string& prefix) {
    auto store = EtcdStore::Open(url_ + prefix);
    EXPECT_TRUE(store.ok()) << store.status().message();
    return store.ok() ? std::move(*store) : nullptr;
  }

  static inline pid_t pid_ = -1;
  static inline std::filesystem::path dir_;
  static inline std::string url_;
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
  EXPECT_NE(bad.status().message().find("expected etcd://HOST:PORT[/PREFIX]"), std::string::npos);
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
