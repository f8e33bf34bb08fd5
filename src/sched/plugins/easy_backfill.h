// Reservation for EASY backfill (Lifka, 1995; Slurm's backfill scheduler in
// its simplest form), bounded to one gang.
//
// Assumptions: running jobs end by their walltime estimate (the configured
// default when they gave none); a job that overran its estimate is expected
// to end now.
// Algorithm: release the running jobs in order of expected end, in the live
// state through the cycle's Statement, rolled back afterwards, and after each
// release try to place the blocked head-of-line gang. The first release
// after which it fits gives the reservation: its start time (the "shadow
// time") and the nodes the gang would get. Backfill then admits a later job
// only if it ends before that start or stays off those nodes.
// Bounded: exactly one gang holds a reservation at any time, and it holds
// only the nodes of one concrete placement, never whole pools. So two big
// gangs can never each hold part of what the other needs (the deadlock of
// per-pod schedulers), and the reservation is checked every cycle, so it
// never outlives the capacity it was based on.
// Reuse: a cycle keeps the last reservation while no running job has given
// back resources since (a fresh one could start earlier: with loose walltime
// estimates, keeping a stale start would let backfill hold the gang back for
// hours) and it still holds: the same head, its start still ahead, its nodes
// schedulable and its GPUs healthy, and every running job that would still
// run at the start kept off the GPUs the gang takes, leaving it the CPU and
// memory it needs there. Jobs that only started since (backfilled around it,
// or placed ahead of it elsewhere) do not change the plan, so the cycles that
// follow submissions skip the computation.
// Cost: at most 128 placement attempts at consecutive releases, then only at
// every doubling of the release count. Past the cap the computed start can be
// later than the true one, which lets a few more jobs backfill; the cap is
// only reached when over a hundred releases are each enough by GPU count yet
// none gives the gang its topology.
#pragma once

#include <vector>

#include "model/placement.h"
#include "sched/extension_points.h"

namespace tessera::sched {

class EasyBackfill final : public ReservationPolicy {
 public:
  std::optional<Reservation> Reserve(Session& session, model::JobId head) override;

 private:
  std::optional<Reservation> Compute(Session& session, model::JobId head);
  bool StillHolds(const Session& session, model::JobId head) const;

  std::optional<Reservation> last_;
  std::vector<model::TaskPlacement> placement_;  // where last_'s gang goes at its start
  std::uint64_t releases_ = 0;                   // SchedulerState::releases() when last_ was computed
};

}  // namespace tessera::sched
