// vGPU memory bursts in the simulator, by the rules the node enforces
// (docs/gpu-sharing.md, "Oversubscription in controlled bursts"):
//   * a started vGPU fraction with a burst allowance (gpuMemoryBurst) borrows
//     what its GPU has free (not promised to any task, not borrowed by
//     another), up to its allowance, for as long as it runs;
//   * when the GPU's guaranteed memory and its bursts no longer fit (a new
//     tenant was placed), or a burst has lasted longer than the node's limit,
//     the burst ends: the job is asked with its checkpoint signal (a burst
//     needs one) and gives the memory back.
// The simulator assumes jobs honour the signal within their grace period;
// the node evicts one that does not, which is not modelled here.
#pragma once

#include <cstdint>
#include <vector>

#include "base/clock.h"
#include "sched/state.h"

namespace tessera::simkit {

struct BurstStats {
  double byte_seconds = 0;      // memory borrowed, integrated over time
  std::int64_t bursts = 0;      // bursts started
  std::int64_t given_back = 0;  // bursts ended by a checkpoint signal
};

class BurstModel {
 public:
  explicit BurstModel(Seconds max_burst) : max_burst_(max_burst) {}

  // A job started at `now` on its placements.
  void Start(const sched::SchedulerState& state, model::JobId job, Time now);
  // A job stopped running, for whatever reason: its bursts end.
  void Stop(model::JobId job, Time now);
  // Applies the rules at `now`: the bursts that must end are given back.
  void Enforce(const sched::SchedulerState& state, Time now);
  // When the oldest burst passes the node's limit; kNever without bursts.
  Time next_expiry() const;
  const BurstStats& stats() const { return stats_; }

 private:
  struct Burst {
    model::JobId job;
    model::GpuId gpu;
    std::int64_t bytes;
    Time since;
  };
  void Accrue(Time now);
  std::int64_t BorrowedOn(model::GpuId gpu) const;

  Seconds max_burst_;
  std::vector<Burst> bursts_;
  Time accrued_to_ = 0;
  BurstStats stats_;
};

}  // namespace tessera::simkit
