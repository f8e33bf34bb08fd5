// The typed extension points of the scheduling core. A policy is a plugin
// behind one of these interfaces, registered by name in registry.cc and chosen
// per cluster in SchedulerConfig. The unit of scheduling is always a gang.
//
//   JobOrder     orders jobs of one queue and priority (FIFO, shortest-first)
//   QueueOrder   the fair-share key that orders queues against each other
//   Admission    quotas: may this job take resources now; may one job reclaim
//                another's
//   Placement    where a gang goes (topology, packing); all or nothing
//   VictimCost   what evicting a running job destroys
//   Reservation  which capacity the blocked head-of-line gang holds back from
//                backfill
//
// Plugins are pure: they read the state they are given and the time they are
// told; they never do I/O or read the wall clock.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "model/cluster.h"
#include "model/job.h"
#include "model/queue.h"
#include "sched/run_time_history.h"

namespace tessera::sched {

class Session;

// An order is a rank per job, smaller first, the submission time and then the
// id breaking ties. A rank rather than a comparison so that a cycle sorts its
// pending jobs by keys read once, not by records fetched at every comparison.
class JobOrder {
 public:
  virtual ~JobOrder() = default;
  virtual double Rank(const model::Job& job, Time now) const = 0;
  // Called at the start of every cycle with what finished jobs ran for; an
  // order that predicts from history keeps what it derives until the next.
  virtual void Learn(const RunTimeHistory&) {}
  // True when `a` should be tried before `b` (same queue, same priority) at
  // `now`; preemption by job order also compares a pending job with running ones.
  bool Before(const model::Job& a, const model::Job& b, Time now) const {
    const double ra = Rank(a, now), rb = Rank(b, now);
    return ra != rb ? ra < rb : a.submit_time != b.submit_time ? a.submit_time < b.submit_time : a.id < b.id;
  }
  // With preempt_by_job_order: may the waiting `a` evict the running `b` of
  // the same priority? By default whenever it comes first.
  virtual bool Displaces(const model::Job& a, const model::Job& b, Time now) const { return Before(a, b, now); }
};

class QueueOrder {
 public:
  virtual ~QueueOrder() = default;
  // Smaller is served first. `capacity` is the cluster's total.
  virtual double Share(const model::Queue& queue, const model::Resources& usage,
                       const model::Resources& capacity) const = 0;
};

// Why a job may not take resources now.
struct Denial {
  enum class Kind { kQueueLimit, kUserLimit, kNonPreemptibleOverGuarantee };
  Kind kind;
  model::QueueId queue;  // the queue whose quota says no
};

class Admission {
 public:
  virtual ~Admission() = default;
  // nullopt: admitted (possibly borrowing idle capacity).
  virtual std::optional<Denial> Admit(const model::Job& job, const model::QueueTree& queues) const = 0;
  // The most milli-GPUs the job may hold if it starts now: optional gang
  // members beyond minReplicas are added only up to it.
  virtual std::int64_t GpuHeadroom(const model::Job& job, const model::QueueTree& queues) const = 0;
  // May `preemptor` take `victim`'s resources because its queue is owed them?
  virtual bool MayReclaim(const model::Job& preemptor, const model::Job& victim,
                          const model::QueueTree& queues) const = 0;
};

// Narrows a placement: to one topology domain, or away from reserved nodes.
struct PlaceOptions {
  model::TopologyLevel within_level = model::TopologyLevel::kCluster;
  std::int32_t within_group = 0;
  const std::vector<std::uint8_t>* excluded_nodes = nullptr;  // 1 = may not be used
  std::int64_t max_gpu_milli = std::numeric_limits<std::int64_t>::max();  // quota headroom
};

// A placement's answer. Fits: the placement is in `out`. Not now: not on the
// cluster as it stands (within the options' domain; the job waits for
// capacity). Never: not on this cluster whatever ends or is freed, under any
// options, with the plugin's own reason; the job then ends its wait as
// "never" (outcome.h). The reason is built only on that rare path: a fits or
// not-now answer is an enum and an empty string, with nothing on the heap.
class PlaceVerdict {
 public:
  enum class Kind : std::uint8_t { kFits, kNotNow, kNever };

  static PlaceVerdict Fits() { return PlaceVerdict(Kind::kFits, {}); }
  static PlaceVerdict NotNow() { return PlaceVerdict(Kind::kNotNow, {}); }
  static PlaceVerdict Never(std::string reason) { return PlaceVerdict(Kind::kNever, std::move(reason)); }

  Kind kind() const { return kind_; }
  bool fits() const { return kind_ == Kind::kFits; }
  const std::string& never_reason() const { return never_reason_; }

 private:
  PlaceVerdict(Kind kind, std::string reason) : kind_(kind), never_reason_(std::move(reason)) {}
  Kind kind_;
  std::string never_reason_;
};

class Placement {
 public:
  virtual ~Placement() = default;
  // Finds a placement for every mandatory task of the gang (and as many of its
  // optional ones as fit) and writes it to `out`. Leaves `cluster` as it found
  // it.
  virtual PlaceVerdict Place(const model::Job& job, model::Cluster& cluster, const PlaceOptions& options,
                             std::vector<model::TaskPlacement>& out) = 0;
};

class VictimCost {
 public:
  virtual ~VictimCost() = default;
  // What evicting the running job at `now` destroys; smaller is cheaper.
  virtual double Cost(const model::Job& victim, Time now) const = 0;
};

// Capacity held back for a gang that is blocked now.
struct Reservation {
  model::JobId job;
  Time start = kNever;                    // when the gang is expected to fit
  std::vector<std::uint8_t> nodes;        // 1 = reserved for the gang
};

class ReservationPolicy {
 public:
  virtual ~ReservationPolicy() = default;
  // Computes the reservation for the blocked job `head`, or nullopt.
  virtual std::optional<Reservation> Reserve(Session& session, model::JobId head) = 0;
};

}  // namespace tessera::sched
