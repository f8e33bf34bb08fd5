// Interactive sessions (docs/interactive.md): exec, attach, port-forward,
// and `run -it`, a session of its own on a GPU share. Each opens a tunnel
// through the API's connection (api/session_protocol.h) and pumps it: the
// terminal or stdin one way, the remote output the other.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <iostream>
#include <optional>
#include <thread>

#include "node/interactive/session_stream.h"
#include "cli/api_client.h"
#include "cli/commands.h"
#include "cli/quick_job.h"

namespace tessera::cli {
namespace {

using api::FrameType;
using nlohmann::json;

std::atomic<bool> g_resized{false};
void OnResize(int) { g_resized = true; }

std::string TerminalSize() {
  winsize size{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) != 0 || size.ws_row == 0) return "24x80";
  return std::to_string(size.ws_row) + "x" + std::to_string(size.ws_col);
}

// The user's terminal in raw mode while a remote terminal is in use: every
// key (^C too) goes to the remote side. Restored however the command ends.
class RawTerminal {
 public:
  explicit RawTerminal(bool enable) {
    if (!enable || tcgetattr(STDIN_FILENO, &saved_) != 0) return;
    termios raw = saved_;
    cfmakeraw(&raw);
    active_ = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
    signal(SIGWINCH, OnResize);
  }
  ~RawTerminal() { Restore(); }
  void Restore() {
    if (active_) tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
    active_ = false;
  }

