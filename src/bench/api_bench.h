// tessera bench api: how the API answers while scheduling cycles over a large
// backlog run back to back. A real `tessera server` (a child process, SQLite)
// gets virtual agents for every node (virtual_agents.h), one job per node
// that holds all its GPUs, then the backlog: `pending` one-GPU jobs that
// cannot start. Then, for `seconds`, three clients each send one request at
// a time: GET /v1/jobs/ID of a random backlog job, GET /v1/jobs?limit=100
// (the first page), and POST /v1/jobs (one more pending job, which also asks
// for a cycle, so cycles follow each other without pause). A sampler reads
// GET /v1/cluster for the cycles run and how long each took.
//
// Measured (client side): api_get/list/submit p50 and p99 in ms, requests
// of each; cycle_ms (median of the sampled cycles, each from taking the
// state to applying its decisions), cycles_per_s.
#pragma once

#include <cstdint>
#include <string>

namespace tessera::bench {

struct ApiBenchOptions {
  std::int64_t gpus = 25'000;
  int gpus_per_node = 8;
  std::int64_t pending = 100'000;
  double seconds = 20;        // the measurement window
  int server_threads = 2;
  std::string tessera;        // the binary to start as server (default: this one)
};

struct ApiBenchResult {
  std::int64_t gpus = 0;
  std::int64_t nodes = 0;
  std::int64_t pending = 0;    // backlog when the window opened
  double backlog_submit_s = 0; // time to submit it
  double cycle_ms = 0;
  double cycle_p99_ms = 0;
  double cycles_per_s = 0;
  double api_get_p50_ms = 0, api_get_p99_ms = 0;
  double api_list_p50_ms = 0, api_list_p99_ms = 0;
  double api_submit_p50_ms = 0, api_submit_p99_ms = 0;
  std::int64_t gets = 0, lists = 0, submits = 0;
  double server_peak_rss_mb = 0;
  std::string error;  // set when the run could not finish
};

ApiBenchResult RunApiBench(const ApiBenchOptions& options);
std::string ToJson(const ApiBenchResult& result);
std::string ToText(const ApiBenchResult& result);

}  // namespace tessera::bench
