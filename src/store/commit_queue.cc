#include "store/commit_queue.h"

namespace tessera::store {

CommitQueue::CommitQueue(StateStore& store) : store_(store), writer_([this] { Run(); }) {}

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
    std::deque<std::pair<std::vector<Mutation>, Callback>> taken;
    taken.swap(queue_);
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
    ++transactions_;
    busy_ = false;
    if (queue_.empty()) idle_.notify_all();
  }
}

}  // namespace tessera::store
