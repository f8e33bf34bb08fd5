#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <future>
#include <thread>
#include <unistd.h>

#include "store/commit_queue.h"
#include "store/sqlite_store.h"

namespace tessera::store {
namespace {

std::string TempDb(const char* name) {
  const auto dir = std::filesystem::temp_directory_path() / ("tessera-store-test-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / name;
  std::filesystem::remove(path);
  return path.string();
}

TEST(SqliteStoreTest, PutsSurviveReopenAndDeletesRemove) {
  const std::string path = TempDb("reopen.db");
  {
    auto store = SqliteStore::Open(path);
    ASSERT_TRUE(store.ok()) << store.status().message();
    ASSERT_TRUE((*store)->Apply({Mutation::Put(Collection::kJobs, NumericKey(2), "{\"b\":2}"),
                                 Mutation::Put(Collection::kJobs, NumericKey(10), "{\"c\":3}"),
                                 Mutation::Put(Collection::kNodes, "n1", "{}")}).ok());
    ASSERT_TRUE((*store)->Apply({Mutation::Put(Collection::kJobs, NumericKey(2), "{\"b\":22}"),
                                 Mutation::Delete(Collection::kNodes, "n1")}).ok());
  }
  auto store = SqliteStore::Open(path);
  ASSERT_TRUE(store.ok());
  auto jobs = (*store)->List(Collection::kJobs);
  ASSERT_TRUE(jobs.ok());
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[0].value, "{\"b\":22}");  // numeric keys sort 2 before 10
  EXPECT_EQ((*jobs)[1].value, "{\"c\":3}");
  EXPECT_TRUE((*store)->List(Collection::kNodes)->empty());
}

TEST(SqliteStoreTest, UnwritableLocationIsAClearError) {
  auto store = SqliteStore::Open("/proc/no/such/dir/state.db");
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.status().message().find("cannot open the state database /proc/no/such/dir/state.db"), std::string::npos);
}

TEST(CommitQueueTest, BatchesApplyInOrderAndCallbacksSeeSuccess) {
  auto store = SqliteStore::Open(TempDb("queue.db"));
  ASSERT_TRUE(store.ok());
  std::atomic<int> done{0};
  std::vector<int> order;
  std::mutex order_mu;
  {
    CommitQueue queue(**store);
    // The first batch's callback holds the writer until every other batch is
    // queued, so those 199 must go to disk in one transaction.
    std::promise<void> all_queued;
    std::shared_future<void> released = all_queued.get_future().share();
    queue.Submit({}, [released](const Status&) { released.wait(); });
    for (int i = 0; i < 200; ++i) {
      queue.Submit({Mutation::Put(Collection::kJobs, NumericKey(i), std::to_string(i)),
                    Mutation::Put(Collection::kMeta, "last", std::to_string(i))},
                   [&, i](const Status& s) {
                     EXPECT_TRUE(s.ok());
                     std::lock_guard lock(order_mu);
                     order.push_back(i);
                     ++done;
                   });
    }
    all_queued.set_value();
    queue.Flush();
    EXPECT_EQ(done.load(), 200);
    EXPECT_LE(queue.transactions(), 2);  // 201 without group commit
  }
  for (int i = 0; i < 200; ++i) EXPECT_EQ(order[i], i);
  auto meta = (*store)->List(Collection::kMeta);
  ASSERT_EQ(meta->size(), 1u);
  EXPECT_EQ((*meta)[0].value, "199");  // the later batch wins within a merged transaction
}

TEST(CommitQueueTest, GathersOnlyWhileCommitsRunBackToBack) {
  auto store = SqliteStore::Open(TempDb("gather.db"));
  ASSERT_TRUE(store.ok());
  // A window far longer than the test: whatever commits did not wait for it.
  CommitQueue queue(**store, {.gather_window = std::chrono::seconds(60), .full_transaction = 10});
  const auto start = std::chrono::steady_clock::now();
  std::atomic<int> committed{0};
  const auto count = [&](const Status& s) {
    EXPECT_TRUE(s.ok());
    ++committed;
  };
  queue.Submit({Mutation::Put(Collection::kJobs, NumericKey(1), "idle")}, count);
  queue.Flush();  // idle: commits at once
  EXPECT_EQ(queue.transactions(), 1);
  queue.Submit({Mutation::Put(Collection::kJobs, NumericKey(2), "right after")}, count);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(committed.load(), 1) << "a write right after a commit waits for company";
  std::vector<Mutation> many;
  for (int i = 0; i < 9; ++i) many.push_back(Mutation::Put(Collection::kJobs, NumericKey(10 + i), "full"));
  queue.Submit(std::move(many), count);
  queue.Flush();  // ten mutations queued: a full transaction goes without waiting
  EXPECT_EQ(committed.load(), 3);
  EXPECT_EQ(queue.transactions(), 2);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
}

}  // namespace
}  // namespace tessera::store
