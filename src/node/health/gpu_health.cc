#include "node/health/gpu_health.h"

#include <array>
#include <utility>

namespace tessera::node {

std::string_view FaultClassName(FaultClass c) {
  switch (c) {
    case FaultClass::kIgnore: return "ignore";
    case FaultClass::kApplication: return "application";
    case FaultClass::kReset: return "reset";
    case FaultClass::kHardware: return "hardware";
    case FaultClass::kUnknown: return "unknown";
  }
  return "unknown";
}

FaultClass ClassifyFault(const GpuFault& fault) {
  if (fault.kind == GpuFaultKind::kEccSingleBit) return FaultClass::kIgnore;
  if (fault.kind == GpuFaultKind::kEccDoubleBit) return FaultClass::kReset;
  static constexpr std::array<std::pair<std::int64_t, FaultClass>, 14> kXids = {{
      {13, FaultClass::kApplication}, {31, FaultClass::kApplication}, {43, FaultClass::kApplication},
      {45, FaultClass::kApplication}, {48, FaultClass::kReset},       {63, FaultClass::kReset},
      {64, FaultClass::kHardware},    {74, FaultClass::kReset},       {79, FaultClass::kHardware},
      {92, FaultClass::kReset},       {94, FaultClass::kReset},       {95, FaultClass::kReset},
      {119, FaultClass::kReset},      {120, FaultClass::kReset},
  }};
  for (const auto& [xid, c] : kXids) {
    if (xid == fault.code) return c;
  }
  return FaultClass::kUnknown;
}

FaultClass GpuHealth::Observe(const GpuFault& fault, Time now) {
  FaultClass c = ClassifyFault(fault);
  if (c != FaultClass::kReset && c != FaultClass::kHardware) return c;
  if (c == FaultClass::kReset) {
    std::deque<Time>& times = departures_[fault.index];
    times.push_back(now);
    while (!times.empty() && times.front() <= now - options_.flap_window) times.pop_front();
    if (static_cast<int>(times.size()) >= options_.flaps_to_hardware) c = FaultClass::kHardware;
  }
  const std::string detail = fault.detail.empty() ? FaultDetail(fault.kind, fault.code) : fault.detail;
  auto [it, fresh] = outages_.try_emplace(fault.index);
  GpuOutage& outage = it->second;
  // A hardware verdict is never softened by a later reset-class fault.
  if (!fresh && outage.fault_class == FaultClass::kHardware) return c;
  outage.fault_class = c;
  outage.since = now;
  outage.failed_checks = 0;
  if (c == FaultClass::kHardware) {
    const bool flapped = ClassifyFault(fault) == FaultClass::kReset;
    outage.reason = detail + (flapped ? " (hardware: " + std::to_string(options_.flaps_to_hardware) + " resets within " +
                                            std::to_string(options_.flap_window / 60) + " min; out until the agent restarts)"
                                      : " (hardware: out until the agent restarts)");
    outage.next_check = kNever;
  } else {
    outage.reason = detail + " (reset: back after a passing health check)";
    outage.next_check = now + options_.recheck_after;
  }
  return c;
}

std::vector<int> GpuHealth::DueForCheck(Time now) const {
  std::vector<int> due;
  for (const auto& [index, outage] : outages_) {
    if (outage.next_check <= now) due.push_back(index);
  }
  return due;
}

void GpuHealth::RecordCheck(int index, const Status& result, Time now) {
  auto it = outages_.find(index);
  if (it == outages_.end() || it->second.fault_class == FaultClass::kHardware) return;
  if (result.ok()) {
    outages_.erase(it);
    return;
  }
  ++it->second.failed_checks;
  it->second.next_check = now + options_.recheck_after;
}

}  // namespace tessera::node
