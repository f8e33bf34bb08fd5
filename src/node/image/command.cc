#include "node/image/command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstring>
#include <utility>

extern char** environ;

namespace tessera::node {

namespace {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    Reset();
    fd_ = std::exchange(other.fd_, -1);
    return *this;
  }
  ~UniqueFd() { Reset(); }
  int get() const { return fd_; }
  void Reset() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

std::string Errno(int error) { return std::strerror(error); }

void KeepTail(std::string& tail, std::string_view data) {
  tail.append(data);
  // Trimmed in bulk, not on every read, so that keeping the tail stays linear.
  if (tail.size() > 2 * kCommandOutputTailBytes) tail.erase(0, tail.size() - kCommandOutputTailBytes);
}

// One of the program's output pipes, read until end-of-file.
struct Stream {
  UniqueFd fd;
  std::string* tail = nullptr;
  const std::function<void(std::string_view)>* on_line = nullptr;  // null: no line callback
  std::string partial;                                              // the current line so far

  void Consume(std::string_view data) {
    KeepTail(*tail, data);
    if (on_line == nullptr || !*on_line) return;
    for (std::size_t newline; (newline = data.find('\n')) != std::string_view::npos;) {
      partial.append(data.substr(0, newline));
      (*on_line)(partial);
      partial.clear();
      data.remove_prefix(newline + 1);
    }
    partial.append(data);
    if (partial.size() >= kCommandOutputTailBytes) {
      (*on_line)(partial);
      partial.clear();
    }
  }
  void Finish() {
    if (on_line != nullptr && *on_line && !partial.empty()) (*on_line)(partial);
    partial.clear();
  }
  // Reads what is there; false at end-of-file or on an error that ends the stream.
  bool Read() {
    std::array<char, 16 * 1024> buffer;
    const ssize_t n = read(fd.get(), buffer.data(), buffer.size());
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
    if (n <= 0) return false;
    Consume(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
    return true;
  }
};

int ExitCodeOf(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 128;
}

int Reap(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return 128;
  }
  return ExitCodeOf(status);
}

// posix_spawn's attributes and file actions, destroyed on every path.
class SpawnSetup {
 public:
  SpawnSetup() {
    posix_spawn_file_actions_init(&actions_);
    posix_spawnattr_init(&attr_);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions_);
    posix_spawnattr_destroy(&attr_);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;

