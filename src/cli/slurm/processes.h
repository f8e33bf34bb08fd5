// Processes a step launches (the batch script, srun's local tasks, a step
// worker's tasks), each with its stdout and stderr read through pipes on an
// Asio io_context, single-threaded.
//
// Assumptions
//   * The io_context runs on one thread, and this class is the only reaper
//     of the process's children (SIGCHLD through an asio::signal_set,
//     waitpid(-1) until none is left).
//   * Children stay in the caller's process group, so that a signal the
//     Tessera agent sends to the task's group (a checkpoint request, a stop)
//     reaches them too.
//   * A process is done when it exited and both pipes reached end of file;
//     a child it left behind that keeps a pipe open delays that by at most
//     2 s, then the pipes are closed.
// The program is looked up in the PATH of the environment it is given;
// when it cannot be started, its stderr says so and it exits 127 (as a
// shell does).
#pragma once

#include <sys/types.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::cli::slurm {

struct Launch {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;  // the whole environment
  std::string cwd;                         // empty: the current directory
};

class Processes {
 public:
  using Output = std::function<void(std::int32_t id, int stream /* 1 or 2 */, std::string_view data)>;
  using Exit = std::function<void(std::int32_t id, int code)>;

  Processes(boost::asio::io_context& io, Output output, Exit exit);
  ~Processes();
  Processes(const Processes&) = delete;
  Processes& operator=(const Processes&) = delete;

  // Starts a process; `id` names it in the callbacks.
  void Start(std::int32_t id, const Launch& launch);
  // Sends a signal to every process still running, or to one.
  void Signal(int signal);
  void Signal(std::int32_t id, int signal);
  std::size_t active() const { return children_.size(); }

 private:
  struct Child;
  void WatchChildren();
  void Reap();
  void ReadPipe(std::shared_ptr<Child> child, int stream, int fd);
  void MaybeDone(const std::shared_ptr<Child>& child);

  boost::asio::io_context& io_;
  Output output_;
  Exit exit_;
  boost::asio::signal_set sigchld_;
  std::map<pid_t, std::shared_ptr<Child>> children_;
};

// The exit code of a wait status: the code, or 128 + the signal.
int ExitCodeOf(int wait_status);

// Writes all of `data` to a blocking descriptor (the step's stdout, stderr,
// an -o file), retrying on EINTR; gives up on a descriptor that fails.
void WriteAll(int fd, std::string_view data);

}  // namespace tessera::cli::slurm
