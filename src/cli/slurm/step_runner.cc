#include "cli/slurm/step_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <utility>  // before Asio (Boost 1.74 needs it)

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/slurm/processes.h"
#include "cli/slurm/slurm_env.h"
#include "cli/slurm/step_protocol.h"
#include "cli/slurm/step_worker.h"

namespace tessera::cli::slurm {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using asio::ip::tcp;
using nlohmann::json;

void Log(const std::string& message) { WriteAll(2, "tessera slurm-step: " + message + "\n"); }

std::string SelfPath() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("tessera") : self.string();
}

std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The batch step's private directory: the script, `bin/srun`, the step counter.
Result<fs::path> MakeStepDir(const std::string& job_id, const std::string& script) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/tessera-slurm-" + job_id + "-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) return Internal("cannot create " + pattern + ": " + std::strerror(errno));
  const fs::path dir(pattern);
  std::error_code ec;
  fs::create_directory(dir / "bin", ec);
  std::ofstream(dir / "slurm_script") << script;
  std::ofstream(dir / "bin" / "srun") << "#!/bin/sh\n# srun of a Tessera batch step: tessera srun (docs/slurm.md)\nexec "
                                      << Quote(SelfPath()) << " srun \"$@\"\n";
  fs::permissions(dir / "slurm_script", fs::perms::owner_all, ec);
  fs::permissions(dir / "bin" / "srun", fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec, ec);
  if (ec) return Internal("cannot prepare " + dir.string() + ": " + ec.message());
  return dir;
}

// Opens an -o/-e file; -1 (and a message in the task's log) when it cannot.
int OpenOutput(const std::string& path, bool append) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC), 0644);
  if (fd < 0) Log("cannot open " + path + ": " + std::strerror(errno) + "; the output goes to the task's log only");
  return fd;
}

// Tells node `rank`'s step worker that the batch step ended; true once it said bye.
asio::awaitable<bool> EndWorker(const AllocationView& a, std::int32_t rank, std::chrono::steady_clock::time_point deadline) {
  auto executor = co_await asio::this_coro::executor;
  tcp::resolver resolver(executor);
  asio::steady_timer pause(executor);
  while (std::chrono::steady_clock::now() < deadline) {
    for (const std::uint16_t port : StepPorts(a.job_id, a.attempt, rank)) {
      try {
        auto endpoints = co_await resolver.async_resolve(a.addresses[rank], std::to_string(port), asio::use_awaitable);
        FrameStream stream{tcp::socket(executor)};
        asio::steady_timer limit(executor, std::chrono::seconds(3));
        limit.async_wait([&stream](const boost::system::error_code& e) {
          if (!e) stream.Close();
        });
        co_await asio::async_connect(stream.socket(), endpoints, asio::use_awaitable);
        stream.Send({{"type", "hello"}, {"secret", a.secret}, {"job", a.job_id}, {"node", rank}});
        if ((co_await stream.Read())["type"] != "ready") continue;
        stream.Send({{"type", "end"}});
        const json bye = co_await stream.Read();
        limit.cancel();
        if (bye["type"] == "bye") co_return true;
      } catch (const boost::system::system_error&) {
        // not listening yet, or another job's worker: the next port, then again
      }
    }
    pause.expires_after(std::chrono::milliseconds(200));
    co_await pause.async_wait(asio::use_awaitable);
  }
  co_return false;
}

