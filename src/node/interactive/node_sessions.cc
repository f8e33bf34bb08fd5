#include "node/interactive/node_sessions.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <random>

#include "api/json_reader.h"
#include "node/interactive/session_stream.h"
#include "base/backoff.h"
#include "net/client_tunnel.h"

namespace tessera::node {

using api::FrameType;
using nlohmann::json;

namespace {

constexpr int kPollWaitSeconds = 5;
constexpr std::chrono::seconds kHangUpGrace{2};

void Log(const std::string& node, const std::string& line) { std::cerr << "tessera agent " << node << ": " << line << std::endl; }

// Writes all of `bytes` to a pipe or terminal; false once its reader is gone.
bool WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = write(fd, bytes.data(), bytes.size());
    if (n > 0) {
      bytes.remove_prefix(static_cast<std::size_t>(n));
    } else if (n < 0 && errno == EAGAIN) {
      pollfd p{fd, POLLOUT, 0};
      poll(&p, 1, 200);
    } else if (n < 0 && errno != EINTR) {
      return false;
    }
  }
  return true;
}

// A resize frame's "ROWSxCOLS"; nothing for a malformed one.
std::optional<std::pair<std::uint16_t, std::uint16_t>> TerminalSize(const std::string& payload) {
  unsigned rows = 0, cols = 0;
  if (std::sscanf(payload.c_str(), "%ux%u", &rows, &cols) != 2 || rows == 0 || cols == 0 || rows > 10000 || cols > 10000) return std::nullopt;
  return std::make_pair(static_cast<std::uint16_t>(rows), static_cast<std::uint16_t>(cols));
}

void Resize(int terminal, const std::string& payload) {
  if (const auto size = TerminalSize(payload)) {
    const winsize ws{size->first, size->second, 0, 0};
    ioctl(terminal, TIOCSWINSZ, &ws);
  }
}

// A pipe whose reader is gone raises SIGPIPE in the writer: this thread
// takes EPIPE instead (the agent must not die of a task's closed stdin).
void IgnoreBrokenPipes() {
  sigset_t pipe;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
}

// exec: a process beside the task, until it ends or its user leaves.
void RunExec(SessionStream& s, const api::SessionRequest& r, const SessionTarget& target) {
  LaunchSpec spec = target.spec;
  spec.argv = target.exec_inside ? target.exec_inside(r.tty, r.command) : r.command;
  spec.stdio = r.tty ? LaunchSpec::Stdio::kTerminal : LaunchSpec::Stdio::kPipes;
  if (r.rows > 0) spec.rows = static_cast<std::uint16_t>(r.rows);
  if (r.cols > 0) spec.cols = static_cast<std::uint16_t>(r.cols);
  spec.cgroup_name.clear();
  spec.join_cgroup = target.cgroup;
  Result<std::unique_ptr<TaskProcess>> launched = TaskProcess::Launch(spec, nullptr);
  if (!launched.ok()) {
    s.Send(FrameType::kFailed, launched.status().message());
    return;
  }
  TaskProcess& process = **launched;
  std::atomic<bool> left{false};
  std::thread input([&] {
    IgnoreBrokenPipes();
    const int to = r.tty ? process.terminal() : process.input();
    bool open = true;
    while (std::optional<api::Frame> frame = s.Receive()) {
      if (frame->type == FrameType::kResize && r.tty) Resize(process.terminal(), frame->payload);
      if (frame->type != FrameType::kInput || !open) continue;
      if (frame->payload.empty()) {
        // The user's input ended; on a terminal, ^D is the user's to type.
        if (!r.tty) process.CloseInput();
        open = r.tty;
        continue;
      }
      open = WriteAll(to, frame->payload);
    }
    left = true;
  });

  std::vector<std::pair<int, FrameType>> outputs;
  if (r.tty) {
    outputs = {{process.terminal(), FrameType::kOutput}};
  } else {
    outputs = {{process.output(), FrameType::kOutput}, {process.error(), FrameType::kError}};
  }
  for (const auto& [fd, type] : outputs) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  std::optional<int> code;
  std::chrono::steady_clock::time_point exited;
  bool hung_up = false;
  char buffer[16 << 10];
  for (;;) {
    if (left && !hung_up) {
      process.Signal(SIGHUP);  // the user hung up, as on a terminal
      process.Terminate(kHangUpGrace);
      hung_up = true;
    }
    if (hung_up) process.KillIfOverdue();
    std::vector<pollfd> fds;
    for (const auto& [fd, type] : outputs) fds.push_back({fd, POLLIN, 0});
    if (fds.empty() && code) break;
    poll(fds.data(), fds.size(), 100);
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      const ssize_t n = read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        if (!left) s.Send(outputs[i].second, std::string_view(buffer, static_cast<std::size_t>(n)));
      } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        outputs[i].first = -1;  // ended (a terminal says EIO once nothing holds it)
      }
    }
    std::erase_if(outputs, [](const auto& o) { return o.first < 0; });
    if (!code && (code = process.Poll())) exited = std::chrono::steady_clock::now();
    // Whatever still holds the outputs once the process is gone is not waited for long.
    if (code && std::chrono::steady_clock::now() - exited > std::chrono::seconds(1)) break;
  }
  if (!left) s.Send(FrameType::kExit, std::to_string(*code));
  s.Close();
  input.join();
}

