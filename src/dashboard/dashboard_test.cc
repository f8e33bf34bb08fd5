#include <gtest/gtest.h>

#include <string_view>
#include <utility>
#include <set>
#include <string>
#include <vector>

#include "dashboard/assets.h"
#include "dashboard/routes.h"

namespace tessera::dashboard {
namespace {

// "views/job.js" importing "../api.js" means "api.js".
std::string Resolve(std::string_view from, const std::string& relative) {
  std::vector<std::string> parts;
  const std::string dir(from.substr(0, from.rfind('/') == std::string_view::npos ? 0 : from.rfind('/')));
  for (const std::string& whole : {dir, relative}) {
    std::size_t start = 0;
    while (start < whole.size()) {
      const std::size_t slash = std::min(whole.find('/', start), whole.size());
      const std::string part = whole.substr(start, slash - start);
      if (part == "..") {
        if (!parts.empty()) parts.pop_back();
      } else if (!part.empty() && part != ".") {
        parts.push_back(part);
      }
      start = slash + 1;
    }
  }
  std::string path;
  for (const std::string& part : parts) path += (path.empty() ? "" : "/") + part;
  return path;
}

// Every module the page loads, and every module they import, is bundled:
// a missing one would break the page only in a browser.
TEST(Assets, EveryReferencedFileIsEmbedded) {
  const EmbeddedFile* index = FindAsset("");
  ASSERT_NE(index, nullptr);
  EXPECT_EQ(index->path, "index.html");
  // src="/ui/x" and href="/ui/x" in HTML; from "./x" and from "../x" in modules.
  static constexpr std::pair<std::string_view, bool> kMarkers[] = {
      {"src=\"/ui/", false}, {"href=\"/ui/", false}, {"from \"./", true}, {"from \"../", true}};
  std::set<std::string> referenced;
  for (const EmbeddedFile& file : EmbeddedFiles()) {
    const std::string_view text = file.content;
    for (const auto& [marker, relative] : kMarkers) {
      for (std::size_t at = text.find(marker); at != std::string_view::npos; at = text.find(marker, at + 1)) {
        const std::size_t start = at + (relative ? std::string_view("from \"").size() : marker.size());
        const std::string target(text.substr(start, text.find('"', start) - start));
        const std::string path = relative ? Resolve(file.path, target) : target;
        EXPECT_NE(FindAsset(path), nullptr) << file.path << " refers to " << path << ", which is not embedded";
        referenced.insert(path);
      }
    }
  }
  EXPECT_TRUE(referenced.contains("app.js"));
  EXPECT_TRUE(referenced.contains("style.css"));
  EXPECT_TRUE(referenced.contains("views/job.js"));
  EXPECT_TRUE(referenced.contains("api.js"));
}

TEST(Assets, NothingComesFromTheNetwork) {
  for (const EmbeddedFile& file : EmbeddedFiles()) {
    std::string text(file.content);
    // SVG's namespace is a name, not an address the browser loads.
    for (std::size_t at; (at = text.find("http://www.w3.org/2000/svg")) != std::string::npos;) text.erase(at, 26);
    EXPECT_EQ(text.find("http://"), std::string::npos) << file.path;
    EXPECT_EQ(text.find("https://"), std::string::npos) << file.path;
  }
}

TEST(Assets, ContentTypes) {
  EXPECT_EQ(ContentType("index.html"), "text/html; charset=utf-8");
  EXPECT_EQ(ContentType("views/jobs.js"), "text/javascript; charset=utf-8");
  EXPECT_EQ(ContentType("style.css"), "text/css; charset=utf-8");
  EXPECT_EQ(ContentType("x.bin"), "application/octet-stream");
  EXPECT_EQ(FindAsset("../etc/passwd"), nullptr);
}

class FakeExchange : public net::Exchange {
 public:
  explicit FakeExchange(std::string path) { request_.method = "GET", request_.path = std::move(path); }
  const net::HttpRequest& request() const override { return request_; }
  net::HttpRequest& request() override { return request_; }
  void Reply(net::HttpResponse response) override { response_ = std::move(response); }
  net::HttpRequest request_;
  net::HttpResponse response_;
};

net::HttpResponse Get(const std::string& path) {
  net::Router router;
  AddDashboardRoutes(router);
  auto exchange = std::make_shared<FakeExchange>(path);
  router.Dispatch(exchange);
  return exchange->response_;
}

std::string Header(const net::HttpResponse& response, const std::string& name) {
  for (const auto& [key, value] : response.headers) {
    if (key == name) return value;
  }
  return {};
}

TEST(Routes, TheRootAndUiLeadToTheApp) {
  EXPECT_EQ(Get("/").status, 302);
  EXPECT_EQ(Header(Get("/"), "Location"), "/ui/");
  EXPECT_EQ(Header(Get("/ui"), "Location"), "/ui/");
  const net::HttpResponse page = Get("/ui/");
  EXPECT_EQ(page.status, 200);
  EXPECT_EQ(page.content_type, "text/html; charset=utf-8");
  EXPECT_NE(page.body.find("<title>Tessera"), std::string::npos);
  EXPECT_NE(Header(page, "Content-Security-Policy").find("default-src 'self'"), std::string::npos);
  EXPECT_EQ(Get("/ui/app.js").content_type, "text/javascript; charset=utf-8");
  const net::HttpResponse missing = Get("/ui/nope.js");
  EXPECT_EQ(missing.status, 404);
  EXPECT_NE(missing.body.find("no dashboard file nope.js"), std::string::npos);
}

}  // namespace
}  // namespace tessera::dashboard
