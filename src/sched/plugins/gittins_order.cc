#include "sched/plugins/gittins_order.h"

#include <algorithm>
#include <limits>

namespace tessera::sched {
namespace {

constexpr double kUnknown = std::numeric_limits<double>::infinity();
// Tables kept across cycles; past this many, the cache starts again.
constexpr std::size_t kMaxTables = 4096;

}  // namespace

// 1/G(a) = min over k of E[min(D, v_k) - a | D > a] / P(D <= v_k | D > a),
// k running over the bins with runs longer than a.
double GittinsOrder::InverseIndex(const RunTimeDistribution& d, double attained) {
  double longer = 0;
  for (int i = RunTimeDistribution::BinOf(attained); i < RunTimeDistribution::kBins; ++i) {
    if (RunTimeDistribution::BinValue(i) > attained) longer += d.count(i);
  }
  if (longer == 0) return kUnknown;
  double best = kUnknown, done = 0, served = 0;
  for (int k = RunTimeDistribution::BinOf(attained); k < RunTimeDistribution::kBins; ++k) {
    const double value = RunTimeDistribution::BinValue(k), c = d.count(k);
    if (c == 0 || value <= attained) continue;
    done += c;
    served += c * (value - attained);
    best = std::min(best, (served + (longer - done) * (value - attained)) / done);
  }
  return best;
}

// A job that has outlived every run of its class ranks behind all that have
// not, and sinks further the longer it runs.
const GittinsOrder::Table& GittinsOrder::TableFor(const RunTimeDistribution& d) const {
  const auto it = tables_.find(d.stamp());
  if (it != tables_.end()) return it->second;
  if (tables_.size() >= kMaxTables) tables_.clear();
  Table& table = tables_[d.stamp()];
  double last = 1;
  for (int j = 0; j < RunTimeDistribution::kBins; ++j) {
    const double start = RunTimeDistribution::BinStart(j), inverse = InverseIndex(d, start);
    table[static_cast<std::size_t>(j)] = inverse == kUnknown ? std::max(last, 2 * start) : inverse;
    last = table[static_cast<std::size_t>(j)];
  }
  return table;
}

double GittinsOrder::Rank(const model::Job& job, Time now) const {
  const RunTimeDistribution* d = history_ ? history_->For(job.queue, job.MinGpuMilli()) : nullptr;
  if (!d) return 0;
  return TableFor(*d)[static_cast<std::size_t>(RunTimeDistribution::BinOf(TimeRun(job, now)))];
}

bool GittinsOrder::Displaces(const model::Job& a, const model::Job& b, Time now) const {
  return Rank(a, now) * args_.displace_factor < Rank(b, now);
}

}  // namespace tessera::sched
