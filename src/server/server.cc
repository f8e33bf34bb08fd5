#include "server/server.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "dashboard/routes.h"
#include "server/api_routes.h"
#include "server/http_answers.h"
#include "store/etcd_store.h"
#include "store/sqlite_store.h"

namespace tessera::server {
namespace {

// A replica that cannot serve now; clients (net/http_client.h) wait and retry.
net::HttpResponse Unavailable(const std::string& why) {
  net::HttpResponse response = net::ErrorResponse(503, why);
  response.headers.emplace_back("Retry-After", "1");
  response.headers.emplace_back("X-Tessera-Replica", "follower");
  return response;
}

// The state store the options name: SQLite in the data directory (made when
// missing, unless it must exist), or etcd.
Result<std::unique_ptr<store::StateStore>> OpenStore(const ServerOptions& options, bool must_exist) {
  if (options.store == "sqlite") {
    const std::string path = (std::filesystem::path(options.data_dir) / "state.db").string();
    if (must_exist && !std::filesystem::exists(path)) return NotFound("no state database at " + path + " (--data-dir)");
    Result<std::unique_ptr<store::SqliteStore>> store = store::SqliteStore::Open(path);
    if (!store.ok()) return store.status();
    return std::unique_ptr<store::StateStore>(std::move(*store));
  }
  if (options.store.starts_with("etcd://")) {
    Result<std::unique_ptr<store::EtcdStore>> store = store::EtcdStore::Open(options.store);
    if (!store.ok()) return store.status();
    return std::unique_ptr<store::StateStore>(std::move(*store));
  }
  return InvalidArgument("--store: '" + options.store + "' is not sqlite or etcd://HOST:PORT[,HOST:PORT...][/PREFIX]");
}

// Agents (a node's certificate or token) and cluster administrators are
// privileged: they keep a reserve of connections and are never shed. With
// access control off every caller is an administrator (access.cc), so only
// the limits on connections that never finish a request apply.
net::PeerClass IdentifyPeer(const ControlPlane& plane, const net::HttpRequest& request) {
  if (!request.client_certificate.empty()) return net::PeerClass::kAgent;
  const std::optional<auth::Role> role = plane.RoleOf(request.Header("authorization"));
  if (role == auth::Role::kNode) return net::PeerClass::kAgent;
  if (role == auth::Role::kClusterAdmin) return net::PeerClass::kAdmin;
  return net::PeerClass::kClient;
}

// What lives in the data directory unless the options say otherwise: task
// logs and the key that seals the store's secrets.
void DefaultPaths(ServerOptions& options) {
  const std::filesystem::path dir(options.data_dir);
  if (options.plane.log_dir.empty()) options.plane.log_dir = (dir / "logs").string();
  if (options.plane.secret_key_file.empty()) options.plane.secret_key_file = (dir / "secret.key").string();
}

}  // namespace

Result<StoreCheck> Server::CheckStore(ServerOptions options) {
  Result<std::unique_ptr<store::StateStore>> store = OpenStore(options, /*must_exist=*/true);
  if (!store.ok()) return store.status();
  Result<sched::Scheduler> scheduler = sched::Scheduler::Create(options.plane.scheduler);
  if (!scheduler.ok()) return scheduler.status();
  DefaultPaths(options);
  ControlPlane plane(options.plane, **store, std::move(*scheduler));
  return plane.CheckStore();
}

Result<std::unique_ptr<Server>> Server::Start(ServerOptions options) {
  std::unique_ptr<Server> server(new Server());
  net::HttpServerOptions http;
  if (!options.tls.cert_file.empty()) {
    Result<net::TlsContext> tls = net::MakeServerTls(options.tls, options.require_client_cert);
    if (!tls.ok()) return tls.status();
    http.tls = *tls;
    options.plane.access.node_certificates = !options.tls.ca_file.empty();
  }
  Result<std::unique_ptr<store::StateStore>> opened = OpenStore(options, /*must_exist=*/false);
  if (!opened.ok()) return opened.status();
  server->store_ = std::move(*opened);
  auto* etcd = dynamic_cast<store::EtcdStore*>(server->store_.get());
  server->store_description_ = server->store_->Describe();
  Result<sched::Scheduler> scheduler = sched::Scheduler::Create(options.plane.scheduler);
  if (!scheduler.ok()) return scheduler.status();
  DefaultPaths(options);
  server->plane_ = std::make_unique<ControlPlane>(options.plane, *server->store_, std::move(*scheduler));
  if (etcd == nullptr) TESSERA_RETURN_IF_ERROR(server->plane_->Recover());
  Server* self = server.get();
  server->sessions_ = std::make_unique<SessionBroker>();
  AddApiRoutes(server->router_, *server->plane_,
               {.leader = [self] { return self->LeaderInfo(); }, .connections = [self] { return self->http_->Stats(); }}, *server->sessions_);
  dashboard::AddDashboardRoutes(server->router_);
  server->router_.SetGate([self](net::HttpRequest& request) { return self->Gate(request); });
  server->address_ = options.address;
  server->tls_ = http.tls != nullptr;
  http.address = options.address;
  http.port = options.port;
  http.threads = options.threads;
  http.body_limit = options.body_limit;
  http.timeouts = options.timeouts;
  http.connections = options.connections;
  http.load = options.load;
  http.identify = [plane = server->plane_.get()](const net::HttpRequest& request) { return IdentifyPeer(*plane, request); };
  net::RaiseDescriptorLimit();  // before the limits are read off it
  server->http_ = std::make_unique<net::HttpServer>(http, server->router_);
  TESSERA_RETURN_IF_ERROR(server->http_->Start());
  server->advertise_ = !options.advertise.empty() ? options.advertise : server->url();
  if (etcd == nullptr && !options.admin_token_file.empty()) TESSERA_RETURN_IF_ERROR(server->KeepAdminToken(options.admin_token_file));
  if (etcd == nullptr) {
    server->plane_->Start();
    server->serving_ = true;
    server->published_ = true;
    return server;
  }
  ha::ElectionOptions election;
  election.key = etcd->url().prefix + "leader";
  election.identity = server->advertise_;
  election.lease_ttl = options.lease_ttl;
  server->election_ = std::make_unique<ha::LeaderElection>(etcd->url().members, election);
  server->published_ = true;
  server->election_->Start(
      [self, etcd, key = election.key, file = options.admin_token_file](std::int64_t epoch) {
        etcd->Fence(key, epoch);  // before the first write of this term
        self->promotion_ = std::thread([self, epoch, file] {
          self->Promote(epoch);
          if (Status kept = file.empty() ? Status::Ok() : self->KeepAdminToken(file); !kept.ok()) {
            std::fprintf(stderr, "tessera server: %s\n", kept.message().c_str());
          }
        });
      },
      [](const std::string& why) {
        std::fprintf(stderr, "tessera server: no longer the leader: %s; exiting so that it never acts on a state another replica owns\n",
                     why.c_str());
        std::_Exit(75);
      });
  return server;
}

void Server::Promote(std::int64_t epoch) {
  const auto start = std::chrono::steady_clock::now();
  const Status recovered = plane_->Recover();
  if (!recovered.ok()) {
    std::fprintf(stderr, "tessera server: elected, but cannot recover the state from %s: %s\n", store_description_.c_str(),
                 recovered.message().c_str());
    std::_Exit(70);
  }
  plane_->SetEpoch(epoch);
  plane_->Start();
  serving_ = true;
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr, "tessera server: elected leader (epoch %lld) as %s; state recovered in %lld ms\n", static_cast<long long>(epoch),
               advertise_.c_str(), static_cast<long long>(ms));
}

