// tessera sim: replays a workload (Philly CSV, Tessera JSON lines, or a
// synthetic mix) on a simulated cluster through the real scheduling core, and
// writes summary.json, jobs.csv and timeseries.csv (docs/simulator.md).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "base/quantity.h"
#include "base/random.h"
#include "cli/commands.h"
#include "simkit/alibaba_trace.h"
#include "simkit/jsonl_trace.h"
#include "simkit/packing.h"
#include "simkit/philly_trace.h"
#include "simkit/report.h"
#include "simkit/simulator.h"
#include "simkit/summary.h"
#include "simkit/synthetic_workload.h"
#include "spec/cluster_yaml.h"

namespace tessera::cli {
namespace {

struct SimArgs {
  std::string workload;
  std::string preset;
  std::string cluster = "16 nodes x 8 GPUs";
  std::string policy = "default";
  double load = 1.0;
  Seconds cycle_interval = 0;
  std::uint64_t seed = 1;
  double rate = 0.01;  // synthetic arrivals per second
  std::vector<double> las_thresholds;  // GPU-seconds; empty: the scheduler's default
  std::string mode = "events";        // events | packing
  double demand = 1.3;                // packing: arrived GPU demand to stop at, in cluster capacities
  int seeds = 10;                     // packing: shuffles to average over
  std::string placement = "best-fit"; // packing: best-fit | fgd | random
  std::string failures = "none";      // none | llama3 | interruptions per GPU-hour
  Seconds checkpoint_interval = 0;    // for jobs without one of their own
  Seconds restart_cost = 0;
  Seconds gpu_repair = 4 * 3600;
  Seconds node_repair = 12 * 3600;
  std::string out;
  bool quiet = false;
};

[[noreturn]] void Fail(const Status& status) {
  std::fprintf(stderr, "error: %s\n", status.message().c_str());
  throw CLI::RuntimeError(kExitBadInput);
}

// Policies by name, each a configuration of the one scheduling core.
Result<sched::SchedulerConfig> PolicyConfig(const std::string& name) {
  sched::SchedulerConfig config;
  if (name == "default") return config;
  config.reservation = "none";
  config.actions = {"allocate"};
  if (name == "fifo") return config;
  if (name == "sjf") {
    config.job_order = "oracle-shortest-first";
    return config;
  }
  if (name == "srtf" || name == "las") {
    config.job_order = name == "srtf" ? "oracle-srtf" : "las";
    config.actions = {"allocate", "preempt"};
    config.preempt_by_job_order = true;
    config.max_preemptors_per_cycle = 64;
    return config;
  }
  return InvalidArgument("--policy: unknown policy '" + name + "' (known: default, fifo, sjf, srtf, las)");
}

// Helios (Hu et al., SC'21): Philly Oct 1 - Nov 30 2017, 11 VCs in 8-GPU nodes.
const std::map<std::string, std::int32_t>& HeliosVcNodes() {
  static const std::map<std::string, std::int32_t> kNodes = {
      {"6214e9", 64}, {"7f04ca", 32}, {"11cb48", 16}, {"b436b2", 64}, {"ee9e8c", 64}, {"e13805", 16},
      {"6c71a0", 32}, {"2869ce", 16}, {"ed69ec", 8},  {"103959", 8},  {"0e4a51", 32}};
  return kNodes;
}

simkit::Workload LoadWorkload(const SimArgs& args) {
  const std::size_t colon = args.workload.find(':');
  const std::string kind = args.workload.substr(0, colon);
  const std::string arg = colon == std::string::npos ? "" : args.workload.substr(colon + 1);
  if (kind == "philly") {
    simkit::PhillyOptions options;
    options.load = args.load;
    if (args.preset == "helios") {
      options.window_start = *simkit::ParseTimestamp("2017-10-01 00:00:00");
      options.window_end = *simkit::ParseTimestamp("2017-12-01 00:00:00");
      for (const auto& [vc, nodes] : HeliosVcNodes()) options.vcs.insert(vc);
    }
    auto workload = simkit::LoadPhillyCsv(arg, options);
    if (!workload.ok()) Fail(workload.status());
    return std::move(workload).value();
  }
  if (kind == "alibaba") {
    auto workload = simkit::LoadAlibabaPods(arg);
    if (!workload.ok()) Fail(workload.status());
    return std::move(workload).value();
  }
  if (kind == "jsonl") {
    auto workload = simkit::LoadJsonLines(arg);
    if (!workload.ok()) Fail(workload.status());
    return std::move(workload).value();
  }
  if (kind == "gang") {  // gang:GPUS:DURATION, one job of 8-GPU tasks
    const std::size_t second = arg.find(':');
    const long gpus = std::atol(arg.substr(0, second).c_str());
    auto duration = ParseDuration(second == std::string::npos ? "" : arg.substr(second + 1));
    if (gpus <= 0 || gpus % 8 || !duration.ok()) Fail(InvalidArgument("--workload gang:GPUS:DURATION, GPUS a multiple of 8 (gang:16000:30d)"));
    simkit::WorkloadJob job;
    job.job.name = "gang";
    model::TaskGroup group;
    group.name = "worker";
    group.replicas = group.min_replicas = static_cast<std::int32_t>(gpus / 8);
    group.request.gpu_milli = 8000;
    job.job.groups.push_back(group);
    job.duration = *duration;
    return simkit::Workload{"gang", {std::move(job)}};
  }
  if (kind == "synthetic") {
    const long count = std::atol(arg.c_str());
    if (count <= 0) Fail(InvalidArgument("--workload synthetic:N needs a positive job count"));
    simkit::Workload workload;
    workload.source = "synthetic";
    Rng arrivals(args.seed ^ 0x9e3779b97f4a7c15ULL);
    double t = 0;
    for (auto& g : simkit::GenerateWorkload(static_cast<std::size_t>(count), {model::QueueId(0)}, {}, args.seed)) {
      t += arrivals.Exponential(1.0 / args.rate);
      workload.jobs.push_back({std::move(g.job), "default", static_cast<Time>(t), g.duration, ""});
    }
    return workload;
  }
  Fail(InvalidArgument("--workload: write philly:PATH, alibaba:PODS.csv, jsonl:PATH, synthetic:N or gang:GPUS:DURATION"));
}

// A cluster file or shape, or Alibaba's node list ("alibaba:NODES.csv").
Result<model::Cluster> LoadSimCluster(const std::string& arg) {
  if (!arg.starts_with("alibaba:")) return spec::LoadCluster(arg);
  auto nodes = simkit::LoadAlibabaNodes(arg.substr(8));
  if (!nodes.ok()) return nodes.status();
  return model::Cluster::Build(*nodes);
}

// Sums step functions sampled at different times into one.
std::vector<simkit::Sample> MergeSeries(const std::vector<std::vector<simkit::Sample>>& parts) {
  std::vector<std::pair<Time, std::size_t>> points;
  for (std::size_t p = 0; p < parts.size(); ++p) {
    for (const simkit::Sample& s : parts[p]) points.emplace_back(s.time, p);
  }
  std::sort(points.begin(), points.end());
  std::vector<simkit::Sample> current(parts.size()), merged;
  std::vector<std::size_t> cursor(parts.size(), 0);
  for (const auto& [time, part] : points) {
    current[part] = parts[part][cursor[part]++];
    simkit::Sample sum{time, 0, 0, 0};
    for (const simkit::Sample& s : current) {
      sum.allocated_milli += s.allocated_milli;
      sum.pending += s.pending;
      sum.running += s.running;
    }
    if (!merged.empty() && merged.back().time == time) merged.back() = sum; else merged.push_back(sum);
  }
  return merged;
}

// Node specs for the packing study: Alibaba's node list, a cluster file or a shape.
Result<std::vector<model::NodeSpec>> LoadNodeSpecs(const std::string& arg) {
  if (arg.starts_with("alibaba:")) return simkit::LoadAlibabaNodes(arg.substr(8));
  if (std::filesystem::exists(arg)) {
    std::stringstream text;
    text << std::ifstream(arg).rdbuf();
    return spec::ParseClusterYaml(text.str(), arg);
  }
  auto shape = spec::ParseClusterShape(arg);
  if (!shape.ok()) return shape.status();
  return spec::GenerateNodes(*shape);
}

void RunPackingStudy(const SimArgs& args, const simkit::Workload& pods) {
  static const std::map<std::string, std::string> kPlacements = {
      {"best-fit", "topology-packing"}, {"fgd", "fgd"}, {"random", "random"}};
  const auto placement = kPlacements.find(args.placement);
  if (placement == kPlacements.end()) Fail(InvalidArgument("--placement: best-fit, fgd or random"));
  auto nodes = LoadNodeSpecs(args.cluster);
  if (!nodes.ok()) Fail(nodes.status());
  simkit::PackingOptions options;
  options.demand = args.demand;
  options.seeds = args.seeds;
  options.placement = placement->second;
  const auto start = std::chrono::steady_clock::now();
  auto result = simkit::RunPacking(*nodes, pods, options);
  if (!result.ok()) Fail(result.status());
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  nlohmann::json out = {{"placement", args.placement}, {"demand", args.demand}, {"seeds", args.seeds},
                        {"mean_allocated", result->mean_allocated}, {"wall_s", wall}};
  for (const simkit::PackingCurve& c : result->seeds) {
    out["per_seed"].push_back({{"allocated", c.allocated}, {"arrived_pods", c.arrived}, {"dropped_pods", c.dropped}});
  }
  if (!args.out.empty()) {
    std::filesystem::create_directories(args.out);
    std::ofstream(args.out + "/packing.json") << out.dump(2) << "\n";
    std::ofstream curve(args.out + "/packing.csv");
    curve << "seed,arrived_gpu_demand,allocated_gpu_share\n";
    for (std::size_t s = 0; s < result->seeds.size(); ++s) {
      for (const auto& [demand, allocated] : result->seeds[s].points) curve << s + 1 << ',' << demand << ',' << allocated << '\n';
    }
  }
  if (!args.quiet) {
    std::printf("%s: %.2f%% of GPU capacity allocated at %.0f%% demand (mean of %d seeds, %.1f s)\n", args.placement.c_str(),
                100 * result->mean_allocated, 100 * args.demand, args.seeds, wall);
  }
}

void RunSim(const SimArgs& args) {
  simkit::Workload workload = LoadWorkload(args);
  if (args.mode == "packing") return RunPackingStudy(args, workload);
  if (args.mode != "events") Fail(InvalidArgument("--mode: events or packing"));
  for (simkit::WorkloadJob& job : workload.jobs) {
    if (job.job.checkpoint_interval == 0) job.job.checkpoint_interval = args.checkpoint_interval;
  }
  auto config = PolicyConfig(args.policy);
  if (!config.ok()) Fail(config.status());
  if (!args.las_thresholds.empty()) config->las_thresholds = args.las_thresholds;
  simkit::SimOptions options;
  options.scheduler = *config;
  options.cycle_interval = args.cycle_interval;
  options.sample_interval = 300;
  if (args.failures == "llama3") {
    options.failures.per_gpu_hour = simkit::FailureModel::kLlama3PerGpuHour;
  } else if (args.failures != "none") {
    char* end = nullptr;
    options.failures.per_gpu_hour = std::strtod(args.failures.c_str(), &end);
    if (*end || !(options.failures.per_gpu_hour > 0)) {
      Fail(InvalidArgument("--failures: none, llama3, or interruptions per GPU-hour (e.g. 1e-4)"));
    }
  }
  options.failures.restart_cost = args.restart_cost;
  options.failures.gpu_repair = args.gpu_repair;
  options.failures.node_repair = args.node_repair;
  options.failures.seed = args.seed;
  const bool progress = !args.quiet && isatty(fileno(stderr));

  // One simulation per cluster: each Helios VC alone, else the whole workload.
  std::vector<std::pair<std::string, simkit::Workload>> parts;
  if (args.preset == "helios") {
    for (const auto& [vc, nodes] : HeliosVcNodes()) parts.push_back({vc, simkit::Workload{workload.source, {}}});
    for (const simkit::WorkloadJob& job : workload.jobs) {
      for (auto& [vc, part] : parts) {
        if (vc == job.group) part.jobs.push_back(job);
      }
    }
  } else if (!args.preset.empty()) {
    Fail(InvalidArgument("--preset: unknown preset '" + args.preset + "' (known: helios)"));
  } else {
    parts.push_back({"", workload});
  }

  const auto start = std::chrono::steady_clock::now();
  simkit::SimResult total;
  std::vector<std::vector<simkit::Sample>> series;
  std::size_t finished_parts = 0;
  for (auto& [name, part] : parts) {
    const std::string shape = args.preset == "helios" ? std::to_string(HeliosVcNodes().at(name)) + " nodes x 8 GPUs" : args.cluster;
    auto cluster = LoadSimCluster(shape);
    if (!cluster.ok()) Fail(cluster.status());
    const std::int64_t capacity = cluster->capacity().gpu_milli;
    options.on_progress = [&, parts_count = parts.size()](double done) {
      if (!progress) return;
      const double overall = (static_cast<double>(finished_parts) + done) / static_cast<double>(parts_count);
      const int width = 40, filled = static_cast<int>(overall * width);
      std::fprintf(stderr, "\r[%s%s] %3.0f%%", std::string(filled, '#').c_str(), std::string(width - filled, ' ').c_str(), overall * 100);
    };
    auto result = simkit::Simulate(sched::SchedulerState(std::move(*cluster), model::QueueTree::Default(capacity)), part, options);
    if (!result.ok()) Fail(result.status());
    ++finished_parts;
    for (simkit::JobRecord& r : result->jobs) total.jobs.push_back(std::move(r));
    total.capacity_milli += result->capacity_milli;
    total.allocated_while_pending += result->allocated_while_pending;
    total.capacity_while_pending += result->capacity_while_pending;
    total.lost_gpu_seconds += result->lost_gpu_seconds;
    total.preemptions += result->preemptions;
    total.failures += result->failures;
    total.events += result->events;
    total.cycles += result->cycles;
    series.push_back(std::move(result->series));
  }
  if (progress) std::fprintf(stderr, "\n");
  total.series = MergeSeries(series);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  nlohmann::json summary = simkit::Summarize(total, wall);
  summary["policy"] = args.policy;
  summary["workload"] = args.workload;
  summary["load"] = args.load;
  if (!args.out.empty()) {
    std::filesystem::create_directories(args.out);
    std::ofstream(args.out + "/summary.json") << summary.dump(2) << "\n";
    for (const Status& s : {simkit::WriteJobsCsv(total, args.out + "/jobs.csv"),
                            simkit::WriteSeriesCsv(total, args.out + "/timeseries.csv"),
                            simkit::WriteHtmlReport(total, summary, args.out + "/report.html")}) {
      if (!s.ok()) Fail(s);
    }
  }
  if (!args.quiet) {
    std::printf("%s: %lld jobs, avg JCT %.0f s, p99 %.0f s, avg queueing delay %.0f s, GPU allocation while work waited %.1f%%\n",
                args.policy.c_str(), summary["jobs"].get<long long>(), summary["avg_jct_s"].get<double>(),
                summary["p99_jct_s"].get<double>(), summary["avg_queue_delay_s"].get<double>(),
                100 * summary["gpu_alloc_ratio"].get<double>());
    std::printf("%lld events in %.2f s of wall time (%.0f events/s)%s\n", summary["events"].get<long long>(), wall,
                summary["events_per_s"].get<double>(), args.out.empty() ? "" : (", written to " + args.out).c_str());
  }
}

}  // namespace

void AddSimCommand(CLI::App& app) {
  auto args = std::make_shared<SimArgs>();
  auto* cmd = app.add_subcommand("sim", "Replay a workload on a simulated cluster through the scheduling core");
  cmd->add_option("--workload", args->workload, "philly:PATH, alibaba:PODS.csv, jsonl:PATH, synthetic:N or gang:GPUS:DURATION")
      ->required();
  cmd->add_option("--preset", args->preset, "helios: Philly Oct-Nov 2017, its 11 VCs simulated separately");
  cmd->add_option("--cluster", args->cluster, "cluster file, shape, or alibaba:NODES.csv (without a preset)")
      ->capture_default_str();
  cmd->add_option("--policy", args->policy, "default, fifo, sjf (oracle), srtf (oracle, preemptive) or las (Tiresias)")->capture_default_str();
  cmd->add_option("--load", args->load, "divide Philly submit offsets by this")->capture_default_str();
  cmd->add_option("--cycle-interval", args->cycle_interval, "seconds between cycles; 0: after every event")->capture_default_str();
  cmd->add_option("--seed", args->seed)->capture_default_str();
  cmd->add_option("--rate", args->rate, "synthetic arrivals per second")->capture_default_str();
  cmd->add_option("--mode", args->mode, "events (replay over time) or packing (the FGD paper's protocol)")->capture_default_str();
  cmd->add_option("--demand", args->demand, "packing: stop once this many cluster capacities of GPU demand arrived")
      ->capture_default_str();
  cmd->add_option("--seeds", args->seeds, "packing: shuffled arrival orders to average over")->capture_default_str();
  cmd->add_option("--placement", args->placement, "packing: best-fit, fgd or random")->capture_default_str();
  cmd->add_option("--las-thresholds", args->las_thresholds, "GPU-seconds between LAS levels (default 3600 36000)");
  cmd->add_option("--failures", args->failures, "none, llama3 (Llama 3's interruption rate) or interruptions per GPU-hour")
      ->capture_default_str();
  cmd->add_option("--checkpoint-interval", args->checkpoint_interval, "seconds, for jobs without their own")->capture_default_str();
  cmd->add_option("--restart-cost", args->restart_cost, "seconds of extra work after every restart")->capture_default_str();
  cmd->add_option("--gpu-repair", args->gpu_repair, "seconds a failed GPU is out")->capture_default_str();
  cmd->add_option("--node-repair", args->node_repair, "seconds a failed node is out")->capture_default_str();
  cmd->add_option("--out", args->out, "directory for summary.json, jobs.csv, timeseries.csv, report.html");
  cmd->add_flag("--quiet", args->quiet, "no progress bar, no summary lines");
  cmd->callback([args] { RunSim(*args); });
}

}  // namespace tessera::cli
