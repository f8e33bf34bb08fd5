// Two simulations of one workload side by side (`tessera whatif`: the running
// configuration and a proposed one), and the thresholds a proposal must keep
// so that a configuration change can be checked in CI before it reaches a
// cluster.
//
// A threshold is METRIC OP BOUND, OP one of > >= < <=, and it is breached when
// the proposed run's metric stands in that relation to the bound:
//   avg_wait_s>+10%        the bound is the running configuration's value plus 10%
//   gpu_alloc_ratio<-2%    ... minus 2%
//   preemptions>+50        ... plus 50, in the metric's own unit
//   p99_jct_s>=86400       an absolute bound (no sign)
// METRIC is a figure of summary.json (avg_jct_s, avg_wait_s, gpu_alloc_ratio,
// preemptions, ...) or one queue's, as queues.PATH.FIGURE
// (queues.research/nlp.avg_wait_s).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace tessera::simkit {

struct Threshold {
  enum class Bound { kAbsolute, kDelta, kRelative };
  std::string text;  // as written, for messages
  std::string metric;
  std::string op;    // ">", ">=", "<", "<="
  Bound bound = Bound::kAbsolute;
  double value = 0;  // the bound, the change, or the change as a fraction (0.1 for +10%)
};

Result<Threshold> ParseThreshold(std::string_view text);

// A metric's value in a summary; an unknown metric is an error that lists
// the ones there are.
Result<double> MetricValue(const nlohmann::json& summary, std::string_view metric);

struct Breach {
  std::string threshold;
  double running = 0, proposed = 0, bound = 0;
};

// The thresholds the proposed summary breaches, in the order given.
Result<std::vector<Breach>> CheckThresholds(const std::vector<Threshold>& thresholds, const nlohmann::json& running,
                                            const nlohmann::json& proposed);

}  // namespace tessera::simkit
