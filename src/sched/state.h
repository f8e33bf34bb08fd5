// The world as the scheduling core sees it: the cluster, the queue tree and
// the jobs. The caller owns it (the server as its "assumed" cache, the
// simulator as its whole truth) and feeds it events; a scheduling cycle then
// mutates it through a Statement and reports every decision to a Binder.
//
// The methods here are the only ways to change a job's resources, so cluster
// state, queue usage and the pending/running sets never disagree.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "model/cluster.h"
#include "model/job_table.h"
#include "model/queue.h"
#include "sched/run_time_history.h"

namespace tessera::sched {

class SchedulerState {
 public:
  SchedulerState(model::Cluster cluster, model::QueueTree queues)
      : cluster_(std::move(cluster)), queues_(std::move(queues)) {}

  // A copy for another owner (the server's scheduling thread works on one):
  // the same cluster, queues and jobs, with a release count of its own, so
  // that a plan made on one state never passes for one made on the other.
  SchedulerState Fork() const {
    SchedulerState copy(*this);
    copy.releases_ = NewReleaseBase();
    return copy;
  }

  model::Cluster& cluster() { return cluster_; }
  const model::Cluster& cluster() const { return cluster_; }
  model::QueueTree& queues() { return queues_; }
  const model::QueueTree& queues() const { return queues_; }
  model::JobTable& jobs() { return jobs_; }
  const model::JobTable& jobs() const { return jobs_; }
  model::Job& job(model::JobId id) { return jobs_.at(id); }
  const model::Job& job(model::JobId id) const { return jobs_.at(id); }

  // Accepts a job as pending at `now`. Resolves GPU model names and judges
  // feasibility: a job that can never run is kept, with its never_reason set,
  // so the scheduler reports why (the API rejects such jobs before this).
  model::JobId Submit(model::Job job, Time now);

  // Puts back a job as it was, keeping its id, state and restarts: the
  // server's recovery and its rebuilds after nodes join or queues change. A
  // running job takes its placements again (they must fit: they did before);
  // a pending one is judged again for feasibility against this cluster.
  model::JobId Restore(model::Job job);

  // Starts a pending job on `placements` / stops a running one and returns it
  // to pending. The scheduler calls these through a Statement.
  void Bind(model::JobId id, std::vector<model::TaskPlacement> placements, Time now);
  // Stops a running job at `now`, adding the run to its attained service.
  std::vector<model::TaskPlacement> Unbind(model::JobId id, Time now);

  // A running job ended at `now` (succeeded, failed or cancelled): its
  // resources free up, and a success adds its time run to the history. A
  // pending job may also be cancelled, and so may an array job (its
  // elements are ended one by one by the caller).
  void Finish(model::JobId id, model::JobState end, Time now);
  // What the jobs that succeeded ran for: what a learning job order reads.
  const RunTimeHistory& history() const { return history_; }
  // A job of `queue` and `gpu_milli` that ended before this state knew it
  // ran for `ran`: the server's recovery and the simulator's warm start.
  void Learn(model::QueueId queue, std::int64_t gpu_milli, Seconds ran) { history_.Record(queue, gpu_milli, ran); }
  // Takes over another state's history (the server's rebuilds).
  void AdoptHistory(RunTimeHistory history) { history_ = std::move(history); }

  // Arrays (model/job_array.h). The array job's next element comes into
  // being, pending; the scheduler binds it at once (through a Statement).
  model::JobId SpawnElement(model::JobId parent) { return jobs_.Spawn(parent); }
  // Takes back the element spawned last, unbound (a statement's rollback).
  void Unspawn(model::JobId element) { jobs_.Unspawn(element); }
  // The element at `position`, which has not started, is cancelled: it
  // comes into being ended and is never started.
  model::JobId CancelUnstarted(model::JobId parent, std::int32_t position) {
    return jobs_.AddEnded(parent, position, model::JobState::kCancelled);
  }
  // Forgets ended jobs (the server's retention): they leave the table, and
  // their ids are not handed out again.
  void Forget(const std::vector<model::JobId>& ended) { jobs_.Forget(ended); }
  // A running job failed, or lost its GPUs: within its restart budget
  // (spec.restart.maxRestarts) it goes back to pending and restarts from its
  // last checkpoint when placed again; past it, it ends as failed. True when
  // requeued.
  bool Requeue(model::JobId id, Time now);
  // A job wrote a checkpoint at `now`: preempting it now loses nothing.
  void Checkpointed(model::JobId id, Time now) { jobs_.at(id).last_checkpoint = now; }
  // Moves every time a running job gives back its resources (ended, stopped
  // or requeued, what-if evictions included): a plan built on the running
  // set is stale once it moved. Counts from a base no other state of this
  // process shares, so a plan made on another state (the server builds a new
  // one when queues change) never passes for one made on this.
  std::uint64_t releases() const { return releases_; }

  // Marks a GPU (un)healthy. Returns the running jobs on it; the caller decides
  // whether they fail, restart or migrate.
  std::vector<model::JobId> SetGpuHealthy(model::GpuId gpu, bool healthy);
  std::vector<model::JobId> JobsOnNode(model::NodeId node) const;

 private:
  model::Cluster cluster_;
  model::QueueTree queues_;
  model::JobTable jobs_;
  RunTimeHistory history_;
  // Frees a running job's resources and returns it to pending, without
  // touching its attained service.
  std::vector<model::TaskPlacement> Release(model::JobId id);
  // Feasibility answers by (shape, queue, preemptible): submissions repeat shapes.
  std::unordered_map<std::uint64_t, std::string> feasibility_cache_;
  std::uint64_t releases_ = NewReleaseBase();

  static std::uint64_t NewReleaseBase();
};

}  // namespace tessera::sched
