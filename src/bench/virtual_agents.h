// Virtual agents and submitters, the load of the scale benchmarks: like
// Kubernetes' hollow nodes, each VirtualAgent registers, long-polls its
// assignment set over its own connections, "runs" each task for a set time
// and reports it running and exited, exactly as `tessera agent` does, minus
// the processes. All of them share one io_context thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>

#include <utility>  // before Asio: its awaitable.hpp uses std::exchange

#include <boost/asio.hpp>

#include "api/agent_protocol.h"
#include "net/async_http_client.h"

namespace tessera::bench {

using Clock = std::chrono::steady_clock;

// What all virtual agents and submitters share; touched only on the io thread.
struct LoadCounters {
  std::unordered_map<std::int64_t, Clock::time_point> submitted_at;  // job -> request sent (due, with a rate)
  std::unordered_map<std::int64_t, Clock::time_point> started_at;    // job -> first assignment seen
  std::int64_t accepted = 0;
  std::int64_t completed = 0;
  int registered = 0;
  std::string error;
};

struct VirtualAgentOptions {
  int index = 0;              // hollow-<index>; 32 nodes per leaf, 512 per spine
  int gpus = 8;
  double task_seconds = 1.0;  // how long each task "runs"
  // Heartbeats carry GPU telemetry as real agents' do: a held GPU is busy
  // (90%) unless its job's id is a multiple of 5 (0%: an idle allocation).
  bool telemetry = false;
};

class VirtualAgent : public std::enable_shared_from_this<VirtualAgent> {
 public:
  // `tls` (for an https server) carries this node's certificate when the server requires one.
  VirtualAgent(boost::asio::io_context& io, const net::Endpoint& server, const VirtualAgentOptions& options, LoadCounters& counters,
               net::TlsContext tls = nullptr);
  void Start();

 private:
  struct Task {
    bool exited = false;
    std::vector<std::int32_t> gpus;
  };

  void Poll();
  void OnAssignments(int status, const std::string& body);
  void Report();  // level-triggered, as the real agent: every listed task with its state
  void Heartbeat();

  boost::asio::io_context& io_;
  net::AsyncHttpConnection poll_;
  net::AsyncHttpConnection status_;
  std::chrono::milliseconds task_time_;
  bool telemetry_;
  boost::asio::steady_timer heartbeat_;
  LoadCounters& counters_;
  api::NodeInventory inventory_;
  std::int64_t revision_ = -1;
  std::map<api::TaskKey, Task> tasks_;
  bool reporting_ = false;
  bool report_again_ = false;
};

// The jobs to submit, shared by every Submitter. Without a rate each
// submitter sends its next job when the last is answered (a closed loop: a
// slower server is offered less). With one, job n is due at
// start + n / rate whatever the answers (an open loop, as wrk2 runs it), and
// its latency counts from when it was due, so a server that falls behind
// cannot hide it by slowing the load (coordinated omission); a submitter
// still in flight at a job's due time sends it late.
struct SubmitSchedule {
  std::int64_t next = 0;
  std::int64_t total = 0;
  double rate = 0;  // jobs per second; 0: closed loop
  Clock::time_point start;
};

// Submits jobs one request at a time over one keep-alive connection, taking
// numbers from the shared schedule; several run side by side.
// `gpus_of(n)` sizes job n (GPUs of its one task).
class Submitter : public std::enable_shared_from_this<Submitter> {
 public:
  Submitter(boost::asio::io_context& io, const net::Endpoint& server, SubmitSchedule& schedule,
            std::function<double(std::int64_t)> gpus_of, LoadCounters& counters, std::function<void()> on_done,
            net::TlsContext tls = nullptr);
  void Start();

 private:
  void Send(std::int64_t n, Clock::time_point due);

  net::AsyncHttpConnection conn_;
  boost::asio::steady_timer due_timer_;
  SubmitSchedule& schedule_;
  std::function<double(std::int64_t)> gpus_of_;
  LoadCounters& counters_;
  std::function<void()> on_done_;
};

}  // namespace tessera::bench
