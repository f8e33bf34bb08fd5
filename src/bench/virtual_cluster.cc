#include "bench/virtual_cluster.h"

#include <csignal>
#include <cstdio>
#include <vector>

#include "bench/virtual_agents.h"

namespace tessera::bench {
namespace {

volatile std::sig_atomic_t stop_requested = 0;

}  // namespace

std::string RunVirtualCluster(const VirtualClusterOptions& options) {
  const Result<net::Endpoint> endpoint = net::ParseEndpoint(options.server);
  if (!endpoint.ok()) return endpoint.status().message();
  std::signal(SIGINT, [](int) { stop_requested = 1; });
  std::signal(SIGTERM, [](int) { stop_requested = 1; });
  boost::asio::io_context io(1);
  LoadCounters counters;
  std::vector<std::shared_ptr<VirtualAgent>> agents;
  for (int i = 0; i < options.agents; ++i) {
    const VirtualAgentOptions agent{.index = i, .gpus = options.gpus_per_agent, .task_seconds = options.task_seconds, .telemetry = true};
    agents.push_back(std::make_shared<VirtualAgent>(io, *endpoint, agent, counters));
    agents.back()->Start();
  }
  static constexpr double kSizes[] = {1, 1, 1, 1, 2, 2, 4, 8};
  SubmitSchedule schedule{.total = options.jobs, .start = Clock::now()};
  std::vector<std::shared_ptr<Submitter>> submitters;
  bool submitting = false, announced = false;
  const Clock::time_point start = Clock::now();
  while (stop_requested == 0 && counters.error.empty()) {
    io.run_for(std::chrono::milliseconds(100));
    if (!submitting && counters.registered == options.agents) {
      submitting = true;
      std::fprintf(stderr, "virtual cluster: %d agents, %d GPUs registered; submitting %lld jobs\n", options.agents,
                   options.agents * options.gpus_per_agent, static_cast<long long>(options.jobs));
      for (int i = 0; i < 16; ++i) {
        submitters.push_back(std::make_shared<Submitter>(
            io, *endpoint, schedule, [](std::int64_t n) { return kSizes[n % 8]; }, counters,
            [&] { std::fprintf(stderr, "virtual cluster: %lld jobs accepted\n", static_cast<long long>(counters.accepted)); }));
        submitters.back()->Start();
      }
    }
    if (!announced && counters.accepted == options.jobs && options.jobs > 0) {
      announced = true;
      std::fprintf(stderr, "virtual cluster: ready (%zu jobs started so far)\n", counters.started_at.size());
    }
    if (options.duration_seconds > 0 && Clock::now() - start > std::chrono::duration<double>(options.duration_seconds)) break;
  }
  return counters.error;
}

}  // namespace tessera::bench
