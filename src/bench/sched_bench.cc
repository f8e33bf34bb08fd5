#include "bench/sched_bench.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/random.h"
#include "bench/server_process.h"
#include "model/cluster_shape.h"
#include "sched/registry.h"
#include "sched/scheduler.h"
#include "simkit/synthetic_workload.h"

namespace tessera::bench {
namespace {

using Clock = std::chrono::steady_clock;

// The synthetic mix's high priority (simkit/synthetic_workload.cc).
constexpr std::int32_t kHighPriority = 100;

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0 : values[values.size() / 2];
}

double SecondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Four organisations of four teams, guarantees splitting the cluster evenly.
model::QueueTree BenchQueues(std::int64_t gpu_milli, std::vector<model::QueueId>& leaves) {
  std::vector<model::QueueSpec> specs;
  for (int org = 0; org < 4; ++org) {
    specs.push_back({"org" + std::to_string(org), gpu_milli / 4, model::kUnlimited, 1.0});
    for (int team = 0; team < 4; ++team) {
      specs.push_back({"org" + std::to_string(org) + "/team" + std::to_string(team), gpu_milli / 16, model::kUnlimited, 1.0});
    }
  }
  model::QueueTree tree = *model::QueueTree::Build(specs);
  for (const model::Queue& q : tree.queues()) {
    if (q.children.empty() && q.id != tree.root()) leaves.push_back(q.id);
  }
  return tree;
}

class Bench {
 public:
  explicit Bench(const SchedBenchOptions& options) : options_(options) {
    model::ClusterShape shape;
    shape.nodes = static_cast<std::int32_t>(options.gpus / options.gpus_per_node);
    shape.gpus_per_node = options.gpus_per_node;
    shape.nodes_per_leaf = options.nodes_per_leaf;
    shape.leaves_per_spine = options.leaves_per_spine;
    nodes_ = model::GenerateNodes(shape);
  }

  sched::SchedulerState FreshState() {
    model::Cluster cluster = *model::Cluster::Build(nodes_);
    leaves_.clear();
    model::QueueTree queues = BenchQueues(cluster.capacity().gpu_milli, leaves_);
    return sched::SchedulerState(std::move(cluster), std::move(queues));
  }

  void SubmitMix(sched::SchedulerState& state, std::size_t count, std::uint64_t seed, Time now) {
    for (auto& g : simkit::GenerateWorkload(count, leaves_, simkit::SyntheticMix{}, seed)) state.Submit(std::move(g.job), now);
  }

  // A one-GPU job in the i-th team queue (modulo their number).
  model::Job OneGpuJob(std::string name, std::int64_t i) const {
    model::Job job;
    job.name = std::move(name);
    job.queue = leaves_[static_cast<std::size_t>(i) % leaves_.size()];
    model::TaskGroup group;
    group.name = "main";
    group.request.gpu_milli = 1000;
    job.groups.push_back(group);
    return job;
  }

  double SinglePlacementsPerSecond() {
    sched::SchedulerState state = FreshState();
    const std::int64_t gpus = state.cluster().capacity().gpu_milli / 1000;
    for (std::int64_t i = 0; i < gpus; ++i) state.Submit(OneGpuJob("single-" + std::to_string(i), i), 0);
    sched::SchedulerConfig config;
    config.actions = {"allocate"};
    config.reservation = "none";
    auto scheduler = sched::Scheduler::Create(config);
    sched::NullBinder binder;
    const auto start = Clock::now();
    const sched::CycleResult result = scheduler->RunCycle(state, 0, binder);
    const double seconds = SecondsSince(start);
    return static_cast<double>(result.placed) / seconds;
  }

  // What the pending jobs are: the mix alone, or the mix with
  // array_elements of its jobs replaced by one array or by separate jobs.
  enum class Pending { kMix, kMixAndArray, kMixAndSeparateJobs };

