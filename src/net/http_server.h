// An asynchronous HTTP/1.1 server (Boost.Beast) on a small fixed thread pool:
// every connection is a few hundred bytes of state on a strand, never a thread,
// so thousands of agents and watchers cost nothing while they wait.
//
// Requests are read with a body limit (413 past it) and handed to the Router;
// a handler may answer later from any thread (long polls). Keep-alive is
// honoured; idle connections are closed after `idle_timeout`. With a TLS
// context every connection is TLS (net/tls.h), and each request carries the
// name of the client certificate its connection proved.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "net/router.h"
#include "net/tls.h"

namespace boost::asio {
class io_context;
}

namespace tessera::net {

struct HttpServerOptions {
  std::string address = "127.0.0.1";
  std::uint16_t port = 0;  // 0: the kernel picks one (see port())
  int threads = 2;
  std::size_t body_limit = 1 << 20;
  std::chrono::seconds idle_timeout{120};
  TlsContext tls;  // null: plain HTTP
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
