// Time in Tessera's core: integral seconds on a clock the caller provides.
//
// The scheduling core never reads the wall clock. The server hands it a clock
// backed by the system time, the simulator a virtual one it advances between
// events; tests set it by hand. Seconds are precise enough for walltimes,
// checkpoints and fair-share decay, and keep arithmetic exact.
#pragma once

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

}  // namespace tessera
