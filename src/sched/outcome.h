// What a cycle decided for each pending job it looked at: placed, not now
// (retry when the cluster changes, with the reason), or never (infeasible,
// with a reason the user can act on).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/job.h"
#include "sched/binder.h"
#include "sched/extension_points.h"

namespace tessera::sched {

enum class Verdict { kPlaced, kNotNow, kNever };
std::string_view ToString(Verdict verdict);

enum class WaitReason {
  kNone,
  kCapacity,          // not enough free resources that satisfy the gang's constraints
  kReservation,       // would delay the reserved head-of-line gang
  kQueueLimit,        // a queue on its path is at its limit (detail: queue)
  kUserLimit,         // its user holds what a queue on its path allows one user (detail: queue)
  kOverGuarantee,     // non-preemptible job beyond a guarantee (detail: queue)
  kDependency,        // waits for another job (detail: job)
  kDependencyFailed,  // never: a job it depends on did not end as required (detail: job)
  kSingleton,         // a singleton waits for an earlier job of its name and user (detail: job)
  kBackoff,           // a restart held back by spec.restart.backoff (detail: seconds left)
  kArrayLimit,        // an array job has as many elements active as its limit allows (detail: the limit)
  kInfeasible,        // never: see the job's never_reason
};

std::string_view ToString(WaitReason reason);  // "capacity", "queue-limit", ...

struct Outcome {
  // The job the stream offered; for an array job, each placement started one
  // of its elements (the binder hears of the element).
  model::JobId job;
  Verdict verdict = Verdict::kNotNow;
  WaitReason reason = WaitReason::kNone;
  std::int32_t detail = -1;
  bool backfilled = false;  // placed ahead of a blocked gang without delaying it
  bool preempted_for = false;  // placed after evicting others
};

struct Eviction {
  model::JobId victim;
  model::JobId preemptor;
  EvictReason reason;
};

struct CycleResult {
  std::vector<Outcome> outcomes;
  std::vector<Eviction> evictions;
  std::optional<Reservation> reservation;
  std::int64_t placed = 0;
};

}  // namespace tessera::sched
