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
// per-pod schedulers), and the reservation is recomputed every cycle, so it
// never outlives the capacity it was based on.
// Cost: at most 128 placement attempts at consecutive releases, then only at
// every doubling of the release count. Past the cap the computed start can be
// later than the true one, which lets a few more jobs backfill; the cap is
// only reached when over a hundred releases are each enough by GPU count yet
// none gives the gang its topology.
#pragma once

#include "sched/extension_points.h"

namespace tessera::sched {

class EasyBackfill final : public ReservationPolicy {
 public:
  std::optional<Reservation> Reserve(Session& session, model::JobId head) override;
};

}  // namespace tessera::sched
