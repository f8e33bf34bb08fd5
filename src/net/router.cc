#include "net/router.h"

#include <nlohmann/json.hpp>

namespace tessera::net {
namespace {

std::vector<std::string> Split(std::string_view path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t slash = path.find('/', start);
    const std::size_t end = slash == std::string_view::npos ? path.size() : slash;
    if (end > start) parts.emplace_back(path.substr(start, end - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return parts;
}

bool Match(const std::vector<std::string>& pattern, const std::vector<std::string>& path,
           std::map<std::string, std::string>* params) {
  const bool rest = !pattern.empty() && pattern.back().ends_with("*}");
  if (rest ? path.size() < pattern.size() : pattern.size() != path.size()) return false;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const std::string& p = pattern[i];
    if (rest && i + 1 == pattern.size()) {
      std::string joined;
      for (std::size_t j = i; j < path.size(); ++j) joined += (j == i ? "" : "/") + path[j];
      if (params != nullptr) (*params)[p.substr(1, p.size() - 3)] = joined;
      return true;
    }
    if (p.size() > 2 && p.front() == '{' && p.back() == '}') {
      if (params != nullptr) (*params)[p.substr(1, p.size() - 2)] = path[i];
    } else if (p != path[i]) {
      return false;
    }
  }
  return true;
}

}  // namespace

void Router::Add(std::string method, std::string pattern, Handler handler) {
  std::vector<std::string> segments = Split(pattern);
  routes_.push_back({std::move(method), std::move(pattern), std::move(segments), std::move(handler)});
}

void Router::Dispatch(const ExchangePtr& exchange) const {
  HttpRequest& request = exchange->request();
  if (gate_) {
    if (std::optional<HttpResponse> answer = gate_(request)) {
      exchange->Reply(std::move(*answer));
      return;
    }
  }
  const std::vector<std::string> path = Split(request.path);
  std::string allowed;
  for (const Route& route : routes_) {
    if (!Match(route.segments, path, nullptr)) continue;
    if (route.method == request.method) {
      Match(route.segments, path, &request.params);
      route.handler(exchange);
      return;
    }
    allowed += (allowed.empty() ? "" : ", ") + route.method;
  }
  if (allowed.empty()) {
    exchange->Reply(ErrorResponse(404, "no such API path: " + request.path));
  } else {
    HttpResponse response = ErrorResponse(405, request.method + " is not allowed on " + request.path + " (allowed: " + allowed + ")");
    response.headers.emplace_back("Allow", allowed);
    exchange->Reply(std::move(response));
  }
}

HttpResponse ErrorResponse(int status, std::string_view message) {
  HttpResponse response;
  response.status = status;
  // A message may quote bytes from the request that are not UTF-8: replace them rather than throw.
  response.body = nlohmann::json{{"error", message}, {"code", status}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  return response;
}

}  // namespace tessera::net
