// gittins: the Gittins index, learned online (docs/scheduling.md, "Job
// order"). For a job that has run for time a, with the run times of the
// finished jobs of its queue and GPU count as the distribution D of its own,
// the index is the best rate of completions per second of service any
// further quantum can buy:
//
//   G(a) = max over d > 0 of  P(D <= a + d | D > a) / E[min(D, a + d) - a | D > a]
//
// Serving the highest index first minimises mean completion time among
// policies that do not know durations (Gittins; Aalto, Ayesta and
// Righter), and it is what LAS becomes when the distribution is known:
// young jobs of classes that usually finish soon go first, a job that has
// outlived most of its class's runs sinks. The rank is 1/G, the expected
// service per completion, in seconds. (Weighting it by the job's GPUs, so
// that wide gangs pay for the cluster they hold, was measured worse on
// Philly: docs/evaluation.md.)
//
// Reads only history (sched/run_time_history.h): until a class has
// finished enough jobs, a wider class stands in; before anything finished,
// every job ranks the same and the order is FIFO.
#pragma once

#include <array>
#include <cstdint>
#include <unordered_map>

#include "sched/extension_points.h"

namespace tessera::sched {

// gittins's arguments (pluginArgs.gittins).
struct GittinsArgs {
  // A waiting job evicts a running one (with preemptByJobOrder) only for an
  // index this many times higher: an eviction costs a restart, and ranks
  // learned from history are estimates.
  double displace_factor = 2.0;
};

class GittinsOrder final : public JobOrder {
 public:
  explicit GittinsOrder(GittinsArgs args) : args_(args) {}
  double Rank(const model::Job& job, Time now) const override;
  bool Displaces(const model::Job& a, const model::Job& b, Time now) const override;
  void Learn(const RunTimeHistory& history) override { history_ = &history; }

  // 1/G(a) for a distribution, a in seconds run; exposed for the tests.
  static double InverseIndex(const RunTimeDistribution& d, double attained);

 private:
  using Table = std::array<double, RunTimeDistribution::kBins>;  // 1/G at each bin's start
  const Table& TableFor(const RunTimeDistribution& d) const;

  GittinsArgs args_;
  const RunTimeHistory* history_ = nullptr;
  mutable std::unordered_map<std::uint64_t, Table> tables_;  // by RunTimeDistribution::stamp()
};

}  // namespace tessera::sched