  struct CycleFigures {
    double first_ms = 0, steady_ms = 0;
    std::int64_t placed = 0;                         // by the first cycle
    double fill = 0;                                 // allocated GPU share after it
    std::map<std::string, std::int64_t> waiting;     // after it, by reason
    std::int64_t jobs = 0;                           // in the table after both cycles
  };

  // The first cycle over the pending jobs on the empty cluster, then the
  // steady-state one. One state at a time: peak RSS is one state's.
  CycleFigures Cycle(Pending pending) {
    sched::SchedulerState state = FreshState();
    // The array (or its separate twins) in the first team's queue, at the
    // mix's high priority (the mix's high-priority jobs alone fill the
    // cluster): its elements take that queue's fair share of the empty
    // cluster in the first cycle, and most of them wait in the next.
    const std::int64_t replaced = pending == Pending::kMix ? 0 : options_.array_elements;
    if (pending == Pending::kMixAndArray) {
      model::Job array = OneGpuJob("array", 0);
      array.priority = kHighPriority;
      array.array = std::make_shared<const model::JobArray>(*model::ParseArrayRange("0-" + std::to_string(replaced - 1)));
      array.is_array_parent = true;
      state.Submit(std::move(array), 0);
    } else if (pending == Pending::kMixAndSeparateJobs) {
      for (std::int64_t i = 0; i < replaced; ++i) {
        model::Job job = OneGpuJob("separate-" + std::to_string(i), 0);
        job.priority = kHighPriority;
        state.Submit(std::move(job), 0);
      }
    }
    SubmitMix(state, static_cast<std::size_t>(options_.pending - replaced), options_.seed, 0);
    auto scheduler = sched::Scheduler::Create(sched::SchedulerConfig{});
    sched::NullBinder binder;
    CycleFigures figures;
    auto start = Clock::now();
    const sched::CycleResult first = scheduler->RunCycle(state, 0, binder);
    figures.first_ms = SecondsSince(start) * 1e3;
    figures.placed = first.placed;
    figures.fill = static_cast<double>(state.cluster().allocated().gpu_milli) / static_cast<double>(state.cluster().capacity().gpu_milli);
    for (const sched::Outcome& o : first.outcomes) {
      if (state.job(o.job).state == model::JobState::kPending) ++figures.waiting[std::string(sched::ToString(o.reason))];
    }
    start = Clock::now();
    scheduler->RunCycle(state, 60, binder);
    figures.steady_ms = SecondsSince(start) * 1e3;
    figures.jobs = static_cast<std::int64_t>(state.jobs().size());
    return figures;
  }

  // Gang decisions on a cluster held near `fill`.
  void GangDecisions(std::vector<double>& micros, double& fit_ratio, double& fill) {
    sched::SchedulerState state = FreshState();
    sched::SchedulerConfig config;
    config.actions = {"allocate"};
    config.reservation = "none";
    auto scheduler = sched::Scheduler::Create(config);
    auto plugins = sched::BuildPlugins(config);
    sched::NullBinder binder;
    const double capacity = static_cast<double>(state.cluster().capacity().gpu_milli);
    std::uint64_t seed = options_.seed;
    while (static_cast<double>(state.cluster().allocated().gpu_milli) < options_.fill * capacity) {
      SubmitMix(state, 512, ++seed, 0);
      scheduler->RunCycle(state, 0, binder);
      for (model::JobId id : std::vector<model::JobId>(state.jobs().pending())) state.Finish(id, model::JobState::kCancelled, 0);
    }
    model::Job gang;
    gang.name = "gang-64";
    gang.queue = leaves_.front();
    model::TaskGroup group;
    group.name = "worker";
    group.replicas = group.min_replicas = 8;
    group.request.gpu_milli = 8000;
    gang.groups.push_back(group);
    gang.topology = {model::TopologyLevel::kLeaf, true};

    Rng rng(options_.seed);
    std::vector<model::TaskPlacement> out;
    int fits = 0;
    double fill_sum = 0;
    for (int sample = 0; sample < options_.gang_samples; ++sample) {
      out.clear();
      const auto start = Clock::now();
      const bool placed = plugins->placement->Place(gang, state.cluster(), sched::PlaceOptions{}, out).fits();
      micros.push_back(SecondsSince(start) * 1e6);
      fits += placed ? 1 : 0;
      fill_sum += static_cast<double>(state.cluster().allocated().gpu_milli) / capacity;
      // Perturb: one job ends, new work arrives until the cluster is back at `fill`.
      const auto& running = state.jobs().running();
      state.Finish(running[static_cast<std::size_t>(rng.Uniform(0, static_cast<std::int64_t>(running.size()) - 1))],
                   model::JobState::kSucceeded, 0);
      for (int tries = 0; tries < 16 && static_cast<double>(state.cluster().allocated().gpu_milli) < options_.fill * capacity; ++tries) {
        SubmitMix(state, 1, ++seed, sample);
        scheduler->RunCycle(state, sample, binder);
        for (model::JobId id : std::vector<model::JobId>(state.jobs().pending())) state.Finish(id, model::JobState::kCancelled, 0);
      }
    }
    fit_ratio = static_cast<double>(fits) / options_.gang_samples;
    fill = fill_sum / options_.gang_samples;
  }