Status Server::KeepAdminToken(const std::string& path) {
  if (!plane_->access_enabled()) return Status::Ok();
  std::ifstream in(path);
  std::string kept;
  if (in && std::getline(in, kept) && plane_->TokenValid(kept)) return Status::Ok();
  Result<std::string> token = plane_->IssueToken("admin", auth::Role::kClusterAdmin, "the first cluster-admin (" + path + ")");
  if (!token.ok()) return token.status();
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0 || ::fchmod(fd, 0600) != 0) {
    if (fd >= 0) ::close(fd);
    return Status(StatusCode::kFailedPrecondition, "cannot write the admin token to " + path + ": " + std::strerror(errno));
  }
  const std::string line = *token + "\n";
  const bool written = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  ::close(fd);
  if (!written) return Status(StatusCode::kFailedPrecondition, "cannot write the admin token to " + path);
  std::fprintf(stderr, "tessera server: a cluster-admin token was written to %s (readable by this user only)\n", path.c_str());
  return Status::Ok();
}

std::optional<net::HttpResponse> Server::Gate(net::HttpRequest& request) const {
  if (!published_) return Unavailable("this replica is starting; try again in a moment");
  if (request.path == "/v1/leader" || request.path == "/v1/healthz") return std::nullopt;
  if (serving_ && (!election_ || election_->Leading())) return std::nullopt;
  const std::string leader = election_ ? election_->Leader() : std::string();
  if (!leader.empty() && leader != advertise_) {
    net::HttpResponse redirect = net::ErrorResponse(307, "this replica is a follower; the leader is " + leader);
    redirect.headers.emplace_back("Location", leader + request.target);
    return redirect;
  }
  if (leader.empty()) return Unavailable("no leader is elected yet; try again in a moment");
  if (serving_) return Unavailable("this replica is renewing its leadership; try again in a moment");
  return Unavailable(election_->Leading() ? "this replica was just elected and is recovering the state; try again in a moment"
                                          : "an earlier run of this replica still holds the leader's lease, until it expires; try again in a moment");
}

net::HttpResponse Server::LeaderInfo() const {
  if (!election_) return JsonResponse(200, {{"role", "standalone"}, {"leader", advertise_}, {"self", advertise_}, {"epoch", 0}});
  const std::string leader = election_->Leader();
  const bool leading = serving_ && election_->Leading();
  return JsonResponse(200, {{"role", leading ? "leader" : "follower"},
                            {"leader", leader.empty() ? nlohmann::json() : nlohmann::json(leader)},
                            {"self", advertise_},
                            {"epoch", leading ? election_->epoch() : 0}});
}

Server::~Server() {
  // Stop answering first, then stop the loops, then hand the leadership over.
  if (http_) http_->Stop();
  if (promotion_.joinable()) promotion_.join();
  if (plane_) plane_->Stop();
  if (election_) election_->Resign();
}

}  // namespace tessera::server
