#include "node/interactive/task_terminal.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

namespace tessera::node {

TaskTerminal::TaskTerminal(int terminal, const std::string& log_path) : fd_(fcntl(terminal, F_DUPFD_CLOEXEC, 3)) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(log_path).parent_path(), ec);
  log_ = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  Used();
  pump_ = std::thread([this] { Pump(); });
}

TaskTerminal::~TaskTerminal() {
  stop_ = true;
  pump_.join();
  if (fd_ >= 0) close(fd_);
  if (log_ >= 0) close(log_);
}

void TaskTerminal::Used() { last_used_ = std::chrono::steady_clock::now().time_since_epoch().count(); }

std::chrono::steady_clock::time_point TaskTerminal::last_used() const {
  return std::chrono::steady_clock::time_point(std::chrono::steady_clock::duration(last_used_.load()));
}

std::uint64_t TaskTerminal::Attach(Sink sink, std::function<void()> ended) {
  std::lock_guard lock(mu_);
  Used();
  if (ended_) {
    ended();
    return 0;
  }
  if (on_end_) on_end_();  // taken over: the earlier user's session ends
  sink_ = nullptr;
  on_end_ = nullptr;
  attached_ = 0;
  if (!recent_.empty() && !sink(recent_)) return 0;
  sink_ = std::move(sink);
  on_end_ = std::move(ended);
  attached_ = next_id_++;
  return attached_;
}

void TaskTerminal::Detach(std::uint64_t id) {
  std::lock_guard lock(mu_);
  if (id != attached_) return;
  Used();
  sink_ = nullptr;
  on_end_ = nullptr;
  attached_ = 0;
}

void TaskTerminal::Write(std::string_view input) {
  Used();
  while (!input.empty() && !ended_) {
    const ssize_t n = write(fd_, input.data(), input.size());
    if (n > 0) {
      input.remove_prefix(static_cast<std::size_t>(n));
    } else if (n < 0 && errno != EINTR && errno != EAGAIN) {
      return;  // the task is gone
    }
  }
}

void TaskTerminal::Resize(std::uint16_t rows, std::uint16_t cols) {
  const winsize size{rows, cols, 0, 0};
  ioctl(fd_, TIOCSWINSZ, &size);  // the task's foreground job gets SIGWINCH
}

// Until the terminal's last user on the task's side is gone (EIO) or the
// terminal is destroyed.
void TaskTerminal::Pump() {
  char buffer[16 << 10];
  while (!stop_) {
    pollfd p{fd_, POLLIN, 0};
    const int ready = poll(&p, 1, 200);
    if (ready <= 0) continue;
    const ssize_t n = read(fd_, buffer, sizeof buffer);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) break;
    const std::string_view out(buffer, static_cast<std::size_t>(n));
    Used();
    if (log_ >= 0) (void)!write(log_, out.data(), out.size());
    std::lock_guard lock(mu_);
    recent_.append(out);
    if (recent_.size() > kRecent) recent_.erase(0, recent_.size() - kRecent);
    if (sink_ && !sink_(out)) {
      sink_ = nullptr;
      on_end_ = nullptr;
      attached_ = 0;
    }
  }
  std::lock_guard lock(mu_);
  ended_ = true;
  if (on_end_) on_end_();
  sink_ = nullptr;
  on_end_ = nullptr;
}

}  // namespace tessera::node
