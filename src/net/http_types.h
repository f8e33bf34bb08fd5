// Plain HTTP request and response values shared by the server, the client and
// the route handlers, so that no code above src/net sees a Boost.Beast type.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tessera::net {

class Tunnel;  // net/tunnel.h

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string path;    // decoded path, no query string
  std::string target;  // path and query as sent, not decoded (a redirect repeats it)
  std::map<std::string, std::string> query;   // decoded ?key=value pairs
  std::map<std::string, std::string> params;  // path captures: "/v1/jobs/{id}" -> params["id"]
  std::map<std::string, std::string> headers; // lower-case names
  std::string body;
  std::string remote_address;
  // The common name of the client certificate the TLS handshake verified
  // (mutual TLS); empty without one.
  std::string client_certificate;

  std::string Header(std::string_view name) const {
    auto it = headers.find(std::string(name));
    return it == headers.end() ? std::string() : it->second;
  }
  std::string Query(std::string_view key, std::string fallback = {}) const {
    auto it = query.find(std::string(key));
    return it == query.end() ? std::move(fallback) : it->second;
  }
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  // With status 101: once the answer is written, the connection is handed
  // to this as a raw byte stream (net/tunnel.h) and leaves HTTP for good.
  std::function<void(std::shared_ptr<Tunnel>)> upgrade;
};

// "%2F" -> "/", "+" -> " " (in query strings). Malformed escapes are kept as written.
std::string PercentDecode(std::string_view text, bool plus_is_space);
std::string PercentEncode(std::string_view text);
// Splits "a=1&b=x%20y" into decoded pairs.
std::map<std::string, std::string> ParseQuery(std::string_view query);

}  // namespace tessera::net
