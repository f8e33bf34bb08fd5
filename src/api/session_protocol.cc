#include "api/session_protocol.h"

#include <limits>

#include "api/json_reader.h"

namespace tessera::api {

using nlohmann::json;

std::string_view ToString(SessionKind kind) {
  switch (kind) {
    case SessionKind::kExec: return "exec";
    case SessionKind::kAttach: return "attach";
    case SessionKind::kPortForward: return "port-forward";
  }
  return "exec";
}

json ToJson(const SessionRequest& r) {
  json out = {{"kind", ToString(r.kind)}};
  if (!r.task.empty()) out["task"] = r.task;
  if (!r.command.empty()) out["command"] = r.command;
  if (r.tty) out["tty"] = true;
  if (r.rows > 0) out["rows"] = r.rows;
  if (r.cols > 0) out["cols"] = r.cols;
  if (r.port > 0) out["port"] = r.port;
  if (!r.id.empty()) {
    out["id"] = r.id;
    out["job"] = r.key.job;
    out["attempt"] = r.key.attempt;
    out["taskIndex"] = r.key.task;
  }
  return out;
}

Result<SessionRequest> SessionRequestFromJson(const json& value) {
  Result<JsonObject> o = JsonObject::Read(value, "", {"kind", "task", "command", "tty", "rows", "cols", "port", "id", "job", "attempt", "taskIndex"},
                                          {"kind"});
  if (!o.ok()) return o.status();
  SessionRequest r;
  std::string kind;
  TESSERA_RETURN_IF_ERROR(o->ReadString("kind", &kind));
  if (kind == "exec") {
    r.kind = SessionKind::kExec;
  } else if (kind == "attach") {
    r.kind = SessionKind::kAttach;
  } else if (kind == "port-forward") {
    r.kind = SessionKind::kPortForward;
  } else {
    return o->Error("kind", "'" + kind + "' is not one of: exec, attach, port-forward");
  }
  TESSERA_RETURN_IF_ERROR(o->ReadString("task", &r.task));
  TESSERA_RETURN_IF_ERROR(o->ReadStringList("command", &r.command));
  TESSERA_RETURN_IF_ERROR(o->ReadBool("tty", &r.tty));
  TESSERA_RETURN_IF_ERROR(o->ReadInt32("rows", &r.rows, 0, 10000));
  TESSERA_RETURN_IF_ERROR(o->ReadInt32("cols", &r.cols, 0, 10000));
  TESSERA_RETURN_IF_ERROR(o->ReadInt32("port", &r.port, 0, 65535));
  TESSERA_RETURN_IF_ERROR(o->ReadString("id", &r.id));
  TESSERA_RETURN_IF_ERROR(o->ReadInt("job", &r.key.job, 0, std::numeric_limits<std::int64_t>::max()));
  TESSERA_RETURN_IF_ERROR(o->ReadInt32("attempt", &r.key.attempt, 0, std::numeric_limits<std::int32_t>::max()));
  TESSERA_RETURN_IF_ERROR(o->ReadInt32("taskIndex", &r.key.task, 0, std::numeric_limits<std::int32_t>::max()));
  if (r.kind == SessionKind::kExec && (r.command.empty() || r.command.front().empty())) {
    return o->Error("command", "an exec needs a command");
  }
  if (r.kind == SessionKind::kPortForward && r.port == 0) return o->Error("port", "a port-forward needs the port to reach (1-65535)");
  return r;
}

std::string EncodeFrame(FrameType type, std::string_view payload) {
  std::string out;
  out.reserve(5 + payload.size());
  out.push_back(static_cast<char>(type));
  const auto size = static_cast<std::uint32_t>(payload.size());
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((size >> shift) & 0xff));
  out.append(payload);
  return out;
}

Result<std::optional<Frame>> FrameDecoder::Next() {
  if (pending_.size() - at_ < 5) return std::optional<Frame>();
  const char type = pending_[at_];
  if (std::string_view("ioerx!").find(type) == std::string_view::npos) {
    return InvalidArgument("not a session frame (type byte " + std::to_string(static_cast<unsigned char>(type)) + ")");
  }
  std::uint32_t size = 0;
  for (int i = 1; i <= 4; ++i) size = (size << 8) | static_cast<unsigned char>(pending_[at_ + static_cast<std::size_t>(i)]);
  if (size > kMaxFramePayload) return InvalidArgument("a session frame of " + std::to_string(size) + " bytes is over the limit");
  if (pending_.size() - at_ - 5 < size) return std::optional<Frame>();
  Frame frame{static_cast<FrameType>(type), pending_.substr(at_ + 5, size)};
  at_ += 5 + size;
  // Drop what was consumed once it outweighs what is left.
  if (at_ > pending_.size() / 2) {
    pending_.erase(0, at_);
    at_ = 0;
  }
  return std::optional<Frame>(std::move(frame));
}

}  // namespace tessera::api
