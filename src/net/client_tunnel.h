// The client's side of an upgraded connection (net/tunnel.h): `tessera exec`
// and the agent open one each for an interactive session. Open sends one
// request on a connection of its own, asking to switch protocols; once the
// server answers 101 the connection carries raw bytes both ways.
//
// Blocking and simple on purpose: a session pumps a terminal or a socket, so
// one thread may block in ReadSome while another blocks in Write (the two
// never race on the TLS state: both run on the tunnel's own I/O thread).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "net/http_client.h"
#include "net/http_types.h"
#include "net/tls.h"

namespace tessera::net {

// The protocol a session's tunnel switches to (the Upgrade header).
inline constexpr const char* kSessionProtocol = "tessera-session/1";

class ClientTunnel {
 public:
  // `headers` go with the request (Authorization). An answer other than 101
  // is returned as `*refusal` with an error status naming the answer's
  // status; no answer at all is an error naming the server.
  static Result<std::unique_ptr<ClientTunnel>> Open(const Endpoint& endpoint, TlsContext tls, std::string_view method, std::string_view target,
                                                    std::string_view body, const std::vector<std::pair<std::string, std::string>>& headers,
                                                    std::chrono::milliseconds timeout, HttpResponse* refusal);
  ~ClientTunnel();
  ClientTunnel(const ClientTunnel&) = delete;
  ClientTunnel& operator=(const ClientTunnel&) = delete;

  // Up to `size` bytes; 0 once the other side has ended (or Close was called).
  std::size_t ReadSome(char* data, std::size_t size);
  // All of `bytes`; false once the tunnel has ended.
  bool Write(std::string_view bytes);
  // Any thread: ends the tunnel; a blocked ReadSome or Write returns.
  void Close();

 private:
  class Impl;
  explicit ClientTunnel(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::net
