#include "auth/rate_limiter.h"

#include <algorithm>
#include <cmath>

namespace tessera::auth {

bool RateLimiter::Admit(const std::string& key, std::chrono::steady_clock::time_point now, std::int64_t* retry_after_s) {
  if (rate_ <= 0) return true;
  std::lock_guard lock(mu_);
  auto [it, fresh] = buckets_.try_emplace(key, Bucket{burst_, now});
  Bucket& b = it->second;
  if (!fresh) {
    const double elapsed = std::chrono::duration<double>(now - b.refilled).count();
    b.tokens = std::min(burst_, b.tokens + elapsed * rate_);
    b.refilled = now;
  }
  if (b.tokens >= 1) {
    b.tokens -= 1;
    return true;
  }
  *retry_after_s = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil((1 - b.tokens) / rate_)));
  return false;
}

}  // namespace tessera::auth
