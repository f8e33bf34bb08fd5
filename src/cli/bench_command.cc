// tessera bench sched: the scale benchmark of the scheduling core
// (bench/sched_bench.h says what is measured).
#include <cstdio>

#include "bench/api_bench.h"
#include "bench/container_bench.h"
#include "bench/control_plane_bench.h"
#include "bench/flood.h"
#include "bench/sched_bench.h"
#include "bench/virtual_cluster.h"
#include "cli/commands.h"

namespace tessera::cli {

void AddBenchCommand(CLI::App& app) {
  auto* bench = app.add_subcommand("bench", "Scale benchmarks (run on purpose, never in the test suite)");
  bench->require_subcommand(1);
  auto options = std::make_shared<bench::SchedBenchOptions>();
  auto json = std::make_shared<bool>(false);
  auto* sched = bench->add_subcommand("sched", "Placements/s, gang decision latency and cycle time of the core");
  sched->add_option("--gpus", options->gpus, "GPUs in the generated cluster")->capture_default_str();
  sched->add_option("--gpus-per-node", options->gpus_per_node)->capture_default_str();
  sched->add_option("--nodes-per-leaf", options->nodes_per_leaf)->capture_default_str();
  sched->add_option("--pending", options->pending, "pending jobs in the Philly-like mix")->capture_default_str();
  sched->add_option("--array-elements", options->array_elements,
                    "of the pending jobs, this many as one array job, measured beside the mix alone (0: none)")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  sched->add_option("--fill", options->fill, "cluster fill for the gang samples")->capture_default_str();
  sched->add_option("--gang-samples", options->gang_samples)->capture_default_str();
  sched->add_option("--runs", options->runs, "repetitions; medians are reported")->capture_default_str();
  sched->add_option("--seed", options->seed)->capture_default_str();
  sched->add_flag("--json", *json, "print one JSON object");
  sched->callback([options, json] {
    const bench::SchedBenchResult result = bench::RunSchedBench(*options);
    std::printf("%s\n", (*json ? bench::ToJson(result) : bench::ToText(result)).c_str());
  });

  auto cp = std::make_shared<bench::ControlPlaneBenchOptions>();
  auto* control = bench->add_subcommand("control-plane", "Jobs/s and submit-to-running latency of a real server with virtual agents");
  control->add_option("--agents", cp->agents, "Virtual agents (nodes)")->capture_default_str();
  control->add_option("--gpus-per-agent", cp->gpus_per_agent)->capture_default_str();
  control->add_option("--jobs", cp->jobs, "Single-GPU jobs to submit")->capture_default_str();
  control->add_option("--task-seconds", cp->task_seconds, "How long each virtual task runs")->capture_default_str();
  control->add_option("--submitters", cp->submitters, "Concurrent submission connections")->capture_default_str();
  control->add_option("--rate", cp->rate, "Jobs/s offered whatever the answers (open loop; latency from each job's due time); 0: each connection sends when answered")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  control->add_option("--server-threads", cp->server_threads, "The server's HTTP threads")->capture_default_str();
  control->add_option("--max-ended-jobs", cp->max_ended_jobs, "The server's --max-ended-jobs (default: its own)");
  control->add_flag("--hold", cp->hold, "Submit everything before the agents join (Slurm's burst)");
  control->add_flag("--tls", cp->tls, "TLS on every connection, agents with mutual TLS (what TLS costs)");
  control->add_option("--tessera", cp->tessera, "The binary to run as the server (default: this one), to compare two builds");
  control->add_flag("--json", *json, "print one JSON object");
  control->callback([cp, json] {
    const bench::ControlPlaneBenchResult result = bench::RunControlPlaneBench(*cp);
    std::printf("%s\n", (*json ? bench::ToJson(result) : bench::ToText(result)).c_str());
    if (!result.error.empty()) throw CLI::RuntimeError(kExitFailure);
  });

  auto api = std::make_shared<bench::ApiBenchOptions>();
  auto* api_cmd = bench->add_subcommand("api", "API latency (get, list, submit) of a real server while cycles over a large backlog run back to back");
  api_cmd->add_option("--gpus", api->gpus, "GPUs, on virtual nodes that a job each holds whole")->capture_default_str();
  api_cmd->add_option("--gpus-per-node", api->gpus_per_node)->capture_default_str();
  api_cmd->add_option("--pending", api->pending, "One-GPU jobs waiting behind the full cluster")->capture_default_str();
  api_cmd->add_option("--seconds", api->seconds, "The measurement window")->capture_default_str();
  api_cmd->add_option("--server-threads", api->server_threads, "The server's HTTP threads")->capture_default_str();
  api_cmd->add_option("--tessera", api->tessera, "The binary to run as the server (default: this one), to compare two builds");
  api_cmd->add_flag("--json", *json, "print one JSON object");
  api_cmd->callback([api, json] {
    const bench::ApiBenchResult result = bench::RunApiBench(*api);
    std::printf("%s\n", (*json ? bench::ToJson(result) : bench::ToText(result)).c_str());
    if (!result.error.empty()) throw CLI::RuntimeError(kExitFailure);
  });

  auto containers = std::make_shared<bench::ContainerBenchOptions>();
  auto* containers_cmd = bench->add_subcommand("containers", "Container task starts against host processes and podman, and pulls against skopeo (root)");
  containers_cmd->add_option("--tasks", containers->tasks, "Starts of each kind, one after another")->capture_default_str()->check(CLI::Range(1, 10000));
  containers_cmd->add_option("--image-mb", containers->image_mb, "MiB of incompressible data in the image")->capture_default_str()->check(CLI::Range(0, 100000));
  containers_cmd->add_option("--podman", containers->podman, "The peer's binary; empty: no peer")->capture_default_str();
  containers_cmd->add_flag("--json", *json, "print one JSON object");
  containers_cmd->callback([containers, json] {
    const bench::ContainerBenchResult result = bench::RunContainerBench(*containers);
    std::printf("%s\n", (*json ? bench::ToJson(result) : bench::ToText(result)).c_str());
    if (!result.error.empty()) throw CLI::RuntimeError(kExitFailure);
  });

  auto vc = std::make_shared<bench::VirtualClusterOptions>();
  auto* virtual_cluster = bench->add_subcommand("virtual-cluster", "Join virtual agents to a running server and load it, until stopped");
  virtual_cluster->add_option("--server", vc->server, "The server to load")->required();
  virtual_cluster->add_option("--agents", vc->agents, "Virtual agents (nodes)")->capture_default_str();
  virtual_cluster->add_option("--gpus-per-agent", vc->gpus_per_agent)->capture_default_str();
  virtual_cluster->add_option("--jobs", vc->jobs, "Jobs to submit, of 1, 1, 1, 1, 2, 2, 4 and 8 GPUs in turn")->capture_default_str();
  virtual_cluster->add_option("--task-seconds", vc->task_seconds, "How long each virtual task runs")->capture_default_str();
  virtual_cluster->add_option("--duration", vc->duration_seconds, "Seconds to hold the load (0: until interrupted)")->capture_default_str();
  auto flood = std::make_shared<bench::FloodOptions>();
  auto* flood_cmd = bench->add_subcommand("flood", "Submit jobs to a running server as fast as it answers, and count its answers");
  flood_cmd->add_option("--server", flood->server, "The server to flood")->required();
  flood_cmd->add_option("--ca-file", flood->ca_file, "For https: the CA to trust");
  flood_cmd->add_option("--token-file", flood->token_files, "A token to submit with (repeat it: the connections take them in turn)");
  flood_cmd->add_option("--connections", flood->connections, "Connections, each submitting once answered")->capture_default_str();
  flood_cmd->add_option("--seconds", flood->seconds, "How long to flood")->capture_default_str();
  flood_cmd->add_option("--accepted-file", flood->accepted_file, "Write the accepted jobs' ids here, one a line");
  flood_cmd->callback([flood] {
    const bench::FloodResult result = bench::RunFlood(*flood);
    std::printf("%s\n", bench::ToJson(result).c_str());
    if (!result.error.empty()) throw CLI::RuntimeError(kExitFailure);
  });

  virtual_cluster->callback([vc] {
    if (const std::string error = bench::RunVirtualCluster(*vc); !error.empty()) {
      std::fprintf(stderr, "tessera bench virtual-cluster: %s\n", error.c_str());
      throw CLI::RuntimeError(kExitFailure);
    }
  });
}

}  // namespace tessera::cli
