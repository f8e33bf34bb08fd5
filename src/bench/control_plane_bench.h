// tessera bench control-plane: the whole control plane under load, as users
// meet it. A real `tessera server` (a child process, SQLite store, its own
// HTTP threads) serves virtual agents that all live in this process, like
// Kubernetes' hollow nodes: each registers, long-polls its assignment set over
// its own connections, "runs" each task for a set time and reports it
// running and exited, exactly as `tessera agent` does, minus the processes.
// Submitters post one single-GPU job per request over keep-alive connections:
// each sends its next job when the last is answered, or, with `rate`, every
// job at its due time (an open loop; virtual_agents.h).
//
// Measured (client side, one steady clock):
//   jobs_submitted_per_s     accepted (201, durable) submissions per second
//   jobs_started_per_s       assignments received by agents per second, from
//                            the first to the last start
//   submit_to_running_*_ms   request sent (or due, with --rate) -> its task
//                            assigned to an agent
//   server_peak_rss_mb       the server process's VmHWM
//   server_cpu_s             its CPU time (jobs per server CPU-second: the
//                            figure that does not depend on sharing the cores)
// With `hold`, every job is submitted before any agent joins, then all
// agents join at once: the burst that Slurm's peer script measures
// (partition down, submit, partition up).
#pragma once

#include <cstdint>
#include <string>

namespace tessera::bench {

struct ControlPlaneBenchOptions {
  int agents = 1000;
  int gpus_per_agent = 8;
  std::int64_t jobs = 50'000;
  double task_seconds = 1.0;  // how long each virtual task runs
  int submitters = 32;        // concurrent submission connections
  double rate = 0;            // jobs/s offered (open loop, virtual_agents.h); 0: closed loop
  int server_threads = 2;
  std::int64_t max_ended_jobs = 0;  // the server's --max-ended-jobs; 0: its default
  bool hold = false;
  // TLS on every connection, with mutual TLS for the agents (a certificate
  // each, from a CA made for the run), to measure what TLS costs.
  bool tls = false;
  std::string tessera;        // the binary to start as server (default: this one)
};

struct ControlPlaneBenchResult {
  bool tls = false;
  double rate = 0;
  std::int64_t max_ended_jobs = 0;
  int agents = 0;
  std::int64_t gpus = 0;
  std::int64_t jobs = 0;
  std::int64_t completed = 0;
  double jobs_submitted_per_s = 0;
  double jobs_started_per_s = 0;
  double submit_to_running_p50_ms = 0;
  double submit_to_running_p99_ms = 0;
  double server_peak_rss_mb = 0;
  double server_cpu_s = 0;       // user + system CPU the server process used
  double wall_s = 0;
  std::int64_t server_cycles = 0;
  std::int64_t store_transactions = 0;
  std::string error;  // set when the run could not finish
};

ControlPlaneBenchResult RunControlPlaneBench(const ControlPlaneBenchOptions& options);
std::string ToJson(const ControlPlaneBenchResult& result);
std::string ToText(const ControlPlaneBenchResult& result);

}  // namespace tessera::bench
