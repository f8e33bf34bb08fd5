// `tessera server`: the control plane wired to its store and its HTTP API,
// run until SIGINT or SIGTERM. Also used in-process by `tessera up` and the
// control-plane benchmark.
//
// With an etcd store, several replicas share one cluster state and elect a
// leader (ha/leader_election.h). Until it wins, a replica is a follower: it
// answers /v1/leader and /v1/healthz itself and redirects every other
// request (307) to the leader, or answers 503 while none is elected. The
// winner recovers the state from etcd, fenced by its epoch, and serves. A
// leader that loses its lease exits (code 75), so that it can never act on
// a state another replica now owns; its supervisor starts it again.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "base/status.h"
#include "controlplane/control_plane.h"
#include "ha/leader_election.h"
#include "net/http_server.h"
#include "server/session_broker.h"
#include "store/state_store.h"

namespace tessera::server {

using controlplane::ControlPlane;
using controlplane::ControlPlaneOptions;
using controlplane::StoreCheck;

struct ServerOptions {
  std::string data_dir = "tessera-data";  // state.db and task logs
  // Where the state lives: "sqlite" (<data_dir>/state.db, the default) or
  // "etcd://HOST:PORT[/PREFIX]" (store/etcd_store.h).
  std::string store = "sqlite";
  // With an etcd store: the URL clients reach this replica at (what a
  // follower redirects to); default http://ADDRESS:PORT.
  std::string advertise;
  std::chrono::seconds lease_ttl{2};  // the leader's etcd lease
  // With access control: a file for the first cluster-admin token. When it
  // holds no token the server accepts, a new one is made and written there,
  // readable by this user only.
  std::string admin_token_file;
  std::string address = "127.0.0.1";
  std::uint16_t port = 7070;
  int threads = 2;
  std::size_t body_limit = 1 << 20;
  // What one client may hold (net/http_server.h; docs/security.md,
  // "Connection limits"). Agents and cluster administrators are privileged:
  // they use the reserve and are never shed.
  net::HttpTimeouts timeouts;
  net::ConnectionLimits connections;
  net::LoadLimits load;
  // TLS (net/tls.h): without a certificate the API is plain HTTP. A CA
  // (ca_file) turns on mutual TLS for agents: each must present a
  // certificate that names its node; require_client_cert refuses every
  // connection without a certificate the CA signed, at the handshake.
  net::TlsFiles tls;
  bool require_client_cert = false;
  ControlPlaneOptions plane;
};

class Server {
 public:
  // Opens the store, recovers, listens. Errors name the file or address.
  static Result<std::unique_ptr<Server>> Start(ServerOptions options);
  // Reads the store the options name, offline, and reports every damaged
  // record (`tessera server --check-store`); changes nothing.
  static Result<StoreCheck> CheckStore(ServerOptions options);
  ~Server();
  std::uint16_t port() const { return http_->port(); }
  net::HttpServerStats connection_stats() const { return http_->Stats(); }
  bool tls() const { return tls_; }
  std::string url() const { return (tls_ ? "https://" : "http://") + address_ + ":" + std::to_string(port()); }
  ControlPlane& plane() { return *plane_; }
  const std::string& store_description() const { return store_description_; }

 private:
  Server() = default;
  // What the router asks first: nothing while this replica serves; a
  // redirect or a 503 while it does not lead. (The routes then find the
  // caller: api_routes.h.)
  std::optional<net::HttpResponse> Gate(net::HttpRequest& request) const;
  net::HttpResponse LeaderInfo() const;  // GET /v1/leader
  // Elected: recover from the store, fenced by the epoch, then serve.
  void Promote(std::int64_t epoch);
  Status KeepAdminToken(const std::string& path);

  std::unique_ptr<store::StateStore> store_;
  net::Router router_;
  std::unique_ptr<net::HttpServer> http_;
  // After http_: destroyed first, with the long polls it still holds, whose
  // connections must close while the HTTP server's I/O context exists.
  std::unique_ptr<ControlPlane> plane_;
  // Holds the users' session requests until their agents come; after http_
  // for the same reason as plane_.
  std::unique_ptr<SessionBroker> sessions_;
  std::string store_description_;
  std::string advertise_;
  std::string address_;
  bool tls_ = false;
  std::unique_ptr<ha::LeaderElection> election_;  // with an etcd store
  // advertise_ and election_ are set before published_, and never after:
  // the HTTP threads read them only once it is true.
  std::atomic<bool> published_{false};
  std::atomic<bool> serving_{false};
  std::thread promotion_;
};

}  // namespace tessera::server