int RunBatchStep(const AllocationView& a, Environment env) {
  const json config = json::parse(env["TESSERA_SLURM_STEP"], nullptr, false);
  if (config.is_discarded() || !config.is_object()) {
    Log("TESSERA_SLURM_STEP is missing or malformed: this task was not submitted by tessera sbatch");
    return 1;
  }
  Result<fs::path> dir = MakeStepDir(a.job_id, config.value("script", ""));
  if (!dir.ok()) {
    Log(dir.status().message());
    return 1;
  }
  env.erase("TESSERA_SLURM_STEP");
  for (auto& [k, v] : BatchEnvironment(env, a)) env[k] = v;
  env["PATH"] = (*dir / "bin").string() + (env.contains("PATH") ? ":" + env["PATH"] : "");
  env["TESSERA_SLURM_STEP_DIR"] = dir->string();

  const bool append = config.value("openMode", "") == "append";
  // Slurm's default: slurm-%j.out, and for an array element slurm-%A_%a.out.
  const std::string fallback = env.contains("SLURM_ARRAY_JOB_ID") ? "slurm-%A_%a.out" : "slurm-%j.out";
  const std::string out_pattern = config.value("output", "").empty() ? fallback : config.value("output", "");
  const std::string err_pattern = config.value("error", "");
  const int out_fd = OpenOutput(ExpandOutputPattern(out_pattern, env), append);
  const int err_fd = err_pattern.empty() ? out_fd : OpenOutput(ExpandOutputPattern(err_pattern, env), append);

  asio::io_context io;
  int script_code = -1;
  bool timed_out = false;  // the SIGTERM at the time limit is ours, not a stop
  Processes processes(
      io,
      [&](std::int32_t, int stream, std::string_view data) {
        WriteAll(stream, data);  // the task's log
        const int file = stream == 1 ? out_fd : err_fd;
        if (file >= 0) WriteAll(file, data);
      },
      [&](std::int32_t, int code) { script_code = code; });
  Launch launch;
  launch.argv = {(*dir / "slurm_script").string()};
  if (config.value("script", "").rfind("#!", 0) != 0) launch.argv.insert(launch.argv.begin(), "/bin/bash");
  for (const json& arg : config.value("args", json::array())) launch.argv.push_back(arg.get<std::string>());
  launch.env = env;
  processes.Start(0, launch);

  // The agent's signals reach the script and srun's tasks through the group.
  // After a stop (SIGTERM, SIGINT) the other nodes are being stopped too:
  // no point in telling their workers the script ended.
  bool stopped = false;
  asio::signal_set signals(io, SIGUSR1, SIGUSR2, SIGHUP);
  signals.add(SIGTERM);
  signals.add(SIGINT);
  std::function<void()> watch = [&] {
    signals.async_wait([&](const boost::system::error_code& e, int signal) {
      if (e) return;
      stopped = stopped || ((signal == SIGTERM || signal == SIGINT) && !timed_out);
      watch();
    });
  };
  watch();
  // Slurm's time limit: the --signal warning before it, then the end.
  asio::steady_timer warning(io), limit(io), kill_after(io);
  if (const std::int64_t seconds = config.value("timeLimit", std::int64_t{0}); seconds > 0) {
    if (config.contains("signal")) {
      const std::int64_t before = config["signal"].value("seconds", 60);
      const std::string name = config["signal"].value("name", "SIGUSR1");
      const int number = name == "SIGUSR2" ? SIGUSR2 : name == "SIGTERM" ? SIGTERM : name == "SIGINT" ? SIGINT : name == "SIGHUP" ? SIGHUP : SIGUSR1;
      warning.expires_after(std::chrono::seconds(std::max<std::int64_t>(seconds - before, 0)));
      warning.async_wait([&, number](const boost::system::error_code& e) {
        if (!e) kill(0, number);
      });
    }
    limit.expires_after(std::chrono::seconds(seconds));
    limit.async_wait([&](const boost::system::error_code& e) {
      if (e) return;
      timed_out = true;
      const std::string message = "slurmstepd: error: *** JOB " + a.job_id + " ON " + a.nodes[0] + " CANCELLED DUE TO TIME LIMIT ***\n";
      WriteAll(2, message);
      if (err_fd >= 0) WriteAll(err_fd, message);
      kill(0, SIGTERM);
      kill_after.expires_after(std::chrono::seconds(5));
      kill_after.async_wait([&](const boost::system::error_code& e2) {
        if (!e2) processes.Signal(SIGKILL);
      });
    });
  }
  while (script_code < 0 && io.run_one() > 0) {
  }
  warning.cancel();
  limit.cancel();
  kill_after.cancel();

  // Every other node's worker finishes, so that the gang ends with the script.
  bool all_ended = true;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::int32_t pending = stopped ? 0 : static_cast<std::int32_t>(a.nodes.size()) - 1;
  for (std::int32_t rank = 1; !stopped && rank < static_cast<std::int32_t>(a.nodes.size()); ++rank) {
    asio::co_spawn(io, EndWorker(a, rank, deadline), [&, rank](std::exception_ptr, bool ended) {
      if (!ended) {
        all_ended = false;
        Log("the step worker on " + a.nodes[rank] + " did not answer within 60 s");
      }
      --pending;
    });
  }
  while (pending > 0 && io.run_one() > 0) {
  }
  if (out_fd >= 0) close(out_fd);
  if (err_fd >= 0 && err_fd != out_fd) close(err_fd);
  std::error_code ec;
  fs::remove_all(*dir, ec);
  if (script_code == 0 && !all_ended) return 1;
  return script_code;
}

}  // namespace

int RunSlurmStep() {
  Environment env = CurrentEnvironment();
  Result<AllocationView> allocation = ReadAllocation(env);
  if (!allocation.ok()) {
    Log(allocation.status().message());
    return 1;
  }
  if (allocation->node_rank == 0) return RunBatchStep(*allocation, std::move(env));
  return RunStepWorker(*allocation, env);
}

}  // namespace tessera::cli::slurm
