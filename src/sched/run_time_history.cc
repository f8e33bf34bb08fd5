#include "sched/run_time_history.h"

#include <algorithm>
#include <atomic>
#include <cmath>

namespace tessera::sched {
namespace {

constexpr double kBinsPerDoubling = 4;
constexpr std::int64_t kAny = -1;
std::atomic<std::uint64_t> next_stamp{1};

}  // namespace

double TimeRun(const model::Job& job, Time now) {
  const double gpus = static_cast<double>(job.MinGpuMilli()) / 1000.0;
  const double before = gpus > 0 ? job.attained_gpu_seconds / gpus : 0;
  return before + (job.state == model::JobState::kRunning ? static_cast<double>(now - job.start_time) : 0.0);
}

int RunTimeDistribution::BinOf(double seconds) {
  if (!(seconds >= 1)) return 0;
  return std::min(kBins - 1, static_cast<int>(std::log2(seconds) * kBinsPerDoubling));
}

double RunTimeDistribution::BinStart(int bin) { return bin == 0 ? 0 : std::exp2(bin / kBinsPerDoubling); }

double RunTimeDistribution::BinValue(int bin) { return std::exp2((bin + 0.5) / kBinsPerDoubling); }

void RunTimeDistribution::Add(Seconds ran) {
  ++counts_[static_cast<std::size_t>(BinOf(static_cast<double>(ran)))];
  ++total_;
  stamp_ = next_stamp.fetch_add(1, std::memory_order_relaxed);
}

double RunTimeDistribution::MeanBeyond(double attained) const {
  double count = 0, sum = 0;
  for (int i = BinOf(attained); i < kBins; ++i) {
    const double value = BinValue(i);
    if (value <= attained) continue;
    count += counts_[static_cast<std::size_t>(i)];
    sum += counts_[static_cast<std::size_t>(i)] * value;
  }
  return count > 0 ? sum / count : 2 * attained;
}

void RunTimeHistory::Record(model::QueueId queue, std::int64_t gpu_milli, Seconds ran) {
  const std::int32_t q = queue.valid() ? static_cast<std::int32_t>(queue.index()) : -1;
  by_class_[{q, gpu_milli}].Add(ran);
  by_class_[{q, kAny}].Add(ran);
  by_class_[{-1, kAny}].Add(ran);
}

RunTimeHistory RunTimeHistory::Renumbered(const std::function<model::QueueId(model::QueueId)>& queue_of) const {
  RunTimeHistory renumbered;
  for (const auto& [key, distribution] : by_class_) {
    if (key.first < 0) {
      renumbered.by_class_[key] = distribution;
      continue;
    }
    const model::QueueId queue = queue_of(model::QueueId(key.first));
    if (queue.valid()) renumbered.by_class_[{static_cast<std::int32_t>(queue.index()), key.second}] = distribution;
  }
  return renumbered;
}

const RunTimeDistribution* RunTimeHistory::For(model::QueueId queue, std::int64_t gpu_milli) const {
  const std::int32_t q = queue.valid() ? static_cast<std::int32_t>(queue.index()) : -1;
  for (const auto& key : {std::pair{q, gpu_milli}, std::pair{q, kAny}, std::pair{-1, kAny}}) {
    const auto it = by_class_.find(key);
    if (it != by_class_.end() && it->second.total() >= kMinSamples) return &it->second;
  }
  return nullptr;
}

}  // namespace tessera::sched
