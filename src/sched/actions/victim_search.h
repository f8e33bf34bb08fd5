// Victim search, shared by reclaim and preempt: find the cheapest set of
// running jobs whose eviction lets a pending gang start, or nothing.
//
// Assumptions: the VictimCost plugin prices each eviction independently; the
// gang may only start where its topology constraint allows.
// Algorithm:
//   1. Candidates are the running jobs the caller's predicate accepts (never
//      a non-preemptible job, never one bound in this very cycle), cheapest first.
//   2. The search domain follows the gang: its node for a single task, its
//      required topology level for a constrained gang, else the whole cluster.
//      Domains are ranked by a lower bound: the cost of the cheapest
//      candidates that free enough GPUs there, counting what is free already.
//   3. In the best few domains, candidates are evicted cheapest first until
//      the gang fits (quota re-checked); the cheapest successful domain wins.
//   4. Victims that turn out unnecessary are given back, most expensive first.
//   5. Only if the gang then really fits are the evictions and its bind kept;
//      otherwise everything is rolled back: no job is ever evicted for a gang
//      that still would not fit.
#pragma once

#include <functional>

#include "sched/session.h"

namespace tessera::sched {

using VictimFilter = std::function<bool(const model::Job& victim)>;

enum class SearchResult {
  kPlaced,        // victims evicted through the session, preemptor bound
  kNoCandidates,  // no running job may be evicted for it (cheap to find out)
  kNoFit,         // candidates exist, but no affordable set makes the gang fit
};
SearchResult EvictAndPlace(Session& session, model::JobId preemptor, const VictimFilter& eligible, EvictReason reason);

}  // namespace tessera::sched