 private:
  termios saved_{};
  bool active_ = false;
};

// Opens a session in `job`; a refusal fails the command with the API's message.
std::unique_ptr<node::SessionStream> OpenSession(ApiClient& api, const std::string& job, const api::SessionRequest& request) {
  // Any call finds the leader among replicas (the tunnel follows no redirect);
  // the session's own answer says whether the job is there and the caller's.
  api.Raw("GET", "/v1/jobs/" + net::PercentEncode(job));
  int status = 0;
  Result<std::unique_ptr<net::ClientTunnel>> tunnel =
      api.OpenTunnel("/v1/jobs/" + net::PercentEncode(job) + "/sessions", api::ToJson(request).dump(), &status);
  if (!tunnel.ok()) Fail(status == 0 ? kExitUnreachable : ExitCodeOf(status), tunnel.status().message());
  return std::make_unique<node::SessionStream>(std::move(*tunnel));
}

struct Outcome {
  std::optional<int> exit_code;  // the remote process's; none for an attach whose task ended
  bool ended = false;            // the session ended as it should (exit frame)
};

// Pumps a session: stdin to its input, its output to stdout and stderr.
// Fails the command when the session could not start or broke.
Outcome Pump(node::SessionStream& session, bool tty) {
  RawTerminal raw(tty);
  std::atomic<bool> over{false};
  std::thread input([&] {
    char buffer[16 << 10];
    bool open = true;
    while (!over) {
      if (tty && g_resized.exchange(false)) session.Send(FrameType::kResize, TerminalSize());
      pollfd p{STDIN_FILENO, POLLIN, 0};
      if (!open || poll(&p, 1, 100) <= 0) {
        if (!open) std::this_thread::sleep_for(std::chrono::milliseconds(100));
        continue;
      }
      const ssize_t n = read(STDIN_FILENO, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        session.Send(FrameType::kInput);  // end of input
        open = false;
        continue;
      }
      if (!session.Send(FrameType::kInput, std::string_view(buffer, static_cast<std::size_t>(n)))) break;
    }
  });
  Outcome outcome;
  std::string failure;
  while (std::optional<api::Frame> frame = session.Receive()) {
    const int fd = frame->type == FrameType::kError ? STDERR_FILENO : STDOUT_FILENO;
    if (frame->type == FrameType::kOutput || frame->type == FrameType::kError) {
      std::string_view rest = frame->payload;
      while (!rest.empty()) {
        const ssize_t n = write(fd, rest.data(), rest.size());
        if (n <= 0 && errno != EINTR) break;
        if (n > 0) rest.remove_prefix(static_cast<std::size_t>(n));
      }
    } else if (frame->type == FrameType::kExit) {
      outcome.ended = true;
      if (!frame->payload.empty()) outcome.exit_code = std::atoi(frame->payload.c_str());
      break;
    } else if (frame->type == FrameType::kFailed) {
      failure = frame->payload;
      break;
    }
  }
  over = true;
  session.Close();
  input.join();
  raw.Restore();
  if (!failure.empty()) Fail(kExitFailure, failure);
  if (!outcome.ended) {
    Fail(kExitUnreachable, "the session broke: " + (session.error().empty() ? "the connection to the server was lost" : session.error()));
  }
  return outcome;
}

struct ExecArgs {
  ClientOptions client;
  std::string job, task;
  bool no_tty = false;
};

int Exec(const ExecArgs& a, const std::vector<std::string>& command) {
  if (command.empty()) Fail(kExitBadInput, "exec: give the command after --, e.g. tessera exec 12 -- nvidia-smi");
  ApiClient api(a.client);
  api::SessionRequest request;
  request.kind = api::SessionKind::kExec;
  request.task = a.task;
  request.command = command;
  request.tty = !a.no_tty && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
  if (request.tty) {
    const std::string size = TerminalSize();
    request.rows = std::atoi(size.c_str());
    request.cols = std::atoi(size.c_str() + size.find('x') + 1);
  }
  const std::unique_ptr<node::SessionStream> session = OpenSession(api, a.job, request);
  return Pump(*session, request.tty).exit_code.value_or(0);
}

// Attaches to a task: its terminal (an interactive job), else its output as
// it comes. Returns once the task ended or the user left.
void Attach(ApiClient& api, const std::string& job, const std::string& task) {
  api::SessionRequest request;
  request.kind = api::SessionKind::kAttach;
  request.task = task;
  const bool tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
  const std::unique_ptr<node::SessionStream> session = OpenSession(api, job, request);
  if (tty) session->Send(FrameType::kResize, TerminalSize());
  Pump(*session, tty);
}

struct PortForwardArgs {
  ClientOptions client;
  std::string job, ports, task, address = "127.0.0.1";
};

// One local connection, through its own session, until either side ends it.
void Forward(int connection, std::unique_ptr<node::SessionStream> session) {
  std::thread upstream([&] {
    char buffer[api::kSessionChunk];
    for (;;) {
      const ssize_t n = recv(connection, buffer, sizeof buffer, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        session->Send(FrameType::kInput);
        break;
      }
      if (!session->Send(FrameType::kInput, std::string_view(buffer, static_cast<std::size_t>(n)))) break;
    }
  });
  while (std::optional<api::Frame> frame = session->Receive()) {
    if (frame->type == FrameType::kFailed) std::cerr << "tessera: port-forward: " << frame->payload << std::endl;
    if (frame->type != FrameType::kOutput) break;
    std::string_view rest = frame->payload;
    while (!rest.empty()) {
      const ssize_t n = send(connection, rest.data(), rest.size(), MSG_NOSIGNAL);
      if (n <= 0) break;
      rest.remove_prefix(static_cast<std::size_t>(n));
    }
  }
  shutdown(connection, SHUT_RDWR);
  session->Close();
  upstream.join();
  close(connection);
}

// Sessions are opened per connection, so whether this user may open one in
// this job is asked before listening: a session is allowed to whoever may
// read the job's logs, and a read past their end costs nothing.
void CheckForwardable(ApiClient& api, const std::string& job, const std::string& task) {
  std::string target = "/v1/jobs/" + net::PercentEncode(job) + "/logs?offset=" + std::to_string(std::int64_t{1} << 60);
  if (!task.empty()) target += "&task=" + net::PercentEncode(task);
  const net::HttpResponse r = api.Raw("GET", target);
  if (r.status != 200) {
    const json e = json::parse(r.body, nullptr, false);
    Fail(ExitCodeOf(r.status), !e.is_discarded() && e.contains("error") ? e["error"].get<std::string>() : r.body);
  }
  for (const auto& [name, value] : r.headers) {
    if (name == "x-tessera-job-state" && value != "running") Fail(kExitFailure, "job " + job + " is " + value + ": there is nothing to forward to");
  }
}

void PortForward(const PortForwardArgs& a) {
  const std::size_t colon = a.ports.find(':');
  const int local = std::atoi(a.ports.substr(0, colon).c_str());
  const int remote = colon == std::string::npos ? local : std::atoi(a.ports.substr(colon + 1).c_str());
  if (local <= 0 || local > 65535 || remote <= 0 || remote > 65535) {
    Fail(kExitBadInput, "port-forward: '" + a.ports + "' is not LOCAL:REMOTE (or PORT), ports 1-65535");
  }
  ApiClient api(a.client);
  CheckForwardable(api, a.job, a.task);
  const int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(local));
  const int one = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (inet_pton(AF_INET, a.address.c_str(), &address.sin_addr) != 1) Fail(kExitBadInput, "--address: '" + a.address + "' is not an IPv4 address");
  if (bind(listener, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 || listen(listener, 64) != 0) {
    Fail(kExitFailure, "port-forward: cannot listen on " + a.address + ":" + std::to_string(local) + ": " + std::strerror(errno));
  }
  std::cout << "Forwarding " << a.address << ":" << local << " to port " << remote << " of job " << a.job
            << (a.task.empty() ? "" : " task " + a.task) << " (Ctrl-C stops)" << std::endl;
  api::SessionRequest request;
  request.kind = api::SessionKind::kPortForward;
  request.task = a.task;
  request.port = remote;
  const std::string body = api::ToJson(request).dump();
  const std::string target = "/v1/jobs/" + net::PercentEncode(a.job) + "/sessions";
  for (;;) {
    const int connection = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (connection < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      Fail(kExitFailure, std::string("port-forward: accept: ") + std::strerror(errno));
    }
    int status = 0;
    Result<std::unique_ptr<net::ClientTunnel>> tunnel = api.OpenTunnel(target, body, &status);
    if (!tunnel.ok()) {
      // The job may have ended: say so and stop, as kubectl does.
      close(connection);
      Fail(status == 0 ? kExitUnreachable : ExitCodeOf(status), "port-forward: " + tunnel.status().message());
    }
    std::thread(Forward, connection, std::make_unique<node::SessionStream>(std::move(*tunnel))).detach();
  }
}

struct RunArgs {
  ClientOptions client;
  QuickJobArgs job;
  bool stdin_open = false, tty = false;
};

// The job's state, as `tessera jobs` shows it.
json JobState(ApiClient& api, std::int64_t id) { return api.Call("GET", "/v1/jobs/" + std::to_string(id)); }

int Run(RunArgs& a) {
  if (!a.stdin_open && !a.tty) {
    Fail(kExitBadInput, "run: give -it for an interactive session (tessera run -it --gpus 0.25 -- bash); a batch job is tessera submit");
  }
  if (a.job.command.empty()) a.job.command = {"bash", "-l"};
  a.job.interactive = true;
  if (a.job.name.empty()) a.job.name = "session";
  ApiClient api(a.client);
  const json answer = api.Call("POST", "/v1/jobs", QuickJob(a.job));
  const std::int64_t id = answer["jobs"][0]["id"];
  std::cerr << "job " << id << " submitted; waiting for it to start (Ctrl-C leaves it pending: tessera cancel " << id << ")" << std::endl;
  for (std::string state = "pending";; std::this_thread::sleep_for(std::chrono::milliseconds(250))) {
    const json job = JobState(api, id);
    state = job["state"];
    if (state == "running") break;
    if (state != "pending" && state != "starting") Fail(kExitFailure, "job " + std::to_string(id) + " " + state + ": " + job.value("message", ""));
  }
  Attach(api, std::to_string(id), "");
  // Attached until the session's shell exits, which ends the job: its exit code is ours.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    const json job = JobState(api, id);
    const std::string state = job["state"];
    if (state == "running" || state == "starting") {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      continue;
    }
    for (const json& t : job["tasks"]) {
      if (t.contains("exitCode")) return t["exitCode"].get<int>();
    }
    return state == "succeeded" ? 0 : 1;
  }
  std::cerr << "job " << id << " is still running: tessera attach " << id << " returns to it" << std::endl;
  return 0;
}

}  // namespace

