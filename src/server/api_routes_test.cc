// The OpenAPI description must list every route the server serves, with the
// same methods, so that api/openapi.yaml never drifts from api_routes.cc;
// and every route refuses every caller its access level excludes.
#include "server/api_routes.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <future>
#include <set>

#include "store/sqlite_store.h"

namespace tessera::server {
namespace {

TEST(ApiRoutesTest, OpenApiDescribesEveryRouteAndNothingElse) {
  const char* root = std::getenv("TESSERA_SOURCE_DIR");
  ASSERT_NE(root, nullptr) << "TESSERA_SOURCE_DIR is not set (run the test through ctest)";
  const YAML::Node paths = YAML::LoadFile(std::string(root) + "/api/openapi.yaml")["paths"];
  ASSERT_TRUE(paths.IsMap());

  auto store = store::SqliteStore::Open(":memory:");
  ASSERT_TRUE(store.ok());
  auto scheduler = sched::Scheduler::Create({});
  ASSERT_TRUE(scheduler.ok());
  ControlPlane plane({}, **store, std::move(*scheduler));
  SessionBroker sessions;
  net::Router router;
  AddApiRoutes(router, plane, {.leader = [] { return net::HttpResponse{}; }, .connections = {}}, sessions);

  std::set<std::string> served;
  for (const net::Router::Route& route : router.routes()) {
    std::string path = route.pattern;
    if (const std::size_t rest = path.find("*}"); rest != std::string::npos) path.erase(rest, 1);  // {path*} -> {path}
    std::string method = route.method;
    std::transform(method.begin(), method.end(), method.begin(), [](unsigned char c) { return std::tolower(c); });
    served.insert(method + " " + path);
    EXPECT_TRUE(paths[path] && paths[path][method]) << route.method << " " << route.pattern << " is served but not in api/openapi.yaml";
  }
  for (const auto& path : paths) {
    for (const auto& method : path.second) {
      const std::string key = method.first.as<std::string>();
      if (key == "parameters" || key == "summary" || key == "description") continue;
      EXPECT_TRUE(served.contains(key + " " + path.first.as<std::string>()))
          << key << " " << path.first.as<std::string>() << " is in api/openapi.yaml but not served";
    }
  }
}

// A request in flight whose answer the test waits for.
class CapturedExchange final : public net::Exchange {
 public:
  explicit CapturedExchange(net::HttpRequest request) : request_(std::move(request)) {}
  const net::HttpRequest& request() const override { return request_; }
  net::HttpRequest& request() override { return request_; }
  void Reply(net::HttpResponse response) override { answer_.set_value(response.status); }
  int Status() {
    auto future = answer_.get_future();
    return future.wait_for(std::chrono::seconds(10)) == std::future_status::ready ? future.get() : -1;
  }

 private:
  net::HttpRequest request_;
  std::promise<int> answer_;
};

TEST(ApiRoutesTest, EveryRouteRefusesWhatItsAccessExcludes) {
  auto store = store::SqliteStore::Open(":memory:");
  ASSERT_TRUE(store.ok());
  auto scheduler = sched::Scheduler::Create({});
  ASSERT_TRUE(scheduler.ok());
  controlplane::ControlPlaneOptions options;
  options.access.enabled = true;
  options.access.rate_per_token = 0;
  ControlPlane plane(options, **store, std::move(*scheduler));
  SessionBroker sessions;
  ASSERT_TRUE(plane.Recover().ok());
  std::map<std::string, std::string> token;  // caller -> its token's text
  for (auto [name, user, role] : {std::tuple{"admin", "root", auth::Role::kClusterAdmin}, {"user", "alice", auth::Role::kUser},
                                  {"viewer", "carol", auth::Role::kViewer}, {"join", "ops", auth::Role::kNodeJoin},
                                  {"node", "n1", auth::Role::kNode}}) {
    token[name] = *plane.IssueToken(user, role, "test");
  }
  net::Router router;
  AddApiRoutes(router, plane, {.leader = [] { return net::HttpResponse{}; }, .connections = {}}, sessions);

  // Sends one request as `caller` ("" for no token); the answer's status.
  const auto send = [&](const ApiRoute& route, const std::string& caller) {
    net::HttpRequest request;
    request.method = route.method;
    std::string path = route.pattern;
    for (auto [from, to] : {std::pair{"{id}", "0"}, {"{name}", "n2"}, {"{path*}", "q"}}) {
      if (const std::size_t at = path.find(from); at != std::string::npos) path.replace(at, std::string_view(from).size(), to);
    }
    request.path = request.target = path;
    request.query["wait"] = "0";
    if (!caller.empty()) request.headers["authorization"] = "Bearer " + token.at(caller);
    auto exchange = std::make_shared<CapturedExchange>(std::move(request));
    router.Dispatch(exchange);
    return exchange->Status();
  };
  // Who each access level refuses, and with what.
  const std::map<auth::Access, std::vector<std::string>> refused = {
      {auth::Access::kPublic, {}},
      {auth::Access::kRead, {"join", "node"}},
      {auth::Access::kWrite, {"viewer", "join", "node"}},
      {auth::Access::kAdmin, {"user", "viewer", "join", "node"}},
      {auth::Access::kNode, {"admin", "user", "viewer", "join", "node"}},  // "node" is n1's credential; the path names n2
      {auth::Access::kJoin, {"admin", "user", "viewer", "node"}},
  };
  int covered = 0;
  const std::vector<ApiRoute> routes = ApiRoutes(plane, {.leader = [] { return net::HttpResponse{}; }, .connections = {}}, sessions);
  for (const ApiRoute& route : routes) {
    const std::string name = std::string(route.method) + " " + route.pattern;
    const int anonymous = send(route, "");
    if (route.access == auth::Access::kPublic) {
      EXPECT_NE(anonymous, 401) << name << " is public";
    } else {
      EXPECT_EQ(anonymous, 401) << name << " without a token";
    }
    for (const std::string& caller : refused.at(route.access)) EXPECT_EQ(send(route, caller), 403) << name << " as " << caller;
    ++covered;
  }
  std::printf("authorization: %d of %zu routes covered\n", covered, routes.size());
  // A node's credential does pass for its own node.
  net::HttpRequest own;
  own.method = "POST";
  own.path = own.target = "/v1/nodes/n1/status";
  own.headers["authorization"] = "Bearer " + token.at("node");
  auto exchange = std::make_shared<CapturedExchange>(std::move(own));
  router.Dispatch(exchange);
  const int status = exchange->Status();
  EXPECT_NE(status, 401);
  EXPECT_NE(status, 403);
  plane.Stop();
}

}  // namespace
}  // namespace tessera::server
