#include "bench/control_plane_bench.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "auth/certificates.h"
#include "bench/server_process.h"
#include "bench/virtual_agents.h"
#include "net/http_client.h"

namespace tessera::bench {
namespace {

namespace asio = boost::asio;
using nlohmann::json;
double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// A virtual agent's client context: the run's CA and a certificate naming its node.
Result<net::TlsContext> NodeTls(const std::string& pki, const std::string& node) {
  const std::string base = pki + "/nodes/" + node;
  TESSERA_RETURN_IF_ERROR(auth::IssueCertificate(pki, {node, {}}, base + ".crt", base + ".key"));
  return net::MakeClientTls({auth::CaFilesIn(pki).cert, base + ".crt", base + ".key"});
}

}  // namespace

ControlPlaneBenchResult RunControlPlaneBench(const ControlPlaneBenchOptions& options) {
  ControlPlaneBenchResult result;
  result.agents = options.agents;
  result.rate = options.rate;
  result.gpus = static_cast<std::int64_t>(options.agents) * options.gpus_per_agent;
  result.jobs = options.jobs;
  char dir_template[] = "/tmp/tessera-bench-cp.XXXXXX";
  const std::string dir = mkdtemp(dir_template);
  auth::ServerCertificates pki;
  if (options.tls) {
    Result<auth::ServerCertificates> made = auth::EnsureServerCertificates(dir + "/pki", {"127.0.0.1"});
    if (!made.ok()) {
      result.error = made.status().message();
      return result;
    }
    pki = *made;
  }
  Result<net::TlsContext> user_tls = options.tls ? net::MakeClientTls({pki.ca_cert, "", ""}) : net::TlsContext();
  std::vector<net::TlsContext> node_tls(static_cast<std::size_t>(options.agents));
  for (int i = 0; options.tls && i < options.agents && user_tls.ok(); ++i) {
    Result<net::TlsContext> made = NodeTls(dir + "/pki", "hollow-" + std::to_string(i));
    if (!made.ok()) user_tls = made.status();
    if (made.ok()) node_tls[static_cast<std::size_t>(i)] = *made;
  }
  if (!user_tls.ok()) {
    result.error = user_tls.status().message();
    return result;
  }
  std::vector<std::string> args = {"--threads", std::to_string(options.server_threads), "--heartbeat-timeout", "120"};
  if (options.max_ended_jobs > 0) args.insert(args.end(), {"--max-ended-jobs", std::to_string(options.max_ended_jobs)});
  if (options.tls) {
    const std::string pki_dir = dir + "/pki";
    args.insert(args.end(), {"--tls-cert", pki_dir + "/server.crt", "--tls-key", pki_dir + "/server.key", "--client-ca", pki_dir + "/ca.crt"});
  } else {
    args.push_back("--plain-http");
  }
  Result<ServerProcess> server = StartServerProcess(options.tessera, dir, args);
  if (!server.ok()) {
    result.error = server.status().message();
    return result;
  }
  const net::Endpoint endpoint = *net::ParseEndpoint(server->url);
  result.tls = options.tls;
  result.max_ended_jobs = options.max_ended_jobs;
  asio::io_context io(1);
  LoadCounters shared;
  const Clock::time_point start = Clock::now();
  Clock::time_point submit_start, submit_end;

  std::vector<std::shared_ptr<VirtualAgent>> agents;
  for (int i = 0; i < options.agents; ++i) {
    const VirtualAgentOptions agent{.index = i, .gpus = options.gpus_per_agent, .task_seconds = options.task_seconds, .telemetry = false};
    agents.push_back(std::make_shared<VirtualAgent>(io, endpoint, agent, shared, node_tls[static_cast<std::size_t>(i)]));
  }
  const auto start_agents = [&] {
    for (auto& agent : agents) agent->Start();
  };
  SubmitSchedule schedule{.total = options.jobs, .rate = options.rate, .start = Clock::now()};  // start: set when submitting begins
  std::vector<std::shared_ptr<Submitter>> submitters;
  const auto on_submitted = [&] {
    submit_end = Clock::now();
    if (options.hold) start_agents();
  };
  const auto start_submitting = [&] {
    submit_start = Clock::now();
    schedule.start = submit_start;
    for (int i = 0; i < options.submitters; ++i) {
      submitters.push_back(std::make_shared<Submitter>(io, endpoint, schedule, [](std::int64_t) { return 1.0; }, shared,
                                                       on_submitted, *user_tls));
      submitters.back()->Start();
    }
  };
  // Without hold, submit once every agent is registered, so capacity is there from the start.
  asio::steady_timer waiter(io);
  std::function<void()> wait_registered = [&] {
    if (shared.registered == options.agents) return start_submitting();
    waiter.expires_after(std::chrono::milliseconds(20));
    waiter.async_wait([&](boost::system::error_code) { wait_registered(); });
  };
  if (options.hold) {
    start_submitting();
  } else {
    start_agents();
    wait_registered();
  }
  // Run until every job has completed, an error, or a generous deadline.
  const auto deadline = start + std::chrono::seconds(static_cast<std::int64_t>(120 + options.jobs * options.task_seconds / 50));
  while (shared.completed < options.jobs && shared.error.empty() && Clock::now() < deadline) {
    io.run_for(std::chrono::milliseconds(100));
  }
  result.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  result.completed = shared.completed;
  if (!shared.error.empty()) result.error = shared.error;
  if (shared.completed < options.jobs && result.error.empty()) result.error = "timed out: " + std::to_string(shared.completed) + " jobs completed";

  std::vector<double> latencies;
  Clock::time_point first = Clock::time_point::max(), last = Clock::time_point::min();
  for (const auto& [job, at] : shared.started_at) {
    first = std::min(first, at);
    last = std::max(last, at);
    auto sent = shared.submitted_at.find(job);
    if (sent != shared.submitted_at.end()) latencies.push_back(Ms(at - sent->second));
  }
  if (shared.started_at.size() > 1 && last > first) {
    result.jobs_started_per_s = static_cast<double>(shared.started_at.size() - 1) / std::chrono::duration<double>(last - first).count();
  }
  if (submit_end > submit_start) {
    result.jobs_submitted_per_s = static_cast<double>(shared.accepted) / std::chrono::duration<double>(submit_end - submit_start).count();
  }
  // In the held burst the wait before agents join is the test's doing, not latency.
  if (!options.hold) {
    result.submit_to_running_p50_ms = Percentile(latencies, 0.50);
    result.submit_to_running_p99_ms = Percentile(latencies, 0.99);
  }
  net::HttpClient client(endpoint, *user_tls);
  if (Result<net::HttpResponse> r = client.Send("GET", "/v1/cluster"); r.ok() && r->status == 200) {
    const json cluster = json::parse(r->body);
    result.server_cycles = cluster.value("cycles", std::int64_t{0});
    result.store_transactions = cluster.value("storeTransactions", std::int64_t{0});
  }
  result.server_peak_rss_mb = PeakRssMb(server->pid);
  result.server_cpu_s = CpuSeconds(server->pid);
  StopServerProcess(*server);
  if (result.error.empty()) std::filesystem::remove_all(dir);
  return result;
}

std::string ToJson(const ControlPlaneBenchResult& r) {
  json j = {{"tls", r.tls},
            {"rate", r.rate},
            {"max_ended_jobs", r.max_ended_jobs},
            {"agents", r.agents},
            {"gpus", r.gpus},
            {"jobs", r.jobs},
            {"completed", r.completed},
            {"jobs_submitted_per_s", r.jobs_submitted_per_s},
            {"jobs_started_per_s", r.jobs_started_per_s},
            {"submit_to_running_p50_ms", r.submit_to_running_p50_ms},
            {"submit_to_running_p99_ms", r.submit_to_running_p99_ms},
            {"server_peak_rss_mb", r.server_peak_rss_mb},
            {"server_cpu_s", r.server_cpu_s},
            {"jobs_per_server_cpu_s", r.server_cpu_s > 0 ? static_cast<double>(r.completed) / r.server_cpu_s : 0.0},
            {"wall_s", r.wall_s},
            {"server_cycles", r.server_cycles},
            {"store_transactions", r.store_transactions}};
  if (!r.error.empty()) j["error"] = r.error;
  return j.dump();
}

std::string ToText(const ControlPlaneBenchResult& r) {
  char buffer[1024];
  std::snprintf(buffer, sizeof buffer,
                "control plane%s: %d agents, %lld GPUs, %lld jobs (%lld completed) in %.1f s\n"
                "  submitted   %.0f jobs/s (durable before the answer)\n"
                "  started     %.0f jobs/s\n"
                "  submit->running p50 %.1f ms, p99 %.1f ms\n"
                "  server: peak RSS %.0f MB, %.1f CPU-s (%.0f jobs per CPU-s), %lld cycles, %lld store transactions%s%s\n",
                r.tls ? " over TLS (agents with mutual TLS)" : "", r.agents, static_cast<long long>(r.gpus),
                static_cast<long long>(r.jobs), static_cast<long long>(r.completed),
                r.wall_s, r.jobs_submitted_per_s, r.jobs_started_per_s, r.submit_to_running_p50_ms, r.submit_to_running_p99_ms,
                r.server_peak_rss_mb, r.server_cpu_s, r.server_cpu_s > 0 ? static_cast<double>(r.completed) / r.server_cpu_s : 0.0,
                static_cast<long long>(r.server_cycles), static_cast<long long>(r.store_transactions),
                r.error.empty() ? "" : "\n  ERROR: ", r.error.c_str());
  return buffer;
}

}  // namespace tessera::bench
