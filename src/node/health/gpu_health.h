// The agent's judgement of its GPUs' faults (providers report, this decides):
// which Xid and ECC events take a GPU out of service, and when it returns.
//
//   class        what happens                                           Xids
//   ignore       counted in metrics only                                 ECC single-bit
//   application  the job's own fault: its task fails as it will; the     13, 31, 43, 45
//                GPU stays in service
//   reset        the GPU leaves service: the server requeues the runs    48, 63, 74, 92, 94, 95,
//                on it and places nothing new there; it returns when a    119, 120, ECC double-bit
//                health check passes, at the earliest `recheck_after`
//                later
//   hardware     as reset, but no health check brings it back: it stays   64, 79
//                out until the agent restarts (after a repair)
//   unknown      an Xid not in this table: reported, the GPU stays in      the rest
//                service
//
// A GPU that leaves service for `reset` faults `flaps_to_hardware` times
// within `flap_window` is treated as `hardware`: a GPU that keeps failing
// should not keep getting work. docs/fault-tolerance.md has the table with
// NVIDIA's meaning of each Xid.
#pragma once

#include <deque>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "node/gpu/gpu_provider.h"

namespace tessera::node {

enum class FaultClass { kIgnore, kApplication, kReset, kHardware, kUnknown };
std::string_view FaultClassName(FaultClass c);  // "ignore", "application", "reset", "hardware", "unknown"
FaultClass ClassifyFault(const GpuFault& fault);

struct GpuHealthOptions {
  Seconds recheck_after = 60;   // a reset-class GPU's first health check, and the gap between checks
  int flaps_to_hardware = 3;    // reset-class departures within the window that make it hardware-class
  Seconds flap_window = 3600;
};

// Why one GPU is out of service.
struct GpuOutage {
  FaultClass fault_class = FaultClass::kReset;
  std::string reason;       // "Xid 79: GPU has fallen off the bus (hardware: out until the agent restarts)"
  Time since = 0;
  Time next_check = 0;      // kNever for hardware-class
  int failed_checks = 0;
};

class GpuHealth {
 public:
  explicit GpuHealth(GpuHealthOptions options = {}) : options_(options) {}

  // Takes one fault at `now`; returns its class (for the report's events).
  FaultClass Observe(const GpuFault& fault, Time now);
  // The out-of-service GPUs whose health check is due at `now`.
  std::vector<int> DueForCheck(Time now) const;
  // The check's result: a passing check returns the GPU to service.
  void RecordCheck(int index, const Status& result, Time now);
  const std::map<int, GpuOutage>& outages() const { return outages_; }

 private:
  GpuHealthOptions options_;
  std::map<int, GpuOutage> outages_;
  std::map<int, std::deque<Time>> departures_;  // reset-class departures per GPU, within the window
};

}  // namespace tessera::node
