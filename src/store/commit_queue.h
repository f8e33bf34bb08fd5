// Group commit: callers hand batches to one writer thread, which applies
// every batch waiting at that moment in a single store transaction and then
// calls each batch's callback in submission order. Durable writes (one fsync
// per transaction) then cost one fsync per burst, not one per job, which is
// what lets the API answer thousands of submissions per second only after
// they are on disk.
//
// Under load the writer also gathers: a transaction costs an fsync and
// rewrites the same tail pages whatever its size, so when the last commit
// ended less than `gather_window` ago (commits are running back to back) it
// waits up to that long, or until `full_transaction` mutations are queued,
// before it begins: about 5x fewer transactions in the control-plane bench
// (docs/benchmarks.md, with what the window does to that bench's latency).
// Like PostgreSQL's commit_delay, an idle server never waits: the first
// write after a pause commits at once.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "store/state_store.h"

namespace tessera::store {

struct CommitQueueOptions {
  std::chrono::microseconds gather_window{2000};
  std::size_t full_transaction = 512;  // mutations
};

class CommitQueue {
 public:
  using Callback = std::function<void(const Status&)>;
  explicit CommitQueue(StateStore& store, CommitQueueOptions options = {});
  ~CommitQueue();  // drains what was submitted, then stops
  CommitQueue(const CommitQueue&) = delete;
  CommitQueue& operator=(const CommitQueue&) = delete;

  // Batches are applied in submission order; `done` runs on the writer thread.
  void Submit(std::vector<Mutation> batch, Callback done);
  // Blocks until everything submitted so far is applied (tests, shutdown).
  void Flush();

  std::int64_t transactions() const { return transactions_; }

 private:
  void Run();
  StateStore& store_;
  const CommitQueueOptions options_;
  std::mutex mu_;
  std::condition_variable wake_, idle_;
  std::deque<std::pair<std::vector<Mutation>, Callback>> queue_;
  std::size_t queued_mutations_ = 0;
  std::chrono::steady_clock::time_point last_commit_end_;
  bool busy_ = false;
  bool stopping_ = false;
  std::int64_t transactions_ = 0;
  std::thread writer_;
};

}  // namespace tessera::store
