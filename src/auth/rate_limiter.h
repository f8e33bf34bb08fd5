// Per-caller request rate limits: a token bucket per key (a token's id), of
// `burst` requests refilled at `rate` per second. Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

namespace tessera::auth {

class RateLimiter {
 public:
  // rate 0: no limit.
  RateLimiter(double rate, double burst) : rate_(rate), burst_(burst) {}
  // True when the request may go ahead; otherwise *retry_after_s says when
  // the next one will (whole seconds, at least 1).
  bool Admit(const std::string& key, std::chrono::steady_clock::time_point now, std::int64_t* retry_after_s);

 private:
  struct Bucket {
    double tokens = 0;
    std::chrono::steady_clock::time_point refilled;
  };
  double rate_, burst_;
  std::mutex mu_;
  std::unordered_map<std::string, Bucket> buckets_;
};

}  // namespace tessera::auth
