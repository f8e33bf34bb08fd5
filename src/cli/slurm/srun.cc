#include "cli/slurm/srun.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <utility>  // before Asio (Boost 1.74 needs it)

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "cli/slurm/processes.h"
#include "cli/slurm/sbatch_options.h"
#include "cli/slurm/slurm_env.h"
#include "cli/slurm/step_protocol.h"

namespace tessera::cli::slurm {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using nlohmann::json;

void Error(const std::string& message) { WriteAll(2, "srun: error: " + message + "\n"); }

struct SrunOptions {
  std::optional<std::int32_t> ntasks, nodes, tasks_per_node;
  bool label = false;
  std::string chdir;
  std::vector<std::string> command;
};

// srun options that take a value and change nothing on Tessera.
bool AcceptedWithValue(const std::string& name) {
  static const char* const kNames[] = {"mpi", "cpu-bind", "cpu_bind", "gpu-bind", "gpus-per-task", "gpus", "gres", "cpus-per-task",
                                       "cpus-per-gpu", "mem", "mem-per-gpu", "mem-per-cpu", "export", "job-name", "distribution",
                                       "kill-on-bad-exit", "time", "output", "error", "signal", "gpus-per-node"};
  for (const char* n : kNames) {
    if (name == n) return true;
  }
  return false;
}
bool AcceptedFlag(const std::string& name) {
  static const char* const kNames[] = {"unbuffered", "exclusive", "overlap", "kill-on-bad-exit", "quiet", "verbose", "wait"};
  for (const char* n : kNames) {
    if (name == n) return true;
  }
  return false;
}

std::optional<SrunOptions> Parse(const std::vector<std::string>& args) {
  SrunOptions o;
  static const std::map<char, std::string> kShort = {{'n', "ntasks"}, {'N', "nodes"}, {'l', "label"}, {'D', "chdir"},
                                                    {'u', "unbuffered"}, {'c', "cpus-per-task"}, {'J', "job-name"},
                                                    {'K', "kill-on-bad-exit"}, {'G', "gpus"}, {'t', "time"}, {'m', "distribution"},
                                                    {'o', "output"}, {'e', "error"}, {'W', "wait"}, {'v', "verbose"}, {'Q', "quiet"}};
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& w = args[i];
    if (w == "--") {
      o.command.assign(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
      break;
    }
    if (w.size() < 2 || w[0] != '-') {
      o.command.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
      break;
    }
    auto [name, short_name, value] = SplitOptionWord(w);
    if (short_name != 0) {
      const auto it = kShort.find(short_name);
      if (it == kShort.end()) {
        Error("unrecognized option '" + w + "'");
        return std::nullopt;
      }
      name = it->second;
    }
    const bool flag = name == "label" || AcceptedFlag(name);
    const bool takes = name == "ntasks" || name == "nodes" || name == "ntasks-per-node" || name == "chdir" || AcceptedWithValue(name);
    if (!flag && !takes) {
      Error("unrecognized option '" + w + "' (docs/slurm.md lists what Tessera's srun accepts)");
      return std::nullopt;
    }
    if (takes && !value && !(flag && name == "kill-on-bad-exit")) {
      if (i + 1 >= args.size()) {
        Error("option '--" + name + "' needs a value");
        return std::nullopt;
      }
      value = args[++i];
    }
    const auto count = [&](std::optional<std::int32_t>* out) {
      std::int32_t n = 0;
      const auto [p, e] = std::from_chars(value->data(), value->data() + value->size(), n);
      if (e != std::errc() || p != value->data() + value->size() || n < 1) {
        Error("--" + name + "=" + *value + ": not a whole number of at least 1");
        return false;
      }
      *out = n;
      return true;
    };
    if (name == "ntasks" && !count(&o.ntasks)) return std::nullopt;
    if (name == "nodes" && !count(&o.nodes)) return std::nullopt;
    if (name == "ntasks-per-node" && !count(&o.tasks_per_node)) return std::nullopt;
    if (name == "chdir") o.chdir = *value;
    if (name == "label") o.label = true;
  }
  if (o.command.empty()) {
    Error("no command to run (srun [options] CMD ARGS...)");
    return std::nullopt;
  }
  return o;
}

// The next step id of this batch step: a counter file in its directory.
std::int32_t NextStepId(const Environment& env) {
  const auto it = env.find("TESSERA_SLURM_STEP_DIR");
  if (it == env.end()) return 0;
  const std::string path = it->second + "/steps";
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return 0;
  flock(fd, LOCK_EX);
  char text[32] = {};
  const ssize_t n = pread(fd, text, sizeof text - 1, 0);
  const std::int32_t id = n > 0 ? std::atoi(text) : 0;
  const std::string next = std::to_string(id + 1);
  (void)!pwrite(fd, next.data(), next.size(), 0);
  flock(fd, LOCK_UN);
  close(fd);
  return id;
}

// Output to srun's stdout/stderr, whole lines prefixed "RANK: " with -l.
class Printer {
 public:
  explicit Printer(bool label) : label_(label) {}
  void Write(std::int32_t task, int stream, std::string_view data) {
    if (!label_) return WriteAll(stream, data);
    std::string& pending = pending_[{task, stream}];
    pending.append(data);
    std::size_t start = 0;
    for (std::size_t nl; (nl = pending.find('\n', start)) != std::string::npos; start = nl + 1) {
      WriteAll(stream, std::to_string(task) + ": " + pending.substr(start, nl + 1 - start));
    }
    pending.erase(0, start);
  }
  void Flush() {
    for (auto& [key, rest] : pending_) {
      if (!rest.empty()) WriteAll(key.second, std::to_string(key.first) + ": " + rest + "\n");
      rest.clear();
    }
  }

