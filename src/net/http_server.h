// An asynchronous HTTP/1.1 server (Boost.Beast) on a small fixed thread pool:
// every connection is a few hundred bytes of state on a strand, never a thread,
// so thousands of agents and watchers cost nothing while they wait.
//
// Requests are read with a body limit (413 past it) and handed to the Router;
// a handler may answer later from any thread (long polls). Keep-alive is
// honoured. With a TLS context every connection is TLS (net/tls.h), and each
// request carries the name of the client certificate its connection proved.
//
// A client cannot hold the server: every phase of a connection has a
// deadline (HttpTimeouts), the connections it may hold are capped with a
// reserve for agents and administrators (net/connection_table.h), and what
// unprivileged requests may hold at once is bounded, past which they are
// answered 503 at once (net/load_shedder.h). Out of descriptors, the server
// keeps accepting and refusing instead of stalling.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "net/connection_table.h"
#include "net/load_shedder.h"
#include "net/router.h"
#include "net/tls.h"

namespace boost::asio {
class io_context;
}

namespace tessera::net {

// How long each phase of a connection may take before the server closes it.
// A long poll is not bound by them: it waits in the handler, and a watch
// answers at its own heartbeat.
struct HttpTimeouts {
  std::chrono::seconds handshake{10};  // TLS: from accept to the end of the handshake
  std::chrono::seconds headers{10};    // a request's first byte (or the connection's start) to the end of its headers
  std::chrono::seconds idle{120};      // a keep-alive connection between requests
  // A body must arrive at this rate, after a grace of `headers`.
  std::uint64_t min_body_rate = 64 << 10;  // bytes per second
  std::chrono::seconds write{30};          // sending an answer
};
enum class TimeoutPhase { kHandshake, kHeaders, kBody, kIdle, kWrite };
inline constexpr std::size_t kTimeoutPhases = 5;
std::string_view ToString(TimeoutPhase p);  // "handshake", "headers", "body", "idle", "write"

struct HttpServerOptions {
  std::string address = "127.0.0.1";
  std::uint16_t port = 0;  // 0: the kernel picks one (see port())
  int threads = 2;
  std::size_t body_limit = 1 << 20;
  HttpTimeouts timeouts;
  ConnectionLimits connections;
  LoadLimits load;
  TlsContext tls;  // null: plain HTTP
  // Who sent a request, from its headers and client certificate; asked on a
  // connection's first request. Unset: every sender is a client.
  std::function<PeerClass(const HttpRequest&)> identify;
};

struct HttpServerStats {
  ConnectionLimits limits;  // with the defaults filled in
  ConnectionTable::Counts connections;
  LoadShedder::Counts load;
  std::array<std::uint64_t, kTimeoutPhases> timeouts{};  // connections closed, by TimeoutPhase
};

class HttpServer {
 public:
  HttpServer(HttpServerOptions options, const Router& router);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and starts the threads. Fails with a message naming the address.
  Status Start();
  void Stop();
  std::uint16_t port() const { return port_; }
  HttpServerStats Stats() const;
  // For timers that must run beside the connections (long-poll deadlines).
  boost::asio::io_context& io_context();

 private:
  class Impl;
  HttpServerOptions options_;
  const Router& router_;
  std::unique_ptr<Impl> impl_;
  std::vector<std::thread> threads_;
  std::uint16_t port_ = 0;
};

}  // namespace tessera::net
