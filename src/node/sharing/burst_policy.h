// When a vGPU task bursting past its memory cap must give the memory back
// (docs/gpu-sharing.md, "Oversubscription in controlled bursts"):
//   * a guaranteed task is waiting for memory (the ledger records a reclaim), or
//   * the burst has lasted longer than the node allows.
// Then the task is asked with its checkpoint signal; if it is still past its
// cap when its grace period ends (or it declared no signal), it is evicted:
// stopped and requeued.
//
// Pure: the agent feeds it ledger snapshots and the time, and acts on what it
// answers; it remembers only when it asked each task.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "vgpu/memory_ledger.h"

namespace tessera::node {

struct BurstDecision {
  enum class Action { kAsk, kEvict };
  std::string task;  // the task's name in the ledger
  Action action = Action::kAsk;
  std::string reason;
};

// What a task agreed to when it was started.
struct CheckpointContract {
  bool has_signal = false;
  std::int64_t grace_ns = 0;
};

class BurstPolicy {
 public:
  explicit BurstPolicy(std::int64_t max_burst_ns) : max_burst_ns_(max_burst_ns) {}

  // `contract` answers for each task of the snapshot. `clear_reclaim` is set
  // when a reclaim is pending but no task bursts any more: whoever asked has
  // its memory or gave up, and new bursts should not stay blocked.
  std::vector<BurstDecision> Decide(const vgpu::LedgerSnapshot& ledger, std::int64_t now_ns,
                                    const std::function<CheckpointContract(const std::string&)>& contract,
                                    bool* clear_reclaim);

 private:
  std::int64_t max_burst_ns_;
  std::map<std::string, std::int64_t> asked_at_;  // task -> when it was asked to give memory back
};

}  // namespace tessera::node