 private:
  bool label_;
  std::map<std::pair<std::int32_t, int>, std::string> pending_;
};

class Step {
 public:
  Step(asio::io_context& io, const AllocationView& a, Printer& printer)
      : io_(io), a_(a), printer_(printer),
        processes_(io, [this](std::int32_t id, int stream, std::string_view data) { printer_.Write(id, stream, data); },
                   [this](std::int32_t id, int code) { Finished(id, code); }) {}

  void Start(const StepLayout& layout, std::int32_t step_id, const Environment& base, const SrunOptions& o,
             std::chrono::seconds connect_timeout) {
    const std::string master_port = base.contains("MASTER_PORT") ? base.at("MASTER_PORT") : "29500";
    std::map<std::int32_t, std::vector<std::int32_t>> by_node;
    for (std::int32_t t = 0; t < static_cast<std::int32_t>(layout.node_of_task.size()); ++t) by_node[layout.node_of_task[t]].push_back(t);
    remaining_ = static_cast<std::int32_t>(layout.node_of_task.size());
    const std::string cwd = o.chdir.empty() ? std::filesystem::current_path().string() : o.chdir;
    for (const auto& [node, tasks] : by_node) {
      if (node == a_.node_rank) {
        for (const std::int32_t t : tasks) {
          Launch launch{o.command, base, cwd};
          for (auto& [k, v] : SrunTaskEnvironment(layout, t, step_id, a_, master_port)) launch.env[k] = v;
          processes_.Start(t, launch);
        }
        continue;
      }
      json request = {{"type", "launch"}, {"argv", o.command}, {"env", base}, {"cwd", cwd}, {"tasks", json::array()}};
      for (const std::int32_t t : tasks) request["tasks"].push_back({{"task", t}, {"env", SrunTaskEnvironment(layout, t, step_id, a_, master_port)}});
      asio::co_spawn(io_, Remote(node, tasks, std::move(request), connect_timeout), asio::detached);
    }
  }

  void Interrupt(int signal) {
    ++interrupts_;
    for (auto& stream : streams_) stream->Close();  // the workers stop their tasks
    processes_.Signal(interrupts_ > 1 ? SIGKILL : signal);
  }

  bool done() const { return remaining_ == 0; }
  int worst() const { return worst_; }

 private:
  void Finished(std::int32_t task, int code) {
    if (exited_.contains(task)) return;
    exited_.insert(task);
    worst_ = std::max(worst_, code);
    --remaining_;
    if (code != 0) Error("task " + std::to_string(task) + ": exited with exit code " + std::to_string(code));
  }

