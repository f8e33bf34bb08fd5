#include "simkit/packing.h"

#include <algorithm>
#include <map>
#include <numeric>

#include "base/random.h"
#include "sched/scheduler.h"

namespace tessera::simkit {
namespace {

// The pods' task classes (by GPU demand, with their mean CPU and memory) and
// their shares: what fgd expects to keep arriving.
std::vector<sched::TaskClass> TaskClasses(const Workload& pods) {
  struct Sums {
    double cpu = 0, memory = 0, count = 0;
  };
  std::map<std::int64_t, Sums> by_gpu;
  for (const WorkloadJob& pod : pods.jobs) {
    const model::TaskRequest& r = pod.job.groups.front().request;
    Sums& s = by_gpu[r.gpu_milli];
    s.cpu += static_cast<double>(r.cpu_milli);
    s.memory += static_cast<double>(r.memory);
    s.count += 1;
  }
  std::vector<sched::TaskClass> classes;
  for (const auto& [gpu, s] : by_gpu) {
    classes.push_back({gpu, static_cast<std::int64_t>(s.cpu / s.count), static_cast<std::int64_t>(s.memory / s.count), s.count});
  }
  return classes;
}

Result<PackingCurve> RunSeed(const std::vector<model::NodeSpec>& nodes, const Workload& pods, const PackingOptions& options,
                             const sched::SchedulerConfig& config, std::uint64_t seed) {
  auto cluster = model::Cluster::Build(nodes);
  if (!cluster.ok()) return cluster.status();
  const double capacity = static_cast<double>(cluster->capacity().gpu_milli);
  sched::SchedulerState state(std::move(*cluster), model::QueueTree::Default(static_cast<std::int64_t>(capacity)));
  sched::SchedulerConfig seeded = config;
  seeded.plugin_args.random.seed = seed;
  auto scheduler = sched::Scheduler::Create(seeded);
  if (!scheduler.ok()) return scheduler.status();

  Rng rng(seed);
  std::vector<std::size_t> order(pods.jobs.size());
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng.engine());
  PackingCurve curve;
  double arrived_gpu = 0;
  const double target = options.demand * capacity;
  const double step = target / std::max(1, options.curve_points);
  double next_point = 0;
  sched::NullBinder binder;
  for (std::size_t i = 0; i < order.size() || arrived_gpu < target; ++i) {
    const std::size_t pick = i < order.size() ? order[i] : static_cast<std::size_t>(rng.Uniform(0, static_cast<std::int64_t>(pods.jobs.size()) - 1));
    model::Job job = pods.jobs[pick].job;
    job.name += "#" + std::to_string(i);
    job.queue = state.queues().Find("default");
    const model::JobId id = state.Submit(std::move(job), static_cast<Time>(i));
    arrived_gpu += static_cast<double>(state.job(id).TotalRequest().gpu_milli);
    ++curve.arrived;
    scheduler->RunCycle(state, static_cast<Time>(i), binder);
    if (state.job(id).state != model::JobState::kRunning) {
      state.Finish(id, model::JobState::kCancelled, 0);  // fits nowhere: dropped
      ++curve.dropped;
    }
    const double allocated = static_cast<double>(state.cluster().allocated().gpu_milli) / capacity;
    if (arrived_gpu >= next_point) {
      curve.points.emplace_back(arrived_gpu / capacity, allocated);
      next_point += step;
    }
    curve.allocated = allocated;
  }
  return curve;
}

}  // namespace

Result<PackingResult> RunPacking(const std::vector<model::NodeSpec>& nodes, const Workload& pods, const PackingOptions& options) {
  if (pods.jobs.empty()) return InvalidArgument("the packing study needs pods");
  sched::SchedulerConfig config;
  config.actions = {"allocate"};
  config.reservation = "none";
  config.placement = options.placement;
  config.plugin_args.fgd.workload = TaskClasses(pods);
  PackingResult result;
  for (int s = 1; s <= options.seeds; ++s) {
    auto curve = RunSeed(nodes, pods, options, config, static_cast<std::uint64_t>(s));
    if (!curve.ok()) return curve.status();
    result.mean_allocated += curve->allocated / options.seeds;
    result.seeds.push_back(std::move(curve).value());
  }
  return result;
}

}  // namespace tessera::simkit
