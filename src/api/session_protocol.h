// Interactive sessions (`tessera exec`, `attach`, `port-forward`): what the
// user asks for, what the agent is told, and the frames both ends exchange
// once the server has joined their connections (docs/interactive.md).
//
//   POST /v1/jobs/{id}/sessions              SessionRequest (user) -> 101, then frames
//   GET  /v1/nodes/{name}/sessions?wait=S    -> {"sessions": [SessionRequest...]} (agent's long poll)
//   POST /v1/nodes/{name}/sessions/{sid}     -> 101, then frames (the agent's end)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/agent_protocol.h"
#include "base/status.h"

namespace tessera::api {

enum class SessionKind { kExec, kAttach, kPortForward };
std::string_view ToString(SessionKind kind);

struct SessionRequest {
  SessionKind kind = SessionKind::kExec;
  std::string task;                  // the user's: a task name ("worker-1"); empty: the first task
  std::vector<std::string> command;  // exec: what to run beside the task
  bool tty = false;                  // a terminal (exec; attach follows the task's)
  std::int32_t rows = 0, cols = 0;   // its size; 0: the agent's default
  std::int32_t port = 0;             // port-forward: the port on the task's node (127.0.0.1)
  // Filled by the server for the agent:
  std::string id;  // the session's handle on the server
  TaskKey key;     // the run and task it reaches
};
nlohmann::json ToJson(const SessionRequest& request);
// Every error names the field ("command: an exec needs a command").
Result<SessionRequest> SessionRequestFromJson(const nlohmann::json& value);

// A tunnel's bytes are frames: a type byte, the payload's length (4 bytes,
// big-endian), the payload.
enum class FrameType : char {
  kInput = 'i',   // to the process's stdin (port-forward: to the socket); empty: end of input
  kOutput = 'o',  // its stdout (port-forward: from the socket)
  kError = 'e',   // its stderr
  kResize = 'r',  // the user's terminal changed size: "ROWSxCOLS"
  kExit = 'x',    // the process ended: its exit code as text; the last frame
  kFailed = '!',  // the session could not start or broke: why; the last frame
};
inline constexpr std::size_t kMaxFramePayload = 1 << 20;
// What each end reads at once, and so the usual frame: large enough that a
// port-forward moves bulk data at a fraction of the CPU (frames cost a write each).
inline constexpr std::size_t kSessionChunk = 64 << 10;

struct Frame {
  FrameType type;
  std::string payload;
};
std::string EncodeFrame(FrameType type, std::string_view payload);

// Cuts a byte stream into frames, whatever pieces it arrives in.
class FrameDecoder {
 public:
  void Feed(std::string_view bytes) { pending_.append(bytes); }
  // The next whole frame; an error for an unknown type or a payload over
  // kMaxFramePayload (the stream is not a session's).
  Result<std::optional<Frame>> Next();

 private:
  std::string pending_;
  std::size_t at_ = 0;
};

}  // namespace tessera::api
