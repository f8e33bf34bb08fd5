#include "bench/api_bench.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <thread>

#include <nlohmann/json.hpp>

#include "bench/server_process.h"
#include "bench/virtual_agents.h"
#include "net/http_client.h"

namespace tessera::bench {
namespace {

namespace asio = boost::asio;
using nlohmann::json;

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// `count` jobs of one task with `gpus` GPUs each, as one multi-document YAML body.
std::string Jobs(const std::string& prefix, std::int64_t first, std::int64_t count, int gpus) {
  std::string body;
  for (std::int64_t i = first; i < first + count; ++i) {
    body += "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: " + prefix + std::to_string(i) +
            "}\nspec: {tasks: [{name: t, command: [sleep, '1'], resources: {gpus: " + std::to_string(gpus) + "}}]}\n---\n";
  }
  return body;
}

Status SubmitInBatches(net::HttpClient& client, const std::string& prefix, std::int64_t total, int gpus) {
  constexpr std::int64_t kBatch = 500;
  for (std::int64_t first = 0; first < total; first += kBatch) {
    Result<net::HttpResponse> r = client.Send("POST", "/v1/jobs", Jobs(prefix, first, std::min(kBatch, total - first), gpus), "application/yaml");
    if (!r.ok()) return r.status();
    if (r->status != 201) return Internal("submitting " + prefix + " jobs: " + std::to_string(r->status) + " " + r->body.substr(0, 300));
  }
  return Status::Ok();
}

// Polls GET /v1/cluster until `done` holds, or fails after `limit`.
Result<json> AwaitCluster(net::HttpClient& client, const std::string& what, std::chrono::seconds limit,
                          const std::function<bool(const json&)>& done) {
  const auto deadline = Clock::now() + limit;
  json cluster;
  while (Clock::now() < deadline) {
    Result<net::HttpResponse> r = client.Send("GET", "/v1/cluster");
    if (r.ok() && r->status == 200) {
      cluster = json::parse(r->body);
      if (done(cluster)) return cluster;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return Internal("timed out after " + std::to_string(limit.count()) + " s waiting for " + what + "; last: " + cluster.dump());
}

// One client sending `request` back to back until `stop`, timing each answer.
struct Loop {
  std::vector<double> ms;
  std::string error;
};
void RunLoop(const net::Endpoint& endpoint, const std::atomic<bool>& stop, Loop& out,
             const std::function<Status(net::HttpClient&)>& request) {
  net::HttpClient client(endpoint);
  while (!stop && out.error.empty()) {
    const Clock::time_point sent = Clock::now();
    if (Status s = request(client); !s.ok()) out.error = s.message();
    out.ms.push_back(Ms(Clock::now() - sent));
  }
}

Status Expect(const Result<net::HttpResponse>& r, int status, const char* what) {
  if (!r.ok()) return r.status();
  if (r->status != status) return Internal(std::string(what) + ": " + std::to_string(r->status) + " " + r->body.substr(0, 200));
  return Status::Ok();
}

}  // namespace

ApiBenchResult RunApiBench(const ApiBenchOptions& options) {
  ApiBenchResult result;
  result.gpus = options.gpus;
  result.nodes = (options.gpus + options.gpus_per_node - 1) / options.gpus_per_node;
  char dir_template[] = "/tmp/tessera-bench-api.XXXXXX";
  const std::string dir = mkdtemp(dir_template);
  Result<ServerProcess> server = StartServerProcess(
      options.tessera, dir, {"--plain-http", "--threads", std::to_string(options.server_threads), "--heartbeat-timeout", "600"});
  if (!server.ok()) {
    result.error = server.status().message();
    return result;
  }
  const net::Endpoint endpoint = *net::ParseEndpoint(server->url);
  const auto fail = [&](const Status& s) {
    result.error = s.message();
    return result;
  };

  // Every node, on one io thread; their tasks never end within the run.
  asio::io_context io(1);
  LoadCounters counters;
  std::vector<std::shared_ptr<VirtualAgent>> agents;
  for (std::int64_t i = 0; i < result.nodes; ++i) {
    const VirtualAgentOptions agent{.index = static_cast<int>(i), .gpus = options.gpus_per_node, .task_seconds = 1e7, .telemetry = false};
    agents.push_back(std::make_shared<VirtualAgent>(io, endpoint, agent, counters));
    agents.back()->Start();
  }
  auto work = asio::make_work_guard(io);
  std::thread io_thread([&] { io.run(); });
  const auto stop_io = [&] {
    work.reset();
    io.stop();
    io_thread.join();
  };
  net::HttpClient client(endpoint);
  Result<json> ready = AwaitCluster(client, "every node to register", std::chrono::seconds(300),
                                    [&](const json& c) { return c.value("readyNodes", 0) == result.nodes; });
  // Fill every node, then the backlog that cannot start.
  Status status = ready.ok() ? SubmitInBatches(client, "fill-", result.nodes, options.gpus_per_node) : ready.status();
  if (status.ok()) {
    ready = AwaitCluster(client, "the fill jobs to run", std::chrono::seconds(300),
                         [&](const json& c) { return c.value("runningJobs", std::int64_t{0}) == result.nodes; });
    status = ready.status();
  }
  const Clock::time_point backlog_start = Clock::now();
  if (status.ok()) status = SubmitInBatches(client, "backlog-", options.pending, 1);
  result.backlog_submit_s = std::chrono::duration<double>(Clock::now() - backlog_start).count();
  if (!status.ok()) {
    stop_io();
    StopServerProcess(*server);
    return fail(status);
  }

  // The window: three clients and a sampler.
  std::atomic<bool> stop{false};
  const std::int64_t first_backlog = result.nodes;  // ids are handed out in submission order from 0
  Loop get, list, submit;
  std::int64_t submitted = 0;
  std::thread getter([&] {
    std::mt19937_64 rng(1);
    std::uniform_int_distribution<std::int64_t> pick(first_backlog, first_backlog + options.pending - 1);
    RunLoop(endpoint, stop, get, [&](net::HttpClient& c) { return Expect(c.Send("GET", "/v1/jobs/" + std::to_string(pick(rng))), 200, "get"); });
  });
  std::thread lister([&] {
    RunLoop(endpoint, stop, list, [](net::HttpClient& c) { return Expect(c.Send("GET", "/v1/jobs?limit=100"), 200, "list"); });
  });
  std::thread submitter([&] {
    RunLoop(endpoint, stop, submit, [&](net::HttpClient& c) {
      return Expect(c.Send("POST", "/v1/jobs", Jobs("window-", submitted++, 1, 1), "application/yaml"), 201, "submit");
    });
  });
  std::vector<double> cycle_ms;
  std::int64_t cycles_before = -1, cycles_after = 0, last_cycles = -1;
  const Clock::time_point window_start = Clock::now();
  while (Clock::now() - window_start < std::chrono::duration<double>(options.seconds)) {
    Result<net::HttpResponse> r = client.Send("GET", "/v1/cluster");
    if (r.ok() && r->status == 200) {
      const json c = json::parse(r->body);
      const std::int64_t cycles = c.value("cycles", std::int64_t{0});
      if (cycles_before < 0) {
        cycles_before = cycles;
        result.pending = c.value("pendingJobs", std::int64_t{0});
      }
      if (cycles != last_cycles && last_cycles >= 0) cycle_ms.push_back(c.value("lastCycleMs", 0.0));
      last_cycles = cycles_after = cycles;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const double window_s = std::chrono::duration<double>(Clock::now() - window_start).count();
  stop = true;
  for (std::thread* t : {&getter, &lister, &submitter}) t->join();
  result.server_peak_rss_mb = PeakRssMb(server->pid);
  stop_io();
  StopServerProcess(*server);

  for (const Loop* loop : {&get, &list, &submit}) {
    if (!loop->error.empty() && result.error.empty()) result.error = loop->error;
  }
  result.cycles_per_s = static_cast<double>(cycles_after - cycles_before) / window_s;
  result.cycle_ms = Percentile(cycle_ms, 0.5);
  result.cycle_p99_ms = Percentile(cycle_ms, 0.99);
  result.api_get_p50_ms = Percentile(get.ms, 0.5);
  result.api_get_p99_ms = Percentile(get.ms, 0.99);
  result.api_list_p50_ms = Percentile(list.ms, 0.5);
  result.api_list_p99_ms = Percentile(list.ms, 0.99);
  result.api_submit_p50_ms = Percentile(submit.ms, 0.5);
  result.api_submit_p99_ms = Percentile(submit.ms, 0.99);
  result.gets = static_cast<std::int64_t>(get.ms.size());
  result.lists = static_cast<std::int64_t>(list.ms.size());
  result.submits = static_cast<std::int64_t>(submit.ms.size());
  if (result.error.empty()) std::filesystem::remove_all(dir);
  return result;
}

std::string ToJson(const ApiBenchResult& r) {
  json j = {{"gpus", r.gpus},
            {"nodes", r.nodes},
            {"pending", r.pending},
            {"backlog_submit_s", r.backlog_submit_s},
            {"cycle_ms", r.cycle_ms},
            {"cycle_p99_ms", r.cycle_p99_ms},
            {"cycles_per_s", r.cycles_per_s},
            {"api_get_p50_ms", r.api_get_p50_ms},
            {"api_get_p99_ms", r.api_get_p99_ms},
            {"api_list_p50_ms", r.api_list_p50_ms},
            {"api_list_p99_ms", r.api_list_p99_ms},
            {"api_submit_p50_ms", r.api_submit_p50_ms},
            {"api_submit_p99_ms", r.api_submit_p99_ms},
            {"gets", r.gets},
            {"lists", r.lists},
            {"submits", r.submits},
            {"server_peak_rss_mb", r.server_peak_rss_mb}};
  if (!r.error.empty()) j["error"] = r.error;
  return j.dump();
}

std::string ToText(const ApiBenchResult& r) {
  char buffer[1024];
  std::snprintf(buffer, sizeof buffer,
                "api under back-to-back cycles: %lld GPUs on %lld nodes, %lld jobs pending (submitted in %.1f s)\n"
                "  cycles      %.1f per s, median %.1f ms, p99 %.1f ms\n"
                "  get job     p50 %.2f ms, p99 %.2f ms (%lld)\n"
                "  list jobs   p50 %.2f ms, p99 %.2f ms (%lld, first page of 100)\n"
                "  submit job  p50 %.2f ms, p99 %.2f ms (%lld, durable before the answer)\n"
                "  server: peak RSS %.0f MB%s%s\n",
                static_cast<long long>(r.gpus), static_cast<long long>(r.nodes), static_cast<long long>(r.pending), r.backlog_submit_s,
                r.cycles_per_s, r.cycle_ms, r.cycle_p99_ms, r.api_get_p50_ms, r.api_get_p99_ms, static_cast<long long>(r.gets),
                r.api_list_p50_ms, r.api_list_p99_ms, static_cast<long long>(r.lists), r.api_submit_p50_ms, r.api_submit_p99_ms,
                static_cast<long long>(r.submits), r.server_peak_rss_mb, r.error.empty() ? "" : "\n  ERROR: ", r.error.c_str());
  return buffer;
}

}  // namespace tessera::bench
