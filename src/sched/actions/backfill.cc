// backfill (EASY): once a gang is blocked, reserve for it the capacity it is
// expected to get first (the reservation policy computes where and when),
// then let later jobs run now only if they cannot delay it: either they are
// expected to end before the reservation starts, or they stay off the
// reserved nodes.
#include "sched/actions/action.h"
#include "sched/actions/admit.h"

namespace tessera::sched {
namespace {

class Backfill final : public Action {
 public:
  void Run(Session& session) override {
    if (!session.head() || !session.plugins().reservation) return;
    auto reservation = session.plugins().reservation->Reserve(session, *session.head());
    session.result().reservation = reservation;
    PlaceOptions around;
    if (reservation) around.excluded_nodes = &session.result().reservation->nodes;
    while (const auto id = session.NextPending()) {
      if (!AdmitOrRecord(session, *id)) continue;
      const model::Job& job = session.state().job(*id);
      // Without a reservation (the head cannot be placed even when every
      // estimate has run out) nothing can be delayed, so place freely.
      const bool ends_in_time = !reservation || session.now() + session.Walltime(job) <= reservation->start;
      const PlaceVerdict::Kind placed = session.TryPlace(*id, ends_in_time ? PlaceOptions{} : around);
      if (placed == PlaceVerdict::Kind::kFits) {
        session.Record(*id, Verdict::kPlaced, WaitReason::kNone);
        session.result().outcomes.back().backfilled = true;
      } else if (placed == PlaceVerdict::Kind::kNever) {
        session.Record(*id, Verdict::kNever, WaitReason::kInfeasible);
      } else if (!ends_in_time && session.Fits(*id) == PlaceVerdict::Kind::kFits) {
        session.Record(*id, Verdict::kNotNow, WaitReason::kReservation, reservation->job.value());
      } else {
        session.Record(*id, Verdict::kNotNow, WaitReason::kCapacity);
      }
    }
  }
};

}  // namespace

std::unique_ptr<Action> MakeBackfillAction() { return std::make_unique<Backfill>(); }

}  // namespace tessera::sched
