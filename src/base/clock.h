// Time in Tessera's core: integral seconds on a clock the caller provides.
//
// The scheduling core never reads the wall clock. The server hands it a clock
// backed by the system time, the simulator a virtual one it advances between
// events; tests set it by hand. Seconds are precise enough for walltimes,
// checkpoints and fair-share decay, and keep arithmetic exact.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>

namespace tessera {

using Seconds = std::int64_t;  // a duration
using Time = std::int64_t;     // seconds since the clock's epoch

inline constexpr Time kNever = std::numeric_limits<Time>::max();

class Clock {
 public:
  virtual ~Clock() = default;
  virtual Time Now() const = 0;
};

// A clock that moves only when told to: the simulator's and the tests'.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(Time start = 0) : now_(start) {}
  Time Now() const override { return now_; }
  void Set(Time t) { now_ = t; }
  void Advance(Seconds d) { now_ += d; }

 private:
  Time now_;
};

// Wall time in milliseconds since the Unix epoch: the control plane's clock
// (its records, events and timeouts carry such times). The server reads the
// system's; its tests hold a manual one and advance it instead of sleeping.
class WallClock {
 public:
  virtual ~WallClock() = default;
  virtual std::int64_t NowMs() const = 0;
};

class SystemWallClock final : public WallClock {
 public:
  std::int64_t NowMs() const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  }
};

// Read by the server's threads while a test advances it: atomic.
class ManualWallClock final : public WallClock {
 public:
  explicit ManualWallClock(std::int64_t start_ms) : now_ms_(start_ms) {}
  std::int64_t NowMs() const override { return now_ms_.load(); }
  void Advance(std::chrono::milliseconds d) { now_ms_ += d.count(); }

 private:
  std::atomic<std::int64_t> now_ms_;
};

}  // namespace tessera