void AddSessionCommands(CLI::App& app) {
  {
    auto args = std::make_shared<ExecArgs>();
    CLI::App* cmd = app.add_subcommand("exec", "Run a command in a running task, with a terminal when you have one: tessera exec 12 -- bash");
    AddClientFlags(cmd, &args->client);
    cmd->add_option("job", args->job, "Job id; an array element as ID[INDEX]")->required();
    cmd->add_option("-t,--task", args->task, "Task name, e.g. worker-1 (default: the first)");
    cmd->add_flag("-T,--no-tty", args->no_tty, "No terminal, even when stdin and stdout are one (separate stdout and stderr)");
    cmd->footer("Everything after -- is the command; its exit code is tessera's.");
    cmd->callback([args] { throw CLI::RuntimeError(Exec(*args, CommandAfterDashes())); });
  }
  {
    auto args = std::make_shared<ExecArgs>();
    CLI::App* cmd = app.add_subcommand("attach", "Attach to a task: the terminal of an interactive job, else its output as it is written");
    AddClientFlags(cmd, &args->client);
    cmd->add_option("job", args->job, "Job id; an array element as ID[INDEX]")->required();
    cmd->add_option("-t,--task", args->task, "Task name, e.g. worker-1 (default: the first)");
    cmd->callback([args] {
      ApiClient api(args->client);
      Attach(api, args->job, args->task);
    });
  }
  {
    auto args = std::make_shared<PortForwardArgs>();
    CLI::App* cmd = app.add_subcommand("port-forward", "Forward a local port to a port of a running task's node, through the API: 8888:8888");
    AddClientFlags(cmd, &args->client);
    cmd->add_option("job", args->job, "Job id; an array element as ID[INDEX]")->required();
    cmd->add_option("ports", args->ports, "LOCAL:REMOTE, or PORT for both")->required();
    cmd->add_option("-t,--task", args->task, "Task name, e.g. worker-1 (default: the first)");
    cmd->add_option("--address", args->address, "Local address to listen on")->capture_default_str();
    cmd->callback([args] { PortForward(*args); });
  }
  {
    auto args = std::make_shared<RunArgs>();
    CLI::App* cmd = app.add_subcommand("run", "An interactive session on a GPU share: tessera run -it --gpus 0.25 -- bash");
    AddClientFlags(cmd, &args->client);
    cmd->add_flag("-i,--stdin", args->stdin_open, "Keep stdin open to the session");
    cmd->add_flag("-t,--tty", args->tty, "Give the session a terminal");
    AddQuickJobFlags(cmd, &args->job);
    cmd->add_option("--idle-timeout", args->job.idle_timeout, "End the session after it sat unused this long, e.g. 2h (default 30m)");
    cmd->footer("Everything after -- is the session's command (default: bash -l). The session ends when it exits, "
                "or after the idle timeout; tessera attach JOB returns to it meanwhile.");
    cmd->callback([args] {
      args->job.command = CommandAfterDashes();
      throw CLI::RuntimeError(Run(*args));
    });
  }
}

}  // namespace tessera::cli
