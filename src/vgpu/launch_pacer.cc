#include "vgpu/launch_pacer.h"

#include <algorithm>

namespace tessera::vgpu {

std::int64_t LaunchPacer::Admit(double cost, std::int64_t now_ns) {
  cost_since_sample_ += cost;
  if (!limited()) return 0;
  const std::int64_t start = std::max(next_free_ns_, now_ns - kCreditNs);
  next_free_ns_ = start + static_cast<std::int64_t>(cost / rate_ * 1e9);
  if (start <= now_ns) return 0;
  waited_since_sample_ = true;
  return start - now_ns;
}

void LaunchPacer::OnSample(double utilization, std::int64_t now_ns) {
  const std::int64_t elapsed = last_sample_ns_ < 0 ? 0 : now_ns - last_sample_ns_;
  last_sample_ns_ = now_ns;
  if (elapsed > 0) {
    const double launched_rate = cost_since_sample_ / (static_cast<double>(elapsed) / 1e9);
    if (utilization > share_ * 1.02 && launched_rate > 0) {
      const double target = launched_rate * share_ / utilization;
      rate_ = limited() ? (rate_ + target) / 2 : target;
    } else if (utilization < share_ * 0.98 && waited_since_sample_) {
      const double factor = std::min(2.0, share_ / std::max(utilization, 1.0));
      rate_ *= (1 + factor) / 2;
    }
  }
  cost_since_sample_ = 0;
  waited_since_sample_ = false;
}

}  // namespace tessera::vgpu
