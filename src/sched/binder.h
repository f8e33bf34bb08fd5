// The port through which scheduling decisions leave the core. Decisions are
// data: the server turns them into agent calls asynchronously ("assume, then
// bind"), the simulator into future events, tests into assertions.
//
// Ordering contract: within one commit, evictions come before the binds that
// depend on them; a binder must not start a preemptor's tasks before its
// victims' tasks are gone.
#pragma once

#include <string>
#include <vector>

#include "model/job.h"

namespace tessera::sched {

enum class EvictReason { kPreempt, kReclaim };
std::string_view ToString(EvictReason reason);

class Binder {
 public:
  virtual ~Binder() = default;
  virtual void Bind(const model::Job& job) = 0;  // job.placements says where
  virtual void Evict(const model::Job& victim, const model::Job& preemptor, EvictReason reason) = 0;
  // An array element came into being (model/job_array.h), pending, before
  // its bind is reported; its id is the one its array reserved for it. A
  // binder that keeps a copy of the state makes the same element there.
  virtual void Spawn(const model::Job& element) = 0;
};

// A binder that records nothing: for benchmarks and callers that read the state.
class NullBinder final : public Binder {
 public:
  void Bind(const model::Job&) override {}
  void Evict(const model::Job&, const model::Job&, EvictReason) override {}
  void Spawn(const model::Job&) override {}
};

}  // namespace tessera::sched
