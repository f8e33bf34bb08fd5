// Maps (method, path pattern) to a handler. Patterns are literal segments,
// "{name}" captures one segment ("/v1/jobs/{id}/logs") and a last "{name*}"
// captures the rest of the path ("/v1/queues/{path*}" for "research/nlp"). A path that matches some pattern
// under another method answers 405 with the allowed methods; none, 404.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "net/http_types.h"

namespace tessera::net {

// One request in flight. A handler must call Reply exactly once, now or later
// and from any thread (long polls reply when something changes).
class Exchange {
 public:
  virtual ~Exchange() = default;
  virtual const HttpRequest& request() const = 0;
  virtual HttpRequest& request() = 0;
  virtual void Reply(HttpResponse response) = 0;
  // The handler will answer when something changes (a long poll), not
  // because it is working: the request stops counting against the server's
  // load limits (net/load_shedder.h) while it waits.
  virtual void Waiting() {}
};
using ExchangePtr = std::shared_ptr<Exchange>;
using Handler = std::function<void(const ExchangePtr&)>;

class Router {
 public:
  void Add(std::string method, std::string pattern, Handler handler);
  // Asked before any route: an answer it gives is the reply, and no route
  // runs (a follower replica redirects to its leader this way).
  using Gate = std::function<std::optional<HttpResponse>(HttpRequest&)>;
  void SetGate(Gate gate) { gate_ = std::move(gate); }
  // Finds the handler and fills request.params; answers 404/405 itself when none.
  void Dispatch(const ExchangePtr& exchange) const;

  struct Route {
    std::string method;
    std::string pattern;
    std::vector<std::string> segments;
    Handler handler;
  };
  const std::vector<Route>& routes() const { return routes_; }

 private:
  std::vector<Route> routes_;
  Gate gate_;
};

// {"error": message, "code": status}: the one error body every route uses.
HttpResponse ErrorResponse(int status, std::string_view message);

}  // namespace tessera::net
