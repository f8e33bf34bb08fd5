#include "cli/slurm/step_worker.h"

#include <signal.h>
#include <unistd.h>

#include <utility>  // before Asio (Boost 1.74 needs it)

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <map>
#include <memory>
#include <set>
#include <string>

#include "cli/slurm/processes.h"
#include "cli/slurm/step_protocol.h"

namespace tessera::cli::slurm {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using nlohmann::json;

void Log(const std::string& message) {
  const std::string line = "tessera step worker: " + message + "\n";
  (void)!write(2, line.data(), line.size());
}

class Worker {
 public:
  Worker(asio::io_context& io, const AllocationView& a, const Environment& env)
      : io_(io), a_(a), env_(env), processes_(io, [this](std::int32_t id, int stream, std::string_view data) { Output(id, stream, data); },
                                              [this](std::int32_t id, int code) { Exited(id, code); }) {}

  int exit_code() const { return exit_code_; }

  asio::awaitable<void> Serve(tcp::acceptor acceptor) {
    for (;;) {
      tcp::socket socket = co_await acceptor.async_accept(asio::use_awaitable);
      asio::co_spawn(io_, Connection(std::make_shared<FrameStream>(std::move(socket))), asio::detached);
    }
  }

  void Stop(int code) {
    exit_code_ = code;
    processes_.Signal(SIGTERM);
    io_.stop();
  }

 private:
  struct Task {
    std::shared_ptr<FrameStream> stream;
    std::int32_t procid = 0;
  };

  asio::awaitable<void> Connection(std::shared_ptr<FrameStream> stream) {
    std::set<std::int32_t> mine;  // the ids of this connection's tasks
    try {
      asio::steady_timer hello_deadline(io_, std::chrono::seconds(10));
      hello_deadline.async_wait([stream](const boost::system::error_code& e) {
        if (!e) stream->Close();
      });
      const json hello = co_await stream->Read();
      hello_deadline.cancel();
      if (hello["type"] != "hello" || !SameSecret(hello.value("secret", ""), a_.secret) || hello.value("job", "") != a_.job_id ||
          hello.value("node", -1) != a_.node_rank) {
        stream->Send({{"type", "refused"}, {"message", "not this job's step worker"}});
        co_await stream->Flush();
        stream->Close();
        co_return;
      }
      stream->Send({{"type", "ready"}});
      const json request = co_await stream->Read();
      if (request["type"] == "end") {
        stream->Send({{"type", "bye"}});
        co_await stream->Flush();
        Log("the batch step ended; done");
        Stop(0);
        co_return;
      }
      if (request["type"] != "launch") throw boost::system::system_error(asio::error::invalid_argument);
      Launch launch;
      launch.argv = request.value("argv", std::vector<std::string>{});
      launch.cwd = request.value("cwd", "");
      const Environment sent = request.value("env", Environment{});
      for (const auto& [k, v] : sent) {
        if (!NodeLocal(k)) launch.env[k] = v;
      }
      for (const auto& [k, v] : env_) {
        if (NodeLocal(k) || !launch.env.contains(k)) launch.env[k] = v;  // this node's own values
      }
      for (const json& t : request.value("tasks", json::array())) {
        Launch one = launch;
        for (const auto& [k, v] : t.value("env", Environment{})) one.env[k] = v;
        const std::int32_t id = next_id_++;
        tasks_[id] = {stream, t.value("task", 0)};
        mine.insert(id);
        processes_.Start(id, one);
      }
      // Until the tasks exit (Exited closes the stream) or srun goes away.
      for (;;) co_await stream->Read();
    } catch (const std::exception&) {
      // srun left (or the connection failed): stop what it started here
    }
    bool any = false;
    for (const std::int32_t id : mine) {
      if (tasks_.contains(id)) {
        processes_.Signal(id, SIGTERM);
        any = true;
      }
    }
    if (any) {
      asio::steady_timer grace(io_, std::chrono::seconds(5));
      co_await grace.async_wait(asio::use_awaitable);
      for (const std::int32_t id : mine) {
        if (tasks_.contains(id)) processes_.Signal(id, SIGKILL);
      }
    }
  }

  void Output(std::int32_t id, int stream, std::string_view data) {
    const auto it = tasks_.find(id);
    if (it == tasks_.end()) return;
    it->second.stream->Send({{"type", "output"}, {"task", it->second.procid}, {"stream", stream == 1 ? "stdout" : "stderr"}},
                            std::string(data));
  }

  void Exited(std::int32_t id, int code) {
    const auto it = tasks_.find(id);
    if (it == tasks_.end()) return;
    const std::shared_ptr<FrameStream> stream = it->second.stream;
    stream->Send({{"type", "exit"}, {"task", it->second.procid}, {"code", code}});
    tasks_.erase(it);
    for (const auto& [other, task] : tasks_) {
      if (task.stream == stream) return;
    }
    // The connection's last task: close once the frames are out.
    asio::co_spawn(io_, [stream]() -> asio::awaitable<void> {
      co_await stream->Flush();
      stream->Close();
    }, asio::detached);
  }

  asio::io_context& io_;
  const AllocationView& a_;
  const Environment& env_;
  Processes processes_;
  std::map<std::int32_t, Task> tasks_;
  std::int32_t next_id_ = 0;
  int exit_code_ = 0;
};

}  // namespace

int RunStepWorker(const AllocationView& a, const Environment& env) {
  asio::io_context io;
  tcp::acceptor acceptor(io);
  std::uint16_t bound = 0;
  for (const std::uint16_t port : StepPorts(a.job_id, a.attempt, a.node_rank)) {
    boost::system::error_code error;
    tcp::acceptor candidate(io);
    const tcp::endpoint endpoint(tcp::v4(), port);
    candidate.open(endpoint.protocol(), error);
    if (!error) candidate.set_option(asio::socket_base::reuse_address(true), error);
    if (!error) candidate.bind(endpoint, error);
    if (!error) candidate.listen(asio::socket_base::max_listen_connections, error);
    if (!error) {
      acceptor = std::move(candidate);
      bound = port;
      break;
    }
  }
  if (bound == 0) {
    Log("no free port among this job's step ports; srun cannot reach " + a.nodes[a.node_rank]);
    return 1;
  }
  Log("job " + a.job_id + ", node " + a.nodes[a.node_rank] + " (rank " + std::to_string(a.node_rank) + "): waiting for srun on port " +
      std::to_string(bound));
  Worker worker(io, a, env);
  asio::signal_set ignored(io, SIGUSR1, SIGUSR2, SIGHUP);  // the tasks receive them through the group
  std::function<void()> watch = [&] { ignored.async_wait([&](const boost::system::error_code& e, int) { if (!e) watch(); }); };
  watch();
  asio::signal_set stop(io, SIGTERM, SIGINT);
  stop.async_wait([&](const boost::system::error_code& e, int signal) {
    if (!e) worker.Stop(128 + signal);
  });
  asio::co_spawn(io, worker.Serve(std::move(acceptor)), asio::detached);
  io.run();
  return worker.exit_code();
}

}  // namespace tessera::cli::slurm