  asio::awaitable<void> Remote(std::int32_t node, std::vector<std::int32_t> tasks, json request, std::chrono::seconds timeout) {
    const std::string& name = a_.nodes[node];
    std::shared_ptr<FrameStream> stream = co_await Connect(node, timeout);
    if (!stream) {
      Error(name + ": no step worker answered within " + std::to_string(timeout.count()) + " s");
      for (const std::int32_t t : tasks) Finished(t, 255);
      co_return;
    }
    streams_.push_back(stream);
    try {
      stream->Send(request);
      for (;;) {
        std::string payload;
        const json frame = co_await stream->Read(&payload);
        if (frame["type"] == "output") {
          printer_.Write(frame.value("task", 0), frame.value("stream", "stdout") == "stderr" ? 2 : 1, payload);
        } else if (frame["type"] == "exit") {
          Finished(frame.value("task", 0), frame.value("code", 255));
        }
      }
    } catch (const std::exception&) {
      // closed: after the last exit, or the node went away
    }
    for (const std::int32_t t : tasks) {
      if (!exited_.contains(t)) {
        Error(name + ": lost the connection to task " + std::to_string(t));
        Finished(t, 255);
      }
    }
  }

  asio::awaitable<std::shared_ptr<FrameStream>> Connect(std::int32_t node, std::chrono::seconds timeout) {
    auto executor = co_await asio::this_coro::executor;
    tcp::resolver resolver(executor);
    asio::steady_timer pause(executor);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline && interrupts_ == 0) {
      for (const std::uint16_t port : StepPorts(a_.job_id, a_.attempt, node)) {
        auto stream = std::make_shared<FrameStream>(tcp::socket(executor));
        asio::steady_timer limit(executor, std::chrono::seconds(3));
        limit.async_wait([stream](const boost::system::error_code& e) {
          if (!e) stream->Close();
        });
        try {
          auto endpoints = co_await resolver.async_resolve(a_.addresses[node], std::to_string(port), asio::use_awaitable);
          co_await asio::async_connect(stream->socket(), endpoints, asio::use_awaitable);
          stream->Send({{"type", "hello"}, {"secret", a_.secret}, {"job", a_.job_id}, {"node", node}});
          const json answer = co_await stream->Read();
          limit.cancel();
          if (answer["type"] == "ready") co_return stream;
        } catch (const std::exception&) {
          // not listening yet, or another job's worker
        }
      }
      pause.expires_after(std::chrono::milliseconds(200));
      co_await pause.async_wait(asio::use_awaitable);
    }
    co_return nullptr;
  }

  asio::io_context& io_;
  const AllocationView& a_;
  Printer& printer_;
  Processes processes_;
  std::vector<std::shared_ptr<FrameStream>> streams_;
  std::set<std::int32_t> exited_;
  std::int32_t remaining_ = 0;
  int worst_ = 0;
  int interrupts_ = 0;
};

}  // namespace

int RunSrun(const std::vector<std::string>& args) {
  const std::optional<SrunOptions> options = Parse(args);
  if (!options) return 2;
  const Environment env = CurrentEnvironment();
  Result<AllocationView> allocation = ReadAllocation(env);
  if (!allocation.ok()) {
    Error(allocation.status().message());
    return 1;
  }
  std::int32_t default_ntasks = static_cast<std::int32_t>(allocation->nodes.size());
  if (const auto it = env.find("SLURM_NTASKS"); it != env.end()) default_ntasks = std::atoi(it->second.c_str());
  Result<StepLayout> layout = LayoutStep(options->ntasks, options->nodes, options->tasks_per_node,
                                         static_cast<std::int32_t>(allocation->nodes.size()), default_ntasks);
  if (!layout.ok()) {
    Error(layout.status().message());
    return 2;
  }
  std::chrono::seconds timeout(60);
  if (const char* t = std::getenv("TESSERA_SRUN_CONNECT_TIMEOUT"); t && std::atoi(t) > 0) timeout = std::chrono::seconds(std::atoi(t));
  asio::io_context io;
  Printer printer(options->label);
  Step step(io, *allocation, printer);
  // The agent's checkpoint signals reach every task through its group: srun outlives them.
  asio::signal_set ignored(io, SIGUSR1, SIGUSR2, SIGHUP);
  std::function<void()> watch_ignored = [&] { ignored.async_wait([&](const boost::system::error_code& e, int) { if (!e) watch_ignored(); }); };
  watch_ignored();
  asio::signal_set stop(io, SIGTERM, SIGINT);
  std::function<void()> watch_stop = [&] {
    stop.async_wait([&](const boost::system::error_code& e, int signal) {
      if (e) return;
      step.Interrupt(signal);
      watch_stop();
    });
  };
  watch_stop();
  step.Start(*layout, NextStepId(env), env, *options, timeout);
  while (!step.done() && io.run_one() > 0) {
  }
  printer.Flush();
  return step.worst();
}

}  // namespace tessera::cli::slurm
