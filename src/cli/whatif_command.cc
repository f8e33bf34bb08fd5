// `tessera whatif`: the jobs the server recorded, replayed through the
// simulator twice, under the configuration the server runs and under a
// proposed one (--scheduler, --queues), side by side; --fail-if thresholds
// decide the exit code, so that a configuration change is checked in CI
// before it reaches the cluster (docs/simulator.md, "What-if").
#include <chrono>
#include <cmath>
#include <cstdio>

#include "base/quantity.h"
#include "cli/api_client.h"
#include "cli/commands.h"
#include "cli/recorded_workload.h"
#include "cli/table.h"
#include "simkit/comparison.h"
#include "simkit/simulator.h"
#include "simkit/summary.h"
#include "spec/queue_yaml.h"
#include "spec/scheduler_yaml.h"

namespace tessera::cli {
namespace {

using nlohmann::json;

struct WhatIfArgs {
  ClientOptions client;
  std::string scheduler_file, queues_file, since = "7d";
  std::vector<std::string> fail_if;
};

json Replay(const RecordedCluster& record, const std::vector<model::QueueSpec>& queues, const sched::SchedulerConfig& scheduler,
            const char* which) {
  model::Cluster cluster = OrFail(model::Cluster::Build(record.nodes));
  model::QueueTree tree = OrFail(model::QueueTree::Build(queues));
  simkit::SimOptions options;
  options.scheduler = scheduler;
  const auto start = std::chrono::steady_clock::now();
  Result<simkit::SimResult> result = simkit::Simulate(sched::SchedulerState(std::move(cluster), std::move(tree)), record.workload, options);
  if (!result.ok()) Fail(kExitBadInput, std::string(which) + " configuration: " + result.status().message());
  return simkit::Summarize(*result, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

std::string Figure(double value) {
  char text[32];
  std::snprintf(text, sizeof text, std::abs(value) >= 100 || value == std::floor(value) ? "%.0f" : "%.3g", value);
  return text;
}

std::string Change(double running, double proposed) {
  if (running == proposed) return "=";
  if (running == 0) return proposed > 0 ? "+" + Figure(proposed) : Figure(proposed);
  char text[32];
  std::snprintf(text, sizeof text, "%+.1f%%", 100 * (proposed - running) / std::abs(running));
  return text;
}

void PrintSideBySide(const json& running, const json& proposed) {
  Table table({"FIGURE", "RUNNING", "PROPOSED", "CHANGE"});
  const auto row = [&](const std::string& name, const json& a, const json& b, const char* key) {
    const double x = a.value(key, 0.0), y = b.value(key, 0.0);
    table.Add({name, Figure(x), Figure(y), Change(x, y)});
  };
  for (const char* key : {"jobs", "unfinished_jobs", "avg_jct_s", "p50_jct_s", "p99_jct_s", "avg_wait_s", "avg_queue_delay_s",
                          "gpu_alloc_ratio", "preemptions", "makespan_s"}) {
    row(key, running, proposed, key);
  }
  // Waits per queue, for every queue that ran jobs in either replay.
  json queues = running.value("queues", json::object());
  queues.update(proposed.value("queues", json::object()));
  for (const auto& [queue, figures] : queues.items()) {
    const json none = json::object();
    const json& a = running.contains("queues") && running["queues"].contains(queue) ? running["queues"][queue] : none;
    const json& b = proposed.contains("queues") && proposed["queues"].contains(queue) ? proposed["queues"][queue] : none;
    row("queues." + queue + ".avg_wait_s", a, b, "avg_wait_s");
  }
  table.Print();
}

void WhatIf(const WhatIfArgs& a) {
  if (a.scheduler_file.empty() && a.queues_file.empty()) Fail(kExitBadInput, "nothing proposed: give --scheduler FILE, --queues FILE, or both");
  const Seconds since = OrFail(ParseDuration(a.since));
  std::vector<simkit::Threshold> thresholds;
  for (const std::string& text : a.fail_if) thresholds.push_back(OrFail(simkit::ParseThreshold(text)));
  // The proposal is read before the server is asked: a typo fails at once.
  std::optional<sched::SchedulerConfig> scheduler;
  if (!a.scheduler_file.empty()) scheduler = OrFail(spec::ParseSchedulerConfigDocument(ReadInputOrFail(a.scheduler_file), a.scheduler_file));
  std::optional<std::vector<model::QueueSpec>> queues;
  if (!a.queues_file.empty()) queues = OrFail(spec::ParseQueueYaml(ReadInputOrFail(a.queues_file), a.queues_file));

  ApiClient api(a.client);
  const json answer = api.Call("GET", "/v1/cluster/record");
  const std::int64_t now_ms = answer.value("time", std::int64_t{0});
  const RecordedCluster record = OrFail(ReadClusterRecord(answer, now_ms - since * 1000), kExitFailure);
  if (record.workload.jobs.empty()) {
    Fail(kExitFailure, "nothing to replay: no job submitted in the last " + a.since + " has ended (" +
                           std::to_string(record.unfinished) + " pending or running)");
  }
  const json running = Replay(record, record.queues, record.scheduler, "the running");
  const json proposed = Replay(record, queues.value_or(record.queues), scheduler.value_or(record.scheduler), "the proposed");
  const std::vector<simkit::Breach> breaches = OrFail(simkit::CheckThresholds(thresholds, running, proposed));

  if (a.client.output == "json") {
    json out = {{"replayedJobs", record.workload.jobs.size()}, {"historyJobs", record.workload.history.size()},
                {"notReplayed", {{"straddling", record.straddling}, {"neverRan", record.never_ran}, {"unfinished", record.unfinished}}},
                {"running", running}, {"proposed", proposed}, {"breaches", json::array()}};
    for (const simkit::Breach& b : breaches) {
      out["breaches"].push_back({{"threshold", b.threshold}, {"running", b.running}, {"proposed", b.proposed}, {"bound", b.bound}});
    }
    PrintJson(out);
  } else {
    std::printf("%zu jobs submitted in the last %s replayed (%zu earlier ones as history; not replayed: %lld that began "
                "before, %lld that never ran, %lld unfinished)\n\n",
                record.workload.jobs.size(), a.since.c_str(), record.workload.history.size(), static_cast<long long>(record.straddling),
                static_cast<long long>(record.never_ran), static_cast<long long>(record.unfinished));
    PrintSideBySide(running, proposed);
  }
  for (const simkit::Breach& b : breaches) {
    std::fprintf(stderr, "tessera whatif: %s: the proposal gives %s, beyond the bound %s (running: %s)\n", b.threshold.c_str(),
                 Figure(b.proposed).c_str(), Figure(b.bound).c_str(), Figure(b.running).c_str());
  }
  if (!breaches.empty()) throw CLI::RuntimeError(kExitFailure);
}

}  // namespace

void AddWhatIfCommand(CLI::App& app) {
  auto args = std::make_shared<WhatIfArgs>();
  CLI::App* cmd = app.add_subcommand(
      "whatif", "Replay the jobs the server recorded under its configuration and a proposed one, side by side");
  AddClientFlags(cmd, &args->client);
  cmd->add_option("--scheduler", args->scheduler_file, "A proposed SchedulerConfig file (default: the server's)");
  cmd->add_option("--queues", args->queues_file, "A proposed QueueTree file (default: the server's queues)");
  cmd->add_option("--since", args->since, "Replay the jobs submitted this long ago or later: 7d, 24h")->capture_default_str();
  cmd->add_option("--fail-if", args->fail_if,
                  "Exit 1 when the proposal breaches this, e.g. 'avg_wait_s>+10%', 'gpu_alloc_ratio<-2%', "
                  "'queues.research.avg_wait_s>+600' (repeatable)");
  cmd->callback([args] { WhatIf(*args); });
}

}  // namespace tessera::cli
