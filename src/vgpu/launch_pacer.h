// Holds a task's kernel launches to its compute share of a GPU it shares.
//
// The GPU gives no per-process throttle, so the shim paces launches. Each
// launch costs its grid size in blocks (a proxy for work); the pacer admits
// cost at a rate and makes a launch wait when it runs ahead. The rate comes
// from feedback: every sample period the shim reports the utilization the
// task's processes achieved (NVML's per-process SM utilization); if it is
// above the share, the rate becomes the cost rate actually launched scaled
// by share / utilization (one step when cost is proportional to GPU time);
// if it is below the share while the pacer made launches wait, the rate rises
// by the same ratio, at most doubling. Changes are averaged with the old rate
// so that noisy samples do not make it oscillate.
//
// Until the first sample above the share the rate is unlimited: a task alone
// on an idle GPU runs at full speed. Not thread-safe; the shim serialises it.
#pragma once

#include <cstdint>
#include <limits>

namespace tessera::vgpu {

class LaunchPacer {
 public:
  explicit LaunchPacer(double share_percent) : share_(share_percent) {}

  // Nanoseconds the caller must wait before it launches `cost` at `now_ns`.
  std::int64_t Admit(double cost, std::int64_t now_ns);
  // The task's utilization (percent) over the time since the previous sample.
  void OnSample(double utilization_percent, std::int64_t now_ns);

  double rate() const { return rate_; }  // admitted cost per second; infinity: unlimited
  bool limited() const { return rate_ != kUnlimited; }

  static constexpr double kUnlimited = std::numeric_limits<double>::infinity();

 private:
  // How far ahead of the rate a burst of launches may run, so short bursts do
  // not wait at all.
  static constexpr std::int64_t kCreditNs = 2'000'000;

  double share_;
  double rate_ = kUnlimited;
  std::int64_t next_free_ns_ = 0;
  std::int64_t last_sample_ns_ = -1;
  double cost_since_sample_ = 0;
  bool waited_since_sample_ = false;
};

}  // namespace tessera::vgpu
