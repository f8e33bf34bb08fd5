#include "simkit/comparison.h"

#include <charconv>
#include <cmath>

namespace tessera::simkit {
namespace {

using nlohmann::json;

std::string Known(const json& figures) {
  std::string names;
  for (const auto& [key, value] : figures.items()) {
    if (value.is_number()) names += (names.empty() ? "" : ", ") + key;
  }
  return names;
}

}  // namespace

Result<Threshold> ParseThreshold(std::string_view text) {
  Threshold t;
  t.text = std::string(text);
  const std::size_t op = text.find_first_of("<>");
  if (op == std::string_view::npos || op == 0) {
    return InvalidArgument("'" + t.text + "': expected METRIC>BOUND or METRIC<BOUND, e.g. 'avg_wait_s>+10%'");
  }
  t.metric = std::string(text.substr(0, op));
  const bool or_equal = op + 1 < text.size() && text[op + 1] == '=';
  t.op = std::string(text.substr(op, or_equal ? 2 : 1));
  std::string_view bound = text.substr(op + t.op.size());
  if (!bound.empty() && (bound.front() == '+' || bound.front() == '-')) t.bound = Threshold::Bound::kDelta;
  if (bound.ends_with('%')) {
    if (t.bound != Threshold::Bound::kDelta) return InvalidArgument("'" + t.text + "': a percentage is a change: write +10% or -10%");
    t.bound = Threshold::Bound::kRelative;
    bound.remove_suffix(1);
  }
  const std::string_view digits = t.bound == Threshold::Bound::kAbsolute || bound.front() == '-' ? bound : bound.substr(1);
  const char* end = digits.data() + digits.size();
  const auto [parsed, error] = std::from_chars(digits.data(), end, t.value);
  if (digits.empty() || error != std::errc() || parsed != end || !std::isfinite(t.value)) {
    return InvalidArgument("'" + t.text + "': the bound '" + std::string(text.substr(op + t.op.size())) +
                           "' is not a number, a change (+600, -5) or a percentage (+10%)");
  }
  if (t.bound == Threshold::Bound::kRelative) t.value /= 100;
  return t;
}

Result<double> MetricValue(const json& summary, std::string_view metric) {
  const json* figures = &summary;
  std::string_view name = metric;
  if (metric.starts_with("queues.")) {
    const std::size_t dot = metric.rfind('.');
    const std::string queue(metric.substr(7, dot - 7));
    if (dot <= 7 || !summary.contains("queues") || !summary["queues"].contains(queue)) {
      return InvalidArgument("'" + std::string(metric) + "': no queue '" + queue + "' ran jobs in the replay");
    }
    figures = &summary["queues"][queue];
    name = metric.substr(dot + 1);
  }
  const auto it = figures->find(name);
  if (it == figures->end() || !it->is_number()) {
    return InvalidArgument("'" + std::string(metric) + "': no such figure; there are " + Known(*figures) +
                           (figures == &summary ? ", and queues.PATH.FIGURE" : ""));
  }
  return it->get<double>();
}

Result<std::vector<Breach>> CheckThresholds(const std::vector<Threshold>& thresholds, const json& running, const json& proposed) {
  std::vector<Breach> breaches;
  for (const Threshold& t : thresholds) {
    Result<double> before = MetricValue(running, t.metric);
    if (!before.ok()) return before.status();
    Result<double> after = MetricValue(proposed, t.metric);
    if (!after.ok()) return after.status();
    double bound = t.value;
    if (t.bound == Threshold::Bound::kDelta) bound = *before + t.value;
    if (t.bound == Threshold::Bound::kRelative) bound = *before * (1 + t.value);
    const bool breached = t.op == ">"    ? *after > bound
                          : t.op == ">=" ? *after >= bound
                          : t.op == "<"  ? *after < bound
                                         : *after <= bound;
    if (breached) breaches.push_back({t.text, *before, *after, bound});
  }
  return breaches;
}

}  // namespace tessera::simkit
