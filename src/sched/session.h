// One scheduling cycle's context, shared by the actions: the state and its
// open Statement, the clock reading, the plugins, the ordered stream of
// pending jobs, the outcomes so far and the head-of-line reservation.
//
// Pending jobs are streamed in priority order; within one priority, the queue
// with the smallest hierarchical fair share goes next (re-evaluated after
// every placement), and within a queue the JobOrder plugin decides.
//
// An array job (model/job_array.h) is one entry of the stream however many
// elements it has left: placing it starts its next element, and as long as
// it may start more (its limit allows, elements are left) it is offered
// again, competing for the next pick like any job of its queue. Its
// unstarted elements cost a cycle nothing.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "sched/config.h"
#include "sched/extension_points.h"
#include "sched/outcome.h"
#include "sched/state.h"
#include "sched/statement.h"

namespace tessera::sched {

struct Plugins {
  std::unique_ptr<JobOrder> job_order;
  std::unique_ptr<QueueOrder> queue_order;
  std::unique_ptr<Admission> admission;
  std::unique_ptr<Placement> placement;
  std::unique_ptr<VictimCost> victim_cost;
  std::unique_ptr<ReservationPolicy> reservation;
};

class Session {
 public:
  Session(SchedulerState& state, Plugins& plugins, const SchedulerConfig& config, Time now);

  SchedulerState& state() { return state_; }
  const SchedulerState& state() const { return state_; }
  Statement& statement() { return statement_; }
  Plugins& plugins() { return plugins_; }
  const Plugins& plugins() const { return plugins_; }
  const SchedulerConfig& config() const { return config_; }
  Time now() const { return now_; }
  CycleResult& result() { return result_; }

  // The next pending job to consider, or nullopt when the stream is exhausted.
  std::optional<model::JobId> NextPending();

  // Places `job` if it fits (binding it through the statement). Remembers
  // shapes that did not fit so identical requests fail in O(1) until
  // something is evicted. Never: the placement plugin knows the job can never
  // fit, and the job's never_reason now says why (the caller records it).
  // An array job streamed last that may start more elements is streamed again.
  PlaceVerdict::Kind TryPlace(model::JobId job, const PlaceOptions& options = {});
  // Would `job` fit now? Like TryPlace, but binds nothing.
  PlaceVerdict::Kind Fits(model::JobId job, const PlaceOptions& options = {});
  // Evicts through the statement and records it; forgets failed shapes.
  void Evict(model::JobId victim, model::JobId preemptor, EvictReason reason);
  bool BoundThisCycle(model::JobId job) const { return !bound_.empty() && bound_.contains(job); }
  // Binds a placement found outside TryPlace (by victim search). For an array
  // job, spawns its next element and binds that.
  void Bind(model::JobId job, std::vector<model::TaskPlacement> placements);

  void Record(model::JobId job, Verdict verdict, WaitReason reason, std::int32_t detail = -1);
  // Jobs recorded as waiting for capacity, a reservation or a quota, in
  // stream order: the candidates for reclaim and preemption.
  const std::vector<std::size_t>& waiting() const { return waiting_; }
  Outcome& outcome(std::size_t index) { return result_.outcomes[index]; }

  // The first gang that did not fit; the backfill action reserves for it.
  std::optional<model::JobId> head() const { return head_; }
  void set_head(model::JobId job) { head_ = job; }

  // How long the job's current run (or its next, if pending) is expected to
  // last: the user's estimate; without one, what the finished jobs of its
  // class ran beyond the time it has run already (run_time_history.h); with
  // no such history, the configured default.
  Seconds Walltime(const model::Job& job) const;

 private:
  // A pending job of the stream with the keys it is sorted by, copied out of
  // its record so that the sort compares dense entries.
  struct StreamEntry {
    std::int32_t priority;
    model::QueueId queue;
    double rank;  // JobOrder::Rank at the cycle's time
    Time submit;
    model::JobId id;
  };
  struct Band {
    std::size_t begin, end;  // stream_ entries of one priority, grouped by queue
  };
  // The placement for `job` in scratch_, or why not (remembering the shape
  // when not now, the reason in the job when never).
  PlaceVerdict::Kind FindPlacement(model::JobId job, const PlaceOptions& options);
  void BuildStream();
  void EnterBand(const Band& band);  // fills cursor_ and remaining_ for the band
  bool Eligible(model::Job& job);  // dependencies and feasibility; records when not
  // The oldest pending or running job with the job's user and name (a
  // singleton waits for it unless it is the job itself).
  model::JobId FirstActive(const model::Job& job);
  double Share(model::QueueId queue, bool own);
  void ForgetShares(model::QueueId queue);  // its usage and its ancestors' changed

  SchedulerState& state_;
  Plugins& plugins_;
  const SchedulerConfig& config_;
  Time now_;
  Statement statement_;
  CycleResult result_;
  std::vector<StreamEntry> stream_;
  std::vector<Band> bands_;
  std::unordered_map<std::string, model::JobId> first_active_;  // by user and name; see FirstActive
  bool first_active_built_ = false;
  std::size_t band_ = 0;
  bool band_entered_ = false;
  // Within the current band: per queue, its own jobs as [cursor, end) in
  // stream_, and how many jobs remain in its whole subtree.
  std::vector<std::pair<std::size_t, std::size_t>> cursor_;
  std::vector<std::int64_t> remaining_;
  std::vector<std::size_t> waiting_;
  std::optional<model::JobId> head_;
  std::unordered_set<std::uint64_t> failed_shapes_;
  std::unordered_set<model::JobId> bound_;  // a set: a flag per job would cost the whole job table per cycle
  std::vector<model::TaskPlacement> scratch_;
  // The queue whose cursor NextPending advanced last, while the job it
  // returned may still be offered again (an array job); invalid otherwise.
  model::QueueId last_streamed_;
  // Fair-share keys by queue (subtree, own jobs); NaN when stale. Usage only
  // changes through Bind and Evict here, or inside a rollback that restores it.
  std::vector<double> subtree_share_, own_share_;
};

}  // namespace tessera::sched
