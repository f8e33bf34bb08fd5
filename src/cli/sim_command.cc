// tessera sim: replays a workload on a simulated cluster through the real
// scheduling core and writes summary.json, jobs.csv, timeseries.csv and
// report.html; with --mode packing, runs the FGD paper's packing study;
// with --mode calibrate, fits the failure model to Philly's retried jobs
// (docs/simulator.md). Flags and printing only: the work is in src/simkit.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "cli/commands.h"
#include "simkit/failure_calibration.h"
#include "simkit/packing.h"
#include "simkit/policies.h"
#include "simkit/report.h"
#include "simkit/simulator.h"
#include "simkit/sources.h"
#include "simkit/summary.h"

namespace tessera::cli {
namespace {

struct SimArgs {
  std::string workload;
  std::string preset;
  std::string cluster = "16 nodes x 8 GPUs";
  std::string policy = "default";
  std::string mode = "events";         // events | packing | calibrate
  simkit::SourceOptions source;
  Seconds cycle_interval = 0;
  std::vector<double> las_thresholds;  // GPU-seconds; empty: the scheduler's default
  double demand = 1.3;                 // packing: arrived GPU demand to stop at, in cluster capacities
  int seeds = 10;                      // packing: shuffles to average over
  std::string placement = "best-fit";  // packing: best-fit | fgd | random
  std::string failures = "none";       // none | llama3 | interruptions per GPU-hour
  double failure_rate = 0;             // calibrate: failures per GPU-hour; 0: the trace's
  Seconds checkpoint_interval = 0;     // for jobs without one of their own
  simkit::FailureModel failure_model;
  std::string out;
  bool quiet = false;
};

[[noreturn]] void Fail(const Status& status) {
  std::fprintf(stderr, "error: %s\n", status.message().c_str());
  throw CLI::RuntimeError(kExitBadInput);
}

template <typename T>
T OrFail(Result<T> result) {
  if (!result.ok()) Fail(result.status());
  return std::move(result).value();
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void RunPackingStudy(const SimArgs& args, const simkit::Workload& pods) {
  static const std::map<std::string, std::string> kPlacements = {
      {"best-fit", "topology-packing"}, {"fgd", "fgd"}, {"random", "random"}};
  const auto placement = kPlacements.find(args.placement);
  if (placement == kPlacements.end()) Fail(InvalidArgument("--placement: best-fit, fgd or random"));
  const auto nodes = OrFail(simkit::LoadNodeSource(args.cluster));
  const simkit::PackingOptions options{args.demand, args.seeds, placement->second, 100};
  const auto start = std::chrono::steady_clock::now();
  const simkit::PackingResult result = OrFail(simkit::RunPacking(nodes, pods, options));
  const double wall = SecondsSince(start);
  nlohmann::json out = {{"placement", args.placement}, {"demand", args.demand}, {"seeds", args.seeds},
                        {"mean_allocated", result.mean_allocated}, {"wall_s", wall}};
  for (const simkit::PackingCurve& c : result.seeds) {
    out["per_seed"].push_back({{"allocated", c.allocated}, {"arrived_pods", c.arrived}, {"dropped_pods", c.dropped}});
  }
  if (!args.out.empty()) {
    std::filesystem::create_directories(args.out);
    std::ofstream(args.out + "/packing.json") << out.dump(2) << "\n";
    std::ofstream curve(args.out + "/packing.csv");
    curve << "seed,arrived_gpu_demand,allocated_gpu_share\n";
    for (std::size_t s = 0; s < result.seeds.size(); ++s) {
      for (const auto& [demand, allocated] : result.seeds[s].points) curve << s + 1 << ',' << demand << ',' << allocated << '\n';
    }
    const Status report = simkit::WritePackingHtmlReport(result, out, args.out + "/report.html");
    if (!report.ok()) Fail(report);
  }
  if (!args.quiet) {
    std::printf("%s: %.2f%% of GPU capacity allocated at %.0f%% demand (mean of %d seeds, %.1f s)\n", args.placement.c_str(),
                100 * result.mean_allocated, 100 * args.demand, args.seeds, wall);
  }
}

void RunCalibration(const SimArgs& args) {
  constexpr std::string_view kKind = "philly-attempts:";
  if (!args.workload.starts_with(kKind)) Fail(InvalidArgument("--mode calibrate: --workload philly-attempts:PATH (philly-multigpu/jobs.json)"));
  const std::string path = args.workload.substr(kKind.size());
  const auto jobs = OrFail(simkit::LoadPhillyAttempts(path));
  simkit::FailureModel model = args.failure_model;
  model.seed = args.source.seed;
  if (args.failures != "none") Fail(InvalidArgument("--mode calibrate: the failure rate is the trace's; use --failure-rate to override it"));
  const auto start = std::chrono::steady_clock::now();
  const Seconds checkpoint = args.checkpoint_interval > 0 ? args.checkpoint_interval : 3600;
  const simkit::Calibration c = OrFail(simkit::Calibrate(jobs, path, OrFail(simkit::LoadClusterSource(args.cluster)), model,
                                                         args.failure_rate, checkpoint, OrFail(simkit::PolicyConfig(args.policy))));
  const double wall = SecondsSince(start);
  if (!args.out.empty()) {
    std::filesystem::create_directories(args.out);
    const nlohmann::json out = {{"workload", args.workload}, {"cluster", args.cluster}, {"policy", args.policy},
                                {"failures_per_gpu_hour", c.target_per_gpu_hour}, {"failure_shape", c.model.job_fault_shape},
                                {"failure_scale_s", c.model.job_fault_scale}, {"restart_cost_s", c.model.restart_cost},
                                {"checkpoint_interval_s", checkpoint},
                                {"observed", simkit::ToJson(c.observed)}, {"simulated", simkit::ToJson(c.simulated)}, {"wall_s", wall}};
    std::ofstream(args.out + "/calibration.json") << out.dump(2) << "\n";
  }
  if (args.quiet) return;
  const auto attempts = [](const simkit::RetryStats& s) {
    std::string out;
    for (std::int64_t n : s.attempts) out += (out.empty() ? "" : "/") + std::to_string(n);
    return out;
  };
  const auto gaps = [](const simkit::RetryStats& s) {
    return std::to_string(s.gap_p10) + "/" + std::to_string(s.gap_p50) + "/" + std::to_string(s.gap_p90) + " s";
  };
  std::printf("%lld Philly jobs of 4+ GPUs, failures at %.3g per GPU-hour (%s), Weibull shape %.2g (scale %.3g s), "
              "checkpoints every %lld s, %s policy on %s; %.1f s\n",
              static_cast<long long>(c.observed.jobs), c.target_per_gpu_hour, args.failure_rate > 0 ? "given" : "the trace's rate",
              c.model.job_fault_shape, c.model.job_fault_scale, static_cast<long long>(checkpoint), args.policy.c_str(),
              args.cluster.c_str(), wall);
  std::printf("%-28s %-22s %s\n", "", "Philly", "simulated");
  std::printf("%-28s %-22.1f %.1f\n", "jobs retried (%)", 100 * c.observed.retried_share, 100 * c.simulated.retried_share);
  std::printf("%-28s %-22s %s\n", "jobs with 1/2/3/4/5+ attempts", attempts(c.observed).c_str(), attempts(c.simulated).c_str());
  std::printf("%-28s %-22.3g %.3g\n", "failures per GPU-hour", c.observed.failures_per_gpu_hour, c.simulated.failures_per_gpu_hour);
  std::printf("%-28s %-22s %s\n", "gap p10/p50/p90", gaps(c.observed).c_str(), gaps(c.simulated).c_str());
}

void RunEvents(const SimArgs& args, simkit::Workload workload) {
  for (simkit::WorkloadJob& job : workload.jobs) {
    if (job.job.checkpoint_interval == 0) job.job.checkpoint_interval = args.checkpoint_interval;
  }
  simkit::SimOptions options;
  options.scheduler = OrFail(simkit::PolicyConfig(args.policy));
  if (!args.las_thresholds.empty()) options.scheduler.plugin_args.las.thresholds = args.las_thresholds;
  options.cycle_interval = args.cycle_interval;
  options.sample_interval = 300;
  options.failures = args.failure_model;
  options.failures.seed = args.source.seed;
  if (args.failures == "llama3") {
    options.failures.per_gpu_hour = simkit::FailureModel::kLlama3PerGpuHour;
  } else if (args.failures != "none") {
    char* end = nullptr;
    options.failures.per_gpu_hour = std::strtod(args.failures.c_str(), &end);
    if (*end || !(options.failures.per_gpu_hour > 0)) {
      Fail(InvalidArgument("--failures: none, llama3, or interruptions per GPU-hour (e.g. 1e-4)"));
    }
  }

  // One simulation per cluster: each Helios VC alone, else the whole workload.
  std::vector<std::pair<std::string, simkit::Workload>> parts;
  if (args.source.helios) {
    for (const auto& [vc, nodes] : simkit::HeliosVcNodes()) parts.push_back({vc, simkit::Workload{workload.source, {}, {}}});
    for (auto& [vc, part] : parts) {
      for (const simkit::WorkloadJob& job : workload.jobs) {
        if (vc == job.group) part.jobs.push_back(job);
      }
      for (const simkit::WorkloadJob& job : workload.history) {
        if (vc == job.group) part.history.push_back(job);
      }
    }
  } else {
    parts.push_back({"", std::move(workload)});
  }
  const bool progress = !args.quiet && isatty(fileno(stderr));
  const auto start = std::chrono::steady_clock::now();
  simkit::SimResult total;
  for (std::size_t p = 0; p < parts.size(); ++p) {
    const auto& [name, part] = parts[p];
    const std::string cluster_source =
        args.source.helios ? std::to_string(simkit::HeliosVcNodes().at(name)) + " nodes x 8 GPUs" : args.cluster;
    model::Cluster cluster = OrFail(simkit::LoadClusterSource(cluster_source));
    const std::int64_t capacity = cluster.capacity().gpu_milli;
    options.on_progress = [&, p](double done) {
      if (!progress) return;
      const double overall = (static_cast<double>(p) + done) / static_cast<double>(parts.size());
      const int width = 40, filled = static_cast<int>(overall * width);
      std::fprintf(stderr, "\r[%s%s] %3.0f%%", std::string(filled, '#').c_str(), std::string(width - filled, ' ').c_str(),
                   overall * 100);
    };
    simkit::Merge(total, OrFail(simkit::Simulate(sched::SchedulerState(std::move(cluster), model::QueueTree::Default(capacity)),
                                                 part, options)));
  }
  if (progress) std::fprintf(stderr, "\n");
  const double wall = SecondsSince(start);
  nlohmann::json summary = simkit::Summarize(total, wall);
  summary["policy"] = args.policy;
  summary["workload"] = args.workload;
  summary["load"] = args.source.load;
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

void RunSim(SimArgs args) {
  if (!args.preset.empty() && args.preset != "helios") Fail(InvalidArgument("--preset: unknown preset '" + args.preset + "' (known: helios)"));
  args.source.helios = args.preset == "helios";
  if (args.mode == "calibrate") return RunCalibration(args);
  simkit::Workload workload = OrFail(simkit::LoadWorkloadSource(args.workload, args.source));
  if (args.mode == "packing") return RunPackingStudy(args, workload);
  if (args.mode != "events") Fail(InvalidArgument("--mode: events, packing or calibrate"));
  RunEvents(args, std::move(workload));
}

}  // namespace

void AddSimCommand(CLI::App& app) {
  auto args = std::make_shared<SimArgs>();
  auto* cmd = app.add_subcommand("sim", "Replay a workload on a simulated cluster through the scheduling core");
  cmd->add_option("--workload", args->workload,
                  "philly:PATH, alibaba:PODS.csv, jsonl:PATH, synthetic:N or gang:GPUS:DURATION (calibrate: philly-attempts:PATH)")
      ->required();
  cmd->add_option("--preset", args->preset, "helios: Philly Oct-Nov 2017, its 11 VCs simulated separately");
  cmd->add_option("--cluster", args->cluster, "cluster file, shape, or alibaba:NODES.csv (without a preset)")
      ->capture_default_str();
  cmd->add_option("--policy", args->policy, "default, fifo, sjf (oracle), srtf (oracle, preemptive) or las (Tiresias)")
      ->capture_default_str();
  cmd->add_option("--mode", args->mode,
                  "events (replay over time), packing (the FGD paper's protocol) or calibrate (the failure model against "
                  "philly-attempts:PATH)")
      ->capture_default_str();
  cmd->add_option("--failure-rate", args->failure_rate, "calibrate: failures per GPU-hour to simulate (default: the trace's)");
  cmd->add_option("--failure-shape", args->failure_model.job_fault_shape,
                  "calibrate: Weibull shape of a run's failure hazard in its age (1: constant; below 1: early failures)")
      ->capture_default_str();
  cmd->add_option("--load", args->source.load, "divide Philly submit offsets by this")->capture_default_str();
  cmd->add_option("--seed", args->source.seed)->capture_default_str();
  cmd->add_option("--rate", args->source.rate, "synthetic arrivals per second")->capture_default_str();
  cmd->add_option("--cycle-interval", args->cycle_interval, "seconds between cycles; 0: after every event")->capture_default_str();
  cmd->add_option("--las-thresholds", args->las_thresholds, "GPU-seconds between LAS levels (default 3600 36000)");
  cmd->add_option("--demand", args->demand, "packing: stop once this many cluster capacities of GPU demand arrived")
      ->capture_default_str();
  cmd->add_option("--seeds", args->seeds, "packing: shuffled arrival orders to average over")->capture_default_str();
  cmd->add_option("--placement", args->placement, "packing: best-fit, fgd or random")->capture_default_str();
  cmd->add_option("--failures", args->failures, "none, llama3 (Llama 3's interruption rate) or interruptions per GPU-hour")
      ->capture_default_str();
  cmd->add_option("--checkpoint-interval", args->checkpoint_interval, "seconds, for jobs without their own (calibrate: default 3600)")
      ->capture_default_str();
  cmd->add_option("--restart-cost", args->failure_model.restart_cost, "seconds of extra work after every restart")
      ->capture_default_str();
  cmd->add_option("--gpu-repair", args->failure_model.gpu_repair, "seconds a failed GPU is out")->capture_default_str();
  cmd->add_option("--node-repair", args->failure_model.node_repair, "seconds a failed node is out")->capture_default_str();
  cmd->add_option("--out", args->out, "directory for the results");
  cmd->add_flag("--quiet", args->quiet, "no progress bar, no summary lines");
  cmd->callback([args] { RunSim(*args); });
}

}  // namespace tessera::cli
