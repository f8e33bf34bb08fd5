#include "controlplane/server.h"

#include <filesystem>

#include "controlplane/api_routes.h"
#include "dashboard/routes.h"
#include "store/etcd_store.h"
#include "store/sqlite_store.h"

namespace tessera::controlplane {

Result<std::unique_ptr<Server>> Server::Start(ServerOptions options) {
  std::unique_ptr<Server> server(new Server());
  if (options.store == "sqlite") {
    Result<std::unique_ptr<store::SqliteStore>> store =
        store::SqliteStore::Open((std::filesystem::path(options.data_dir) / "state.db").string());
    if (!store.ok()) return store.status();
    server->store_ = std::move(*store);
  } else if (options.store.starts_with("etcd://")) {
    Result<std::unique_ptr<store::EtcdStore>> store = store::EtcdStore::Open(options.store);
    if (!store.ok()) return store.status();
    server->store_ = std::move(*store);
  } else {
    return InvalidArgument("--store: '" + options.store + "' is not sqlite or etcd://HOST:PORT[/PREFIX]");
  }
  server->store_description_ = server->store_->Describe();
  Result<sched::Scheduler> scheduler = sched::Scheduler::Create(options.plane.scheduler);
  if (!scheduler.ok()) return scheduler.status();
  if (options.plane.log_dir.empty()) options.plane.log_dir = (std::filesystem::path(options.data_dir) / "logs").string();
  server->plane_ = std::make_unique<ControlPlane>(options.plane, *server->store_, std::move(*scheduler));
  try {
    TESSERA_RETURN_IF_ERROR(server->plane_->Recover());
  } catch (const nlohmann::json::exception& e) {
    return Internal("the state database " + server->store_description_ + " holds a damaged record: " + e.what());
  }
  AddApiRoutes(server->router_, *server->plane_);
  dashboard::AddDashboardRoutes(server->router_);
  net::HttpServerOptions http;
  http.address = options.address;
  http.port = options.port;
  http.threads = options.threads;
  http.body_limit = options.body_limit;
  server->http_ = std::make_unique<net::HttpServer>(http, server->router_);
  TESSERA_RETURN_IF_ERROR(server->http_->Start());
  server->plane_->Start();
  return server;
}

Server::~Server() {
  // Stop answering first, then stop the loops, then close the store.
  if (http_) http_->Stop();
  if (plane_) plane_->Stop();
}

}  // namespace tessera::controlplane
