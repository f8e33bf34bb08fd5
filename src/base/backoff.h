// Waits between retries that double up to a ceiling, each drawn at random
// between half and all of its step ("equal jitter"): after an outage,
// thousands of agents that failed together do not come back together.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "base/random.h"

namespace tessera {

class Backoff {
 public:
  Backoff(std::chrono::milliseconds first, std::chrono::milliseconds most, std::uint64_t seed)
      : first_(first), most_(most), step_(first), rng_(seed) {}

  // The wait after one more failure.
  std::chrono::milliseconds Next() {
    const std::int64_t step = step_.count();
    step_ = std::min(step_ * 2, most_);
    return std::chrono::milliseconds(step / 2 + rng_.Uniform(0, step - step / 2));
  }
  // A success: the next failure waits the shortest again.
  void Reset() { step_ = first_; }

 private:
  std::chrono::milliseconds first_, most_, step_;
  Rng rng_;
};

}  // namespace tessera
