// Runs a helper program (skopeo, umoci) to completion: argv without a shell,
// its output captured, its time bounded.
//
// The program starts through posix_spawn as the leader of a new session (so
// of a new process group, and without the agent's controlling terminal), with
// stdin on /dev/null, default signal dispositions and an empty signal mask
// (the agent ignores SIGPIPE; its helpers must not inherit that). Its stdout
// and stderr are pipes created close-on-exec, so a program started at the
// same time from another thread never inherits them.
//
// A poll() loop reads both pipes and watches the program through a pidfd
// until the deadline. When the program exits, whatever it left running in
// its group is SIGKILLed (a helper's lifetime is its own: a straggler holding
// the pipes open must not hold the caller until the deadline). At the
// deadline the whole group is SIGKILLed and the result says timed_out. The
// leader is observed through the pidfd before it is reaped, so its pid -- and
// with it the group id -- cannot be recycled while the group is signalled.
//
// Thread-safe: each call owns its child. Assumes the process neither ignores
// SIGCHLD nor reaps with waitpid(-1).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace tessera::node {

// How much of each stream a CommandResult keeps: the end, where tools put
// their error.
inline constexpr std::size_t kCommandOutputTailBytes = 64 * 1024;

struct CommandSpec {
  std::vector<std::string> argv;  // argv[0] is searched on PATH when it holds no '/'
  std::chrono::milliseconds timeout{std::chrono::minutes(1)};
  // Called with each line of stdout as it arrives (without its '\n'; the last
  // one even without a '\n'), on the calling thread. A line longer than
  // kCommandOutputTailBytes arrives in pieces of that size.
  std::function<void(std::string_view line)> on_stdout_line{};
};

struct CommandResult {
  int exit_code = 0;       // the exit status, or 128 + the signal that killed it
  bool timed_out = false;  // killed at the deadline (exit_code is then 128 + SIGKILL)
  std::string stdout_tail;  // the last kCommandOutputTailBytes of each stream
  std::string stderr_tail;
};

// Runs `spec` and waits for it. A Status only when the program cannot be
// started (not found, not executable, no descriptors left), naming it; an
// exit code, however bad, is a CommandResult.
Result<CommandResult> RunCommand(const CommandSpec& spec);

// The line a tool ended its output on, for a message: a logrus line (skopeo,
// runc) reduced to its msg="...", umoci's without its "⨯" mark; `secret`,
// when given, masked.
std::string ToolMessage(const std::string& output, const std::string& secret = {});

}  // namespace tessera::node
