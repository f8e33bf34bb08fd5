// Session frames (api/session_protocol.h) over a client tunnel: what the
// agent and `tessera exec` (src/cli, which may use the node's modules) each
// hold once the server has joined them.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "api/session_protocol.h"
#include "net/client_tunnel.h"

namespace tessera::node {

class SessionStream {
 public:
  explicit SessionStream(std::unique_ptr<net::ClientTunnel> tunnel) : tunnel_(std::move(tunnel)) {}

  // Any thread; false once the tunnel has ended.
  bool Send(api::FrameType type, std::string_view payload = {});
  // One thread at a time: the next frame; nothing once the tunnel ended, or
  // broke (then error() says why).
  std::optional<api::Frame> Receive();
  const std::string& error() const { return error_; }
  // Any thread: ends the tunnel; a blocked Receive returns.
  void Close() { tunnel_->Close(); }

 private:
  std::unique_ptr<net::ClientTunnel> tunnel_;
  std::mutex send_mu_;  // a frame is written whole
  api::FrameDecoder decoder_;
  std::string error_;
};

}  // namespace tessera::node
