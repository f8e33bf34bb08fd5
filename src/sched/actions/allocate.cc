// allocate: takes pending jobs in stream order and places each that fits the
// free capacity. It stops at the first gang that does not fit when a
// reservation policy is configured: from there on, backfill decides, so that
// later, smaller jobs cannot starve that gang.
#include "sched/actions/action.h"
#include "sched/actions/admit.h"

namespace tessera::sched {
namespace {

class Allocate final : public Action {
 public:
  void Run(Session& session) override {
    const bool reserve = session.plugins().reservation != nullptr;
    while (const auto id = session.NextPending()) {
      if (!AdmitOrRecord(session, *id)) continue;
      switch (session.TryPlace(*id)) {
        case PlaceVerdict::Kind::kFits:
          session.Record(*id, Verdict::kPlaced, WaitReason::kNone);
          continue;
        case PlaceVerdict::Kind::kNever:  // holds nothing back: nobody reserves for a job that can never run
          session.Record(*id, Verdict::kNever, WaitReason::kInfeasible);
          continue;
        case PlaceVerdict::Kind::kNotNow:
          break;
      }
      session.Record(*id, Verdict::kNotNow, WaitReason::kCapacity);
      if (reserve) {
        session.set_head(*id);
        return;
      }
    }
  }
};

}  // namespace

std::unique_ptr<Action> MakeAllocateAction() { return std::make_unique<Allocate>(); }

}  // namespace tessera::sched
