#include "store/commit_queue.h"

namespace tessera::store {

CommitQueue::CommitQueue(StateStore& store, CommitQueueOptions options)
    : store_(store), options_(options), writer_([this] { Run(); }) {}

CommitQueue::~CommitQueue() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_one();
  writer_.join();
}

void CommitQueue::Submit(std::vector<Mutation> batch, Callback done) {
  {
    std::lock_guard lock(mu_);
    queued_mutations_ += batch.size();
    queue_.emplace_back(std::move(batch), std::move(done));
  }
  wake_.notify_one();
}

void CommitQueue::Flush() {
  std::unique_lock lock(mu_);
  idle_.wait(lock, [this] { return queue_.empty() && !busy_; });
}

void CommitQueue::Run() {
  std::unique_lock lock(mu_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and drained
    if (std::chrono::steady_clock::now() - last_commit_end_ < options_.gather_window) {
      wake_.wait_for(lock, options_.gather_window,
                     [this] { return stopping_ || queued_mutations_ >= options_.full_transaction; });
    }
    std::deque<std::pair<std::vector<Mutation>, Callback>> taken;
    taken.swap(queue_);
    queued_mutations_ = 0;
    busy_ = true;
    lock.unlock();
    std::vector<Mutation> merged;
    for (auto& [batch, done] : taken) {
      merged.insert(merged.end(), std::make_move_iterator(batch.begin()), std::make_move_iterator(batch.end()));
    }
    const Status status = store_.Apply(merged);
    for (auto& [batch, done] : taken) {
      if (done) done(status);
    }
    lock.lock();
    last_commit_end_ = std::chrono::steady_clock::now();
    ++transactions_;
    busy_ = false;
    if (queue_.empty()) idle_.notify_all();
  }
}

}  // namespace tessera::store