 private:
  const SchedBenchOptions& options_;
  std::vector<model::NodeSpec> nodes_;
  std::vector<model::QueueId> leaves_;
};

}  // namespace

SchedBenchResult RunSchedBench(const SchedBenchOptions& options) {
  Bench bench(options);
  SchedBenchResult result;
  result.nodes = options.gpus / options.gpus_per_node;
  result.gpus = result.nodes * options.gpus_per_node;
  result.pending = options.pending;
  result.array_elements = options.array_elements;
  std::vector<double> single, first, steady, array_first, array_steady, separate_first, separate_steady;
  for (int run = 0; run < options.runs; ++run) {
    single.push_back(bench.SinglePlacementsPerSecond());
    const Bench::CycleFigures mix = bench.Cycle(Bench::Pending::kMix);
    first.push_back(mix.first_ms);
    steady.push_back(mix.steady_ms);
    result.cycle_placed = mix.placed;
    result.cycle_fill = mix.fill;
    result.waiting_by_reason = mix.waiting;
    if (options.array_elements <= 0) continue;
    const Bench::CycleFigures array = bench.Cycle(Bench::Pending::kMixAndArray);
    array_first.push_back(array.first_ms);
    array_steady.push_back(array.steady_ms);
    result.array_cycle_placed = array.placed;
    // The jobs past the mix's and the array job itself are its elements: the
    // ones the two cycles started, not the 10,000 it stands for.
    result.array_elements_made = array.jobs - (options.pending - options.array_elements) - 1;
    const Bench::CycleFigures jobs = bench.Cycle(Bench::Pending::kMixAndSeparateJobs);
    separate_first.push_back(jobs.first_ms);
    separate_steady.push_back(jobs.steady_ms);
  }
  std::vector<double> micros;
  double fit_ratio = 0, filled = 0;
  bench.GangDecisions(micros, fit_ratio, filled);
  result.single_gpu_placements_per_s = Median(single);
  result.cycle_ms = Median(first);
  result.steady_cycle_ms = Median(steady);
  result.array_cycle_ms = Median(array_first);
  result.array_steady_cycle_ms = Median(array_steady);
  result.separate_cycle_ms = Median(separate_first);
  result.separate_steady_cycle_ms = Median(separate_steady);
  result.gang_decision_p50_us = Percentile(micros, 0.50);
  result.gang_decision_p99_us = Percentile(micros, 0.99);
  result.gang_fit_ratio = fit_ratio;
  result.fill_achieved = filled;
  result.peak_rss_mb = PeakRssMb(getpid());
  return result;
}

