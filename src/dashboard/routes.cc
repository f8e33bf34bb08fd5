#include "dashboard/routes.h"

#include <string>

#include "dashboard/assets.h"

namespace tessera::dashboard {
namespace {

net::HttpResponse Redirect(std::string location) {
  net::HttpResponse response;
  response.status = 302;
  response.content_type = "text/plain; charset=utf-8";
  response.body = "see " + location + "\n";
  response.headers.emplace_back("Location", std::move(location));
  return response;
}

net::HttpResponse Serve(std::string_view path) {
  const EmbeddedFile* file = FindAsset(path);
  if (file == nullptr) return net::ErrorResponse(404, "no dashboard file " + std::string(path));
  net::HttpResponse response;
  response.content_type = std::string(ContentType(file->path));
  response.body = std::string(file->content);
  // Everything the page loads comes from this server: the policy makes the
  // browser refuse anything else, so a stray CDN link fails in the tests.
  response.headers.emplace_back("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; base-uri 'none'; frame-ancestors 'none'");
  response.headers.emplace_back("X-Content-Type-Options", "nosniff");
  response.headers.emplace_back("Cache-Control", "no-cache");  // revalidate: a new server may bring new files
  return response;
}

}  // namespace

void AddDashboardRoutes(net::Router& router) {
  router.Add("GET", "/", [](const net::ExchangePtr& ex) { ex->Reply(Redirect("/ui/")); });
  // The router sees "/ui" and "/ui/" alike; relative links need the slash.
  router.Add("GET", "/ui", [](const net::ExchangePtr& ex) {
    ex->Reply(ex->request().path.ends_with('/') ? Serve("") : Redirect("/ui/"));
  });
  router.Add("GET", "/ui/{path*}", [](const net::ExchangePtr& ex) { ex->Reply(Serve(ex->request().params.at("path"))); });
}

}  // namespace tessera::dashboard