  // The child's stdio and signal state; an errno value, 0 on success.
  int Prepare(int stdout_fd, int stderr_fd) {
    sigset_t empty, all;
    sigemptyset(&empty);
    sigfillset(&all);
    int error = posix_spawn_file_actions_addopen(&actions_, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    if (error == 0) error = posix_spawn_file_actions_adddup2(&actions_, stdout_fd, STDOUT_FILENO);
    if (error == 0) error = posix_spawn_file_actions_adddup2(&actions_, stderr_fd, STDERR_FILENO);
    if (error == 0) error = posix_spawnattr_setsigmask(&attr_, &empty);
    if (error == 0) error = posix_spawnattr_setsigdefault(&attr_, &all);
    if (error == 0) {
      error = posix_spawnattr_setflags(&attr_, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    }
    return error;
  }
  const posix_spawn_file_actions_t* actions() const { return &actions_; }
  const posix_spawnattr_t* attr() const { return &attr_; }

 private:
  posix_spawn_file_actions_t actions_;
  posix_spawnattr_t attr_;
};

}  // namespace

Result<CommandResult> RunCommand(const CommandSpec& spec) {
  if (spec.argv.empty() || spec.argv[0].empty()) return InvalidArgument("no program to run: argv is empty");
  const std::string& program = spec.argv[0];
  const auto cannot_start = [&](const std::string& why) {
    return FailedPrecondition("cannot start " + program + ": " + why);
  };

  std::array<int, 2> out_pipe{}, err_pipe{};
  if (pipe2(out_pipe.data(), O_CLOEXEC) != 0) return cannot_start("pipe: " + Errno(errno));
  UniqueFd out_read(out_pipe[0]), out_write(out_pipe[1]);
  if (pipe2(err_pipe.data(), O_CLOEXEC) != 0) return cannot_start("pipe: " + Errno(errno));
  UniqueFd err_read(err_pipe[0]), err_write(err_pipe[1]);

  SpawnSetup setup;
  if (const int error = setup.Prepare(out_write.get(), err_write.get()); error != 0) {
    return cannot_start("posix_spawn setup: " + Errno(error));
  }
  std::vector<char*> argv;
  argv.reserve(spec.argv.size() + 1);
  for (const std::string& arg : spec.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  // glibc's posix_spawnp reports a failed exec (ENOENT, EACCES) as its own
  // return value: it waits for the child to exec or fail.
  if (const int error = posix_spawnp(&pid, program.c_str(), setup.actions(), setup.attr(), argv.data(), environ);
      error != 0) {
    return cannot_start(Errno(error));
  }
  out_write.Reset();
  err_write.Reset();

  const UniqueFd pidfd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
  if (pidfd.get() < 0) {
    const int error = errno;
    kill(-pid, SIGKILL);
    Reap(pid);
    return Internal("cannot watch " + program + " (pid " + std::to_string(pid) + "): pidfd_open: " + Errno(error));
  }

  CommandResult result;
  std::array<Stream, 2> streams;
  streams[0].fd = std::move(out_read);
  streams[0].tail = &result.stdout_tail;
  streams[0].on_line = &spec.on_stdout_line;
  streams[1].fd = std::move(err_read);
  streams[1].tail = &result.stderr_tail;

  const auto deadline = std::chrono::steady_clock::now() + spec.timeout;
  bool exited = false;
  while (!exited || streams[0].fd.get() >= 0 || streams[1].fd.get() >= 0) {
    const auto remaining = deadline - std::chrono::steady_clock::now();
    if (remaining <= std::chrono::steady_clock::duration::zero()) {
      kill(-pid, SIGKILL);
      result.timed_out = true;
      break;
    }
    std::array<pollfd, 3> fds{};
    std::array<Stream*, 3> owners{};
    nfds_t count = 0;
    for (Stream& stream : streams) {
      if (stream.fd.get() < 0) continue;
      owners[count] = &stream;
      fds[count++] = pollfd{stream.fd.get(), POLLIN, 0};
    }
    if (!exited) fds[count++] = pollfd{pidfd.get(), POLLIN, 0};
    // Rounded up, so that the loop never spins on a sub-millisecond remainder.
    const auto wait_ms = std::chrono::ceil<std::chrono::milliseconds>(remaining).count();
    const int ready = poll(fds.data(), count, static_cast<int>(std::min<std::int64_t>(wait_ms, INT_MAX)));
    if (ready < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      kill(-pid, SIGKILL);
      Reap(pid);
      return Internal("waiting for " + program + ": poll: " + Errno(error));
    }
    for (nfds_t i = 0; i < count; ++i) {
      if (fds[i].revents == 0) continue;
      if (owners[i] == nullptr) {
        exited = true;
        kill(-pid, SIGKILL);  // stragglers in its group; the leader is a zombie until reaped below
      } else if (!owners[i]->Read()) {
        owners[i]->fd.Reset();
      }
    }
  }
  for (Stream& stream : streams) stream.Finish();
  result.exit_code = Reap(pid);
  for (std::string* tail : {&result.stdout_tail, &result.stderr_tail}) {
    if (tail->size() > kCommandOutputTailBytes) tail->erase(0, tail->size() - kCommandOutputTailBytes);
  }
  return result;
}

std::string ToolMessage(const std::string& output, const std::string& secret) {
  std::string_view text = output;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.remove_suffix(1);
  const std::size_t newline = text.rfind('\n');
  std::string line(newline == std::string_view::npos ? text : text.substr(newline + 1));
  if (const std::size_t msg = line.find("msg=\""); msg != std::string::npos) {
    std::string unescaped;
    const std::size_t end = line.rfind('"');
    for (std::size_t i = msg + 5; i < end; ++i) {
      if (line[i] == '\\' && i + 1 < end) ++i;
      unescaped += line[i];
    }
    line = unescaped;
  }
  const std::size_t start = line.find_first_not_of(" \t");
  line = start == std::string::npos ? std::string() : line.substr(start);
  if (line.rfind("⨯ ", 0) == 0) line = line.substr(std::string_view("⨯ ").size());
  if (!secret.empty()) {
    for (std::size_t at; (at = line.find(secret)) != std::string::npos;) line.replace(at, secret.size(), "***");
  }
  return line;
}

}  // namespace tessera::node
