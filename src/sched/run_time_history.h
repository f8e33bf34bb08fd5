// What the jobs that finished ran for, learned as they end: the evidence a
// policy may use to predict how long a job still runs (a real scheduler's
// knowledge, never the simulator's oracle durations). Each run time counts
// under its queue and GPU count, and under its queue and the whole cluster,
// so a class with little history falls back to a wider one.
//
// A distribution is a histogram of run times in logarithmic bins, so
// recording is constant time and a policy that derives something from it (a
// Gittins index table) does so in time that does not grow with the history.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <utility>

#include "base/clock.h"
#include "model/job.h"

namespace tessera::sched {

// Seconds a job has run, all its runs counted (the whole gang runs
// together, so a run's GPU-seconds over the job's GPUs, and the current run
// by the clock).
double TimeRun(const model::Job& job, Time now);

class RunTimeDistribution {
 public:
  // Bins of a factor 2^(1/4) from 1 s: bin 127 starts at about 4 years.
  static constexpr int kBins = 128;
  static int BinOf(double seconds);
  static double BinStart(int bin);
  // A bin's run time: the geometric middle of its edges.
  static double BinValue(int bin);

  void Add(Seconds ran);
  // The mean run time of the runs longer than `attained`: what a job that
  // has run that long is expected to run in all. Twice `attained` when no
  // run was longer (an estimate, for a job past everything seen).
  double MeanBeyond(double attained) const;
  std::uint32_t count(int bin) const { return counts_[static_cast<std::size_t>(bin)]; }
  std::uint64_t total() const { return total_; }
  // Names these contents: unique in the process to every Add, and shared by
  // a copy until one of them changes, so a table derived from a
  // distribution can be cached under its stamp across cycles and states.
  std::uint64_t stamp() const { return stamp_; }

 private:
  std::array<std::uint32_t, kBins> counts_{};
  std::uint64_t total_ = 0;
  std::uint64_t stamp_ = 0;
};

class RunTimeHistory {
 public:
  // A class needs this many run times before a policy relies on it alone.
  static constexpr std::uint64_t kMinSamples = 10;

  void Record(model::QueueId queue, std::int64_t gpu_milli, Seconds ran);
  // The narrowest distribution with kMinSamples run times: the queue's jobs
  // of this many GPUs, else the queue's, else the cluster's; else nullptr.
  const RunTimeDistribution* For(model::QueueId queue, std::int64_t gpu_milli) const;
  // The same history under other queue ids (the server's rebuilds number
  // queues anew); a queue mapped to an invalid id leaves only the
  // cluster-wide distribution, which keeps its runs.
  RunTimeHistory Renumbered(const std::function<model::QueueId(model::QueueId)>& queue_of) const;

 private:
  std::map<std::pair<std::int32_t, std::int64_t>, RunTimeDistribution> by_class_;  // (queue, GPUs); -1: any
};

}  // namespace tessera::sched
