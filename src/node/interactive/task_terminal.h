// The terminal of an interactive task (`tessera run -it`): the task runs on
// a pseudo-terminal whose other side the agent holds. What the task writes
// is appended to its stdout log -- `tessera logs` shows the session -- and
// sent to whoever is attached; what the attached user types goes to the task.
// One user at a time: a new attach takes the terminal over, and the
// session is there to come back to until the task ends. An attach starts
// with the terminal's recent output (the prompt the shell printed before
// anyone was there, the screen a dropped user left).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace tessera::node {

class TaskTerminal {
 public:
  static constexpr std::size_t kRecent = 8 << 10;

  // Duplicates `terminal` (the task's terminal, TaskProcess::terminal()).
  TaskTerminal(int terminal, const std::string& log_path);
  ~TaskTerminal();
  TaskTerminal(const TaskTerminal&) = delete;
  TaskTerminal& operator=(const TaskTerminal&) = delete;

  // The recent output, then all output, goes to `sink` (false from it: the user is gone),
  // until Detach, another Attach, or the terminal's end; in the last two
  // cases `ended` is called (under the terminal's lock: it must not call back).
  using Sink = std::function<bool(std::string_view)>;
  std::uint64_t Attach(Sink sink, std::function<void()> ended);
  void Detach(std::uint64_t id);
  // The user's keys, to the task.
  void Write(std::string_view input);
  void Resize(std::uint16_t rows, std::uint16_t cols);

  // The last time anyone typed, attached, or the task wrote: the idle timeout counts from it.
  std::chrono::steady_clock::time_point last_used() const;
  bool ended() const { return ended_; }

 private:
  void Pump();
  void Used();

  int fd_ = -1;
  int log_ = -1;
  std::atomic<bool> stop_{false};
  std::atomic<bool> ended_{false};
  std::atomic<std::int64_t> last_used_;  // steady_clock ticks
  std::mutex mu_;  // the attached user
  Sink sink_;
  std::string recent_;  // the last kRecent bytes of output
  std::function<void()> on_end_;
  std::uint64_t attached_ = 0, next_id_ = 1;
  std::thread pump_;
};

}  // namespace tessera::node