// attach to a batch task: its output as it is written, from now on, until
// the task ends or the user leaves. It reads no input.
void FollowOutput(SessionStream& s, const SessionTarget& target, const std::function<bool()>& running) {
  std::atomic<bool> left{false};
  std::thread input([&] {
    while (s.Receive()) {
    }
    left = true;
  });
  const std::pair<std::string, FrameType> streams[2] = {{target.log_base + ".stdout", FrameType::kOutput},
                                                        {target.log_base + ".stderr", FrameType::kError}};
  std::uintmax_t offsets[2];
  for (int i = 0; i < 2; ++i) {
    std::error_code ec;
    offsets[i] = std::filesystem::file_size(streams[i].first, ec);
    if (ec) offsets[i] = 0;
  }
  bool last = false;
  while (!left) {
    last = !running();  // one more read after the task ended: its last words
    for (int i = 0; i < 2; ++i) {
      std::ifstream in(streams[i].first, std::ios::binary);
      if (!in) continue;
      in.seekg(static_cast<std::streamoff>(offsets[i]));
      std::string chunk(api::kSessionChunk, '\0');
      while (in.read(chunk.data(), static_cast<std::streamsize>(chunk.size())) || in.gcount() > 0) {
        const auto got = static_cast<std::size_t>(in.gcount());
        offsets[i] += got;
        if (!s.Send(streams[i].second, std::string_view(chunk.data(), got))) break;
      }
    }
    if (last) {
      s.Send(FrameType::kExit);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  s.Close();
  input.join();
}

// attach: an interactive task's terminal, or a batch task's output.
void RunAttach(SessionStream& s, const SessionTarget& target, const std::function<bool()>& running) {
  if (!target.terminal) return FollowOutput(s, target, running);
  TaskTerminal& terminal = *target.terminal;
  const std::uint64_t id = terminal.Attach([&s](std::string_view out) { return s.Send(FrameType::kOutput, out); },
                                           [&s, &terminal] {
                                             if (terminal.ended()) {
                                               s.Send(FrameType::kExit);
                                             } else {
                                               s.Send(FrameType::kFailed, "another session attached to this terminal");
                                             }
                                             s.Close();
                                           });
  while (std::optional<api::Frame> frame = s.Receive()) {
    if (frame->type == FrameType::kInput) terminal.Write(frame->payload);
    if (frame->type != FrameType::kResize) continue;
    if (const auto size = TerminalSize(frame->payload)) terminal.Resize(size->first, size->second);
  }
  terminal.Detach(id);
}

// port-forward: one connection to a port of this node, until either side ends it.
void RunPortForward(SessionStream& s, const api::SessionRequest& r, const std::string& node) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(r.port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    s.Send(FrameType::kFailed, "nothing accepts connections on port " + std::to_string(r.port) + " of node " + node + ": " + std::strerror(errno));
    if (fd >= 0) close(fd);
    return;
  }
  std::thread input([&] {
    while (std::optional<api::Frame> frame = s.Receive()) {
      if (frame->type != FrameType::kInput) continue;
      if (frame->payload.empty()) {
        shutdown(fd, SHUT_WR);
        continue;
      }
      std::string_view rest = frame->payload;
      while (!rest.empty()) {
        const ssize_t n = send(fd, rest.data(), rest.size(), MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        rest.remove_prefix(static_cast<std::size_t>(n));
      }
    }
    shutdown(fd, SHUT_RDWR);  // the user left: the read below ends
  });
  char buffer[api::kSessionChunk];
  for (;;) {
    const ssize_t n = recv(fd, buffer, sizeof buffer, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || !s.Send(FrameType::kOutput, std::string_view(buffer, static_cast<std::size_t>(n)))) break;
  }
  s.Send(FrameType::kExit, "0");
  s.Close();
  input.join();
  close(fd);
}

}  // namespace

struct NodeSessions::Live {
  api::SessionRequest request;
  std::mutex mu;
  std::shared_ptr<SessionStream> stream;  // once its tunnel is open
  bool closing = false;
  std::atomic<bool> done{false};
  std::thread thread;

  void Close() {
    std::lock_guard lock(mu);
    closing = true;
    if (stream) stream->Close();
  }
};

NodeSessions::~NodeSessions() {
  for (const std::shared_ptr<Live>& live : live_) live->Close();
  for (const std::shared_ptr<Live>& live : live_) live->thread.join();
}

void NodeSessions::Publish(const api::TaskKey& key, SessionTarget target) {
  std::lock_guard lock(mu_);
  targets_[key] = std::make_shared<const SessionTarget>(std::move(target));
}

void NodeSessions::Withdraw(const api::TaskKey& key) {
  std::lock_guard lock(mu_);
  targets_.erase(key);
}

std::shared_ptr<const SessionTarget> NodeSessions::Find(const api::TaskKey& key) const {
  std::lock_guard lock(mu_);
  auto it = targets_.find(key);
  return it == targets_.end() ? nullptr : it->second;
}

void NodeSessions::Run(const std::atomic<bool>& stop) {
  net::HttpClient client(options_.servers, options_.tls);
  Backoff backoff(std::chrono::milliseconds(500), std::chrono::seconds(5), std::random_device{}());
  const std::string target = "/v1/nodes/" + options_.node + "/sessions?wait=" + std::to_string(kPollWaitSeconds);
  while (!stop) {
    // Sessions that ended are let go.
    for (auto it = live_.begin(); it != live_.end();) {
      if (!(*it)->done) {
        ++it;
        continue;
      }
      (*it)->thread.join();
      it = live_.erase(it);
    }
    if (const std::string token = options_.token(); !token.empty()) client.SetHeader("Authorization", "Bearer " + token);
    Result<net::HttpResponse> r = client.Send("GET", target, {}, "application/json", std::chrono::seconds(kPollWaitSeconds + 10));
    Result<json> body = r.ok() && r->status == 200 ? api::ParseJsonBody(r->body) : Result<json>(Internal(""));
    if (!body.ok() || !body->is_object() || !(*body)["sessions"].is_array()) {
      // Not registered yet, or the server is away: the agent's loop says so; wait a little.
      const auto until = std::chrono::steady_clock::now() + backoff.Next();
      while (!stop && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    backoff.Reset();
    for (const json& item : (*body)["sessions"]) {
      Result<api::SessionRequest> request = api::SessionRequestFromJson(item);
      if (!request.ok()) {
        Log(options_.node, "bad session request from the server: " + request.status().message());
        continue;
      }
      auto live = std::make_shared<Live>();
      live->request = std::move(*request);
      live->thread = std::thread([this, live, server = client.endpoint()] { Serve(live, server); });
      live_.push_back(std::move(live));
    }
  }
}

void NodeSessions::Serve(std::shared_ptr<Live> live, const net::Endpoint& server) {
  const api::SessionRequest& r = live->request;
  std::vector<std::pair<std::string, std::string>> headers;
  if (const std::string token = options_.token(); !token.empty()) headers.emplace_back("Authorization", "Bearer " + token);
  net::HttpResponse refusal;
  Result<std::unique_ptr<net::ClientTunnel>> tunnel = net::ClientTunnel::Open(
      server, options_.tls, "POST", "/v1/nodes/" + options_.node + "/sessions/" + r.id, {}, headers, std::chrono::seconds(10), &refusal);
  if (!tunnel.ok()) {
    Log(options_.node, "cannot open session " + r.id + ": " + tunnel.status().message() + (refusal.body.empty() ? "" : ": " + refusal.body));
    live->done = true;
    return;
  }
  auto stream = std::make_shared<SessionStream>(std::move(*tunnel));
  {
    std::lock_guard lock(live->mu);
    live->stream = stream;
    if (live->closing) stream->Close();
  }
  const std::shared_ptr<const SessionTarget> target = Find(r.key);
  if (!target) {
    stream->Send(FrameType::kFailed, "task " + r.task + " of job " + std::to_string(r.key.job) + " is not running on node " + options_.node);
  } else {
    Log(options_.node, std::string(api::ToString(r.kind)) + " session " + r.id + " in task " + r.task + " of job " + std::to_string(r.key.job));
    switch (r.kind) {
      case api::SessionKind::kExec: RunExec(*stream, r, *target); break;
      case api::SessionKind::kAttach: RunAttach(*stream, *target, [this, key = r.key] { return Running(key); }); break;
      case api::SessionKind::kPortForward: RunPortForward(*stream, r, options_.node); break;
    }
  }
  stream->Close();
  live->done = true;
}

}  // namespace tessera::node
