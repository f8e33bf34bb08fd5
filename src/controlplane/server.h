// `tessera server`: the control plane wired to its store and its HTTP API,
// run until SIGINT or SIGTERM. Also used in-process by `tessera up` and the
// control-plane benchmark.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"
#include "controlplane/control_plane.h"
#include "net/http_server.h"
#include "store/state_store.h"

namespace tessera::controlplane {

struct ServerOptions {
  std::string data_dir = "tessera-data";  // state.db and task logs
  // Where the state lives: "sqlite" (<data_dir>/state.db, the default) or
  // "etcd://HOST:PORT[/PREFIX]" (store/etcd_store.h).
  std::string store = "sqlite";
  std::string address = "127.0.0.1";
  std::uint16_t port = 7070;
  int threads = 2;
  std::size_t body_limit = 1 << 20;
  ControlPlaneOptions plane;
};

class Server {
 public:
  // Opens the store, recovers, listens. Errors name the file or address.
  static Result<std::unique_ptr<Server>> Start(ServerOptions options);
  ~Server();
  std::uint16_t port() const { return http_->port(); }
  ControlPlane& plane() { return *plane_; }
  const std::string& store_description() const { return store_description_; }

 private:
  Server() = default;
  std::unique_ptr<store::StateStore> store_;
  std::unique_ptr<ControlPlane> plane_;
  net::Router router_;
  std::unique_ptr<net::HttpServer> http_;
  std::string store_description_;
};

}  // namespace tessera::controlplane
