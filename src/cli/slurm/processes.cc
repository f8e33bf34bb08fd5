#include "cli/slurm/processes.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <utility>  // before Asio (Boost 1.74 needs it)

#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <array>
#include <cerrno>
#include <cstring>

namespace tessera::cli::slurm {

namespace asio = boost::asio;

struct Processes::Child {
  std::int32_t id = 0;
  pid_t pid = -1;
  bool exited = false;
  int code = 0;
  int open_pipes = 2;
  std::array<std::unique_ptr<asio::posix::stream_descriptor>, 2> pipes;
  std::unique_ptr<asio::steady_timer> linger;  // after the exit: how long pipes may stay open
};

void WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

int ExitCodeOf(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

namespace {

// The program's path: as given when it holds a '/', else the first
// executable of that name on the environment's PATH.
std::string Resolve(const std::string& program, const std::map<std::string, std::string>& env) {
  if (program.find('/') != std::string::npos) return program;
  const auto it = env.find("PATH");
  const std::string path = it == env.end() ? "/usr/local/bin:/usr/bin:/bin" : it->second;
  for (std::size_t start = 0; start <= path.size();) {
    std::size_t colon = path.find(':', start);
    if (colon == std::string::npos) colon = path.size();
    const std::string dir = path.substr(start, colon - start);
    start = colon + 1;
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
    struct stat st {};
    if (stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

}  // namespace

Processes::Processes(asio::io_context& io, Output output, Exit exit)
    : io_(io), output_(std::move(output)), exit_(std::move(exit)), sigchld_(io, SIGCHLD) {
  WatchChildren();
}

Processes::~Processes() {
  boost::system::error_code ignored;
  sigchld_.cancel(ignored);
}

void Processes::WatchChildren() {
  sigchld_.async_wait([this](const boost::system::error_code& error, int) {
    if (error) return;
    Reap();
    WatchChildren();
  });
}

void Processes::Reap() {
  for (;;) {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid <= 0) return;
    const auto it = children_.find(pid);
    if (it == children_.end()) continue;
    std::shared_ptr<Child> child = it->second;
    child->exited = true;
    child->code = ExitCodeOf(status);
    if (child->open_pipes > 0) {
      child->linger = std::make_unique<asio::steady_timer>(io_, std::chrono::seconds(2));
      child->linger->async_wait([child](const boost::system::error_code& error) {
        if (error) return;
        for (auto& pipe : child->pipes) {
          boost::system::error_code ignored;
          if (pipe) pipe->close(ignored);  // the pending reads end; MaybeDone follows
        }
      });
    }
    MaybeDone(child);
  }
}

void Processes::MaybeDone(const std::shared_ptr<Child>& child) {
  if (!child->exited || child->open_pipes > 0) return;
  if (child->linger) child->linger->cancel();
  children_.erase(child->pid);
  exit_(child->id, child->code);
}

void Processes::ReadPipe(std::shared_ptr<Child> child, int stream, int fd) {
  auto buffer = std::make_shared<std::array<char, 8192>>();
  asio::posix::stream_descriptor& pipe = *child->pipes[stream - 1];
  (void)fd;
  pipe.async_read_some(asio::buffer(*buffer), [this, child, stream, fd, buffer](const boost::system::error_code& error,
                                                                                 std::size_t n) {
    if (n > 0) output_(child->id, stream, std::string_view(buffer->data(), n));
    if (error) {
      --child->open_pipes;
      MaybeDone(child);
      return;
    }
    ReadPipe(child, stream, fd);
  });
}

void Processes::Start(std::int32_t id, const Launch& launch) {
  auto child = std::make_shared<Child>();
  child->id = id;
  const std::string program = launch.argv.empty() ? std::string() : Resolve(launch.argv[0], launch.env);
  // Everything the child needs is built before fork: after it, only
  // async-signal-safe calls.
  std::vector<std::string> env_text;
  for (const auto& [k, v] : launch.env) env_text.push_back(k + "=" + v);
  std::vector<char*> envp, argv;
  for (std::string& s : env_text) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = launch.argv;
  for (std::string& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  const std::string error_text = program.empty() ? (launch.argv.empty() ? "no command" : launch.argv[0]) + ": command not found\n"
                                                 : "";
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
    output_(id, 2, std::string("cannot create pipes: ") + std::strerror(errno) + "\n");
    exit_(id, 127);
    return;
  }
  sigset_t all, previous;
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, &previous);  // no handler of ours runs in the child
  const pid_t pid = fork();
  if (pid == 0) {
    for (int s = 1; s < NSIG; ++s) signal(s, SIG_DFL);
    sigprocmask(SIG_SETMASK, &previous, nullptr);
    dup2(out[1], 1);
    dup2(err[1], 2);
    const int null = open("/dev/null", O_RDONLY);
    if (null >= 0) dup2(null, 0);
    close_range(3, ~0U, 0);
    if (!launch.cwd.empty() && chdir(launch.cwd.c_str()) != 0) {
      const char* message = "cannot change to the working directory\n";
      (void)!write(2, message, std::strlen(message));
      _exit(1);
    }
    if (!program.empty()) execve(program.c_str(), argv.data(), envp.data());
    const std::string& text = program.empty() ? error_text : std::string();
    if (!text.empty()) (void)!write(2, text.data(), text.size());
    if (program.empty()) _exit(127);
    const char* failed = "cannot execute the program\n";
    (void)!write(2, failed, std::strlen(failed));
    _exit(126);
  }
  sigprocmask(SIG_SETMASK, &previous, nullptr);
  close(out[1]);
  close(err[1]);
  if (pid < 0) {
    close(out[0]);
    close(err[0]);
    output_(id, 2, std::string("cannot fork: ") + std::strerror(errno) + "\n");
    exit_(id, 127);
    return;
  }
  child->pid = pid;
  child->pipes[0] = std::make_unique<asio::posix::stream_descriptor>(io_, out[0]);
  child->pipes[1] = std::make_unique<asio::posix::stream_descriptor>(io_, err[0]);
  children_[pid] = child;
  ReadPipe(child, 1, out[0]);
  ReadPipe(child, 2, err[0]);
  Reap();  // it may have exited before it was in children_
}

void Processes::Signal(int signal) {
  for (const auto& [pid, child] : children_) {
    if (!child->exited) kill(pid, signal);
  }
}

}  // namespace tessera::cli::slurm

namespace tessera::cli::slurm {

void Processes::Signal(std::int32_t id, int signal) {
  for (const auto& [pid, child] : children_) {
    if (!child->exited && child->id == id) kill(pid, signal);
  }
}

}  // namespace tessera::cli::slurm
