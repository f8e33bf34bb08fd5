// Admission as the allocating actions use it: asks the quota plugin and, when
// it says no, records why.
#pragma once

#include "sched/session.h"

namespace tessera::sched {

// True when the job may take resources now; otherwise records the denial.
inline bool AdmitOrRecord(Session& session, model::JobId id) {
  const auto denial = session.plugins().admission->Admit(session.state().job(id), session.state().queues());
  if (!denial) return true;
  const WaitReason reason = denial->kind == Denial::Kind::kQueueLimit  ? WaitReason::kQueueLimit
                            : denial->kind == Denial::Kind::kUserLimit ? WaitReason::kUserLimit
                                                                       : WaitReason::kOverGuarantee;
  session.Record(id, Verdict::kNotNow, reason, denial->queue.value());
  return false;
}

}  // namespace tessera::sched
