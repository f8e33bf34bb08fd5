// The step protocol between srun (on node 0) and the step worker of every
// other node of a Slurm allocation, over TCP (Boost.Asio), authenticated by
// the job's per-run secret (TESSERA_STEP_SECRET, which only the run's tasks
// hold).
//
// A frame is one line of JSON (its header) and, when the header has "size",
// that many raw bytes after the line (task output, which need not be UTF-8).
//
//   client -> worker  {"type":"hello","secret":S,"job":J,"node":R}
//   worker -> client  {"type":"ready"}  or  {"type":"refused","message":M}, then close
//   client -> worker  {"type":"launch","argv":[...],"env":{...},"cwd":C,
//                      "tasks":[{"task":PROCID,"env":{...}}, ...]}
//   worker -> client  {"type":"output","task":PROCID,"stream":"stdout"|"stderr","size":N} + N bytes
//   worker -> client  {"type":"exit","task":PROCID,"code":C}   (one per task; then the worker closes)
//   client -> worker  {"type":"end"}  (node 0's step runner, when the batch
//                      script has ended) -> {"type":"bye"}, and the worker exits 0
//
// A client that closes its connection before every task exited stops them
// (SIGTERM, SIGKILL 5 s later). Ports: the worker of node rank R listens on
// the first free of StepPorts(job, attempt, R), which srun tries in order;
// a port held by another job's worker refuses the hello (another secret).
#pragma once

// Boost 1.74's awaitable.hpp uses std::exchange without including <utility>.
#include <utility>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace tessera::cli::slurm {

// Candidate ports in [40000, 60000) for a node's step worker.
std::vector<std::uint16_t> StepPorts(const std::string& job_id, std::int32_t attempt, std::int32_t node_rank);

// Compares secrets in time independent of where they differ.
bool SameSecret(const std::string& a, const std::string& b);

// Frames over one socket. Reads throw boost::system::system_error on a
// closed or failed connection (caught where each coroutine starts); Send
// queues, so that several coroutines may send on one socket.
class FrameStream {
 public:
  explicit FrameStream(boost::asio::ip::tcp::socket socket) : socket_(std::move(socket)) {}
  boost::asio::awaitable<nlohmann::json> Read(std::string* payload = nullptr);
  void Send(const nlohmann::json& header, const std::string& payload = {});
  // Waits until everything queued is written.
  boost::asio::awaitable<void> Flush();
  boost::asio::ip::tcp::socket& socket() { return socket_; }
  void Close();

 private:
  boost::asio::awaitable<void> Drain();

  boost::asio::ip::tcp::socket socket_;
  std::string buffer_;
  std::deque<std::string> queue_;
  bool writing_ = false;
};

}  // namespace tessera::cli::slurm
