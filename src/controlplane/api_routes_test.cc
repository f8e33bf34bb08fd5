// The OpenAPI description must list every route the server serves, with the
// same methods, so that api/openapi.yaml never drifts from api_routes.cc.
#include "controlplane/api_routes.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>

#include "store/sqlite_store.h"

namespace tessera::controlplane {
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
  net::Router router;
  AddApiRoutes(router, plane, [] { return net::HttpResponse{}; });

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

}  // namespace
}  // namespace tessera::controlplane