namespace {

double Ratio(double x, double base) { return base > 0 ? x / base : 0; }

// The array's cycles beside the mix's, and beside as many separate jobs.
std::string ArrayText(const SchedBenchResult& r) {
  if (r.array_elements <= 0) return "";
  char text[768];
  std::snprintf(text, sizeof text,
                "with a %lld-element array among the pending (one-GPU elements; the mix that many jobs fewer):\n"
                "  full cycle            : %.1f ms   (x%.2f the mix alone; %lld jobs started, %lld elements made)\n"
                "  steady-state cycle    : %.1f ms   (x%.2f the mix alone)\n"
                "  as separate jobs      : %.1f ms full (x%.2f), %.1f ms steady (x%.2f)\n",
                static_cast<long long>(r.array_elements), r.array_cycle_ms, Ratio(r.array_cycle_ms, r.cycle_ms),
                static_cast<long long>(r.array_cycle_placed), static_cast<long long>(r.array_elements_made), r.array_steady_cycle_ms,
                Ratio(r.array_steady_cycle_ms, r.steady_cycle_ms), r.separate_cycle_ms, Ratio(r.separate_cycle_ms, r.cycle_ms),
                r.separate_steady_cycle_ms, Ratio(r.separate_steady_cycle_ms, r.steady_cycle_ms));
  return text;
}

}  // namespace

std::string ToJson(const SchedBenchResult& r) {
  nlohmann::json j = {
      {"nodes", r.nodes},
      {"gpus", r.gpus},
      {"pending", r.pending},
      {"single_gpu_placements_per_s", r.single_gpu_placements_per_s},
      {"gang_decision_p50_us", r.gang_decision_p50_us},
      {"gang_decision_p99_us", r.gang_decision_p99_us},
      {"gang_fit_ratio", r.gang_fit_ratio},
      {"fill_during_gang_samples", r.fill_achieved},
      {"cycle_ms", r.cycle_ms},
      {"cycle_placed_jobs", r.cycle_placed},
      {"cycle_fill", r.cycle_fill},
      {"waiting_by_reason", r.waiting_by_reason},
      {"steady_cycle_ms", r.steady_cycle_ms},
      {"array_elements", r.array_elements},
      {"array_cycle_ms", r.array_cycle_ms},
      {"array_steady_cycle_ms", r.array_steady_cycle_ms},
      {"array_cycle_placed_jobs", r.array_cycle_placed},
      {"array_elements_made", r.array_elements_made},
      {"array_cycle_ratio", Ratio(r.array_cycle_ms, r.cycle_ms)},
      {"array_steady_cycle_ratio", Ratio(r.array_steady_cycle_ms, r.steady_cycle_ms)},
      {"separate_jobs_cycle_ms", r.separate_cycle_ms},
      {"separate_jobs_steady_cycle_ms", r.separate_steady_cycle_ms},
      {"peak_rss_mb", r.peak_rss_mb},
  };
  return j.dump(2);
}

std::string ToText(const SchedBenchResult& r) {
  char text[2048];
  std::snprintf(text, sizeof text,
                "cluster: %lld nodes, %lld GPUs; %lld pending jobs (Philly-like mix)\n"
                "single-GPU placements/s : %.0f\n"
                "64-GPU leaf gang (p50)  : %.1f us   (p99 %.1f us; fit in %.0f%% of samples at %.0f%% full)\n"
                "full cycle              : %.1f ms   (%lld jobs started, cluster %.0f%% allocated)\n"
                "steady-state cycle      : %.1f ms\n"
                "%s"
                "peak RSS                : %.0f MB\n",
                static_cast<long long>(r.nodes), static_cast<long long>(r.gpus), static_cast<long long>(r.pending),
                r.single_gpu_placements_per_s, r.gang_decision_p50_us, r.gang_decision_p99_us, 100 * r.gang_fit_ratio,
                100 * r.fill_achieved, r.cycle_ms, static_cast<long long>(r.cycle_placed), 100 * r.cycle_fill, r.steady_cycle_ms,
                ArrayText(r).c_str(), r.peak_rss_mb);
  return text;
}

}  // namespace tessera::bench
