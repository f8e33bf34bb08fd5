// The shape shared by reclaim and preempt: walk the jobs that were left
// waiting this cycle, in stream order, and for each one that qualifies try
// an eviction set, up to the configured number of searches per cycle.
// Qualifies() must be cheap: with 100,000 waiting jobs it is the filter that
// keeps victim searches (each a scan of the running jobs) rare. A gang shape
// whose search failed is not searched again for the same queue and priority.
#pragma once

#include "sched/actions/action.h"
#include "sched/actions/victim_search.h"

namespace tessera::sched {

class PreemptiveAction : public Action {
 public:
  void Run(Session& session) final;

 protected:
  virtual EvictReason reason() const = 0;
  // Precomputes what Qualifies() reads, once per cycle.
  virtual void Prepare(const Session& session) = 0;
  // May this waiting job look for victims at all?
  virtual bool Qualifies(const Session& session, const model::Job& job, const Outcome& outcome) const = 0;
  virtual bool MayEvict(const Session& session, const model::Job& preemptor, const model::Job& victim) const = 0;
};

}  // namespace tessera::sched
