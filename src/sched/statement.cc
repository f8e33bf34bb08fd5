#include "sched/statement.h"

#include <unordered_set>

namespace tessera::sched {

std::string_view ToString(EvictReason reason) {
  return reason == EvictReason::kPreempt ? "preempt" : "reclaim";
}

Statement::~Statement() { RollbackTo(0); }

void Statement::Bind(model::JobId job, std::vector<model::TaskPlacement> placements) {
  const model::Job& before = state_.job(job);
  log_.push_back(Op{Op::Kind::kBind, job, {}, EvictReason::kPreempt, {}, before.start_time, before.last_checkpoint,
                    before.attained_gpu_seconds});
  state_.Bind(job, std::move(placements), now_);
}

void Statement::Evict(model::JobId victim, model::JobId preemptor, EvictReason reason) {
  const model::Job& job = state_.job(victim);
  Op op{Op::Kind::kEvict, victim, preemptor, reason, {}, job.start_time, job.last_checkpoint, job.attained_gpu_seconds};
  op.placements = state_.Unbind(victim, now_);
  log_.push_back(std::move(op));
}

model::JobId Statement::Spawn(model::JobId parent) {
  const model::JobId element = state_.SpawnElement(parent);
  log_.push_back(Op{Op::Kind::kSpawn, element, {}, EvictReason::kPreempt, {}, 0, 0, 0});
  return element;
}

void Statement::RollbackTo(Checkpoint mark) {
  while (log_.size() > mark) {
    Op& op = log_.back();
    if (op.kind == Op::Kind::kSpawn) {
      state_.Unspawn(op.job);  // its bind, logged after it, was rolled back already
      log_.pop_back();
      continue;
    }
    if (op.kind == Op::Kind::kBind) {
      state_.Unbind(op.job, now_);
    } else {
      state_.Bind(op.job, std::move(op.placements), op.start_time);
    }
    state_.job(op.job).start_time = op.start_time;
    state_.job(op.job).last_checkpoint = op.last_checkpoint;
    state_.job(op.job).attained_gpu_seconds = op.attained_gpu_seconds;
    log_.pop_back();
  }
}

void Statement::Commit(Binder& binder) {
  // Evictions first: a preemptor's bind depends on its victims being gone. A
  // job bound and evicted within this statement never started: the binder
  // hears of neither.
  std::unordered_set<model::JobId> bound_here;
  for (const Op& op : log_) {
    if (op.kind == Op::Kind::kBind) {
      bound_here.insert(op.job);
    } else if (op.kind == Op::Kind::kEvict && !bound_here.contains(op.job)) {
      binder.Evict(state_.job(op.job), state_.job(op.preemptor), op.reason);
    }
  }
  for (const Op& op : log_) {
    // An element exists from its spawn on, even if its bind is evicted below.
    if (op.kind == Op::Kind::kSpawn) binder.Spawn(state_.job(op.job));
    // A job bound and later evicted within the same statement is not running.
    if (op.kind == Op::Kind::kBind && state_.job(op.job).state == model::JobState::kRunning) binder.Bind(state_.job(op.job));
  }
  log_.clear();
}

}  // namespace tessera::sched
