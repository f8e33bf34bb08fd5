// A blocking HTTP/1.1 client for the CLI and the agent: one keep-alive
// connection, reopened when the server closed it, every call bounded by a
// timeout. Not thread-safe; give each thread its own client.
//
// It finds the leader of replicated servers by itself: given several
// endpoints (every replica), it moves to the next one when a connection is
// refused, follows a follower's redirect (307) to the leader, and waits and
// retries while a replica answers that no leader is elected yet. A 429 or
// 503 with a short Retry-After (an overloaded server, a token over its
// rate) is sent again after that long and a random part more, while the
// call's time allows. Nothing is carried out twice: only a request that never reached a
// server, or that a server refused without acting on it, is sent again. An
// answer the server gives before the request's body is all sent (413) is
// the answer the caller gets.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "net/http_types.h"
#include "net/tls.h"

namespace tessera::net {

struct Endpoint {
  std::string host;
  std::uint16_t port = 0;
  bool tls = false;  // https
  std::string ToString() const { return host + ":" + std::to_string(port); }
  std::string Url() const { return (tls ? "https://" : "http://") + ToString(); }
};
// "https://10.0.0.5:7070", "http://127.0.0.1:7070", "127.0.0.1:7070" (plain)
// or "localhost:7070".
Result<Endpoint> ParseEndpoint(std::string_view url);
// Comma-separated endpoints: "http://a:7070,http://b:7070".
Result<std::vector<Endpoint>> ParseEndpoints(std::string_view list);

class HttpClient {
 public:
  // `tls` serves the https endpoints: whom to trust and, for mutual TLS, the
  // certificate to present; without it they are verified against the
  // system's trusted CAs.
  explicit HttpClient(Endpoint endpoint, TlsContext tls = nullptr);
  explicit HttpClient(std::vector<Endpoint> endpoints, TlsContext tls = nullptr);  // replicas of one server; at least one
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // The response, whatever its status; an error only when no response came
  // (refused, reset, timed out), with a message naming the server.
  Result<HttpResponse> Send(std::string_view method, std::string_view target, std::string_view body = {},
                            std::string_view content_type = "application/json",
                            std::chrono::milliseconds timeout = std::chrono::seconds(30));
  // A response that does not end (etcd's watch): sends one request on a
  // connection of its own and hands each piece of the body to `on_data` as
  // it arrives, until on_data returns false, the server ends the response,
  // or nothing arrives for `idle` (not an error). Errors: no connection, or
  // a status other than 200.
  Status Stream(std::string_view method, std::string_view target, std::string_view body,
                const std::function<bool(std::string_view)>& on_data, std::chrono::milliseconds idle);
  const Endpoint& endpoint() const { return endpoints_[current_]; }  // the one in use
  // Sent with every request from now on; replaces a header of that name.
  void SetHeader(std::string name, std::string value);
  // Who answers, for messages ("cannot reach etcd at ..."; default "the
  // Tessera server"), and the largest response body accepted (default 8 MiB).
  void SetPeer(std::string name, std::uint64_t response_limit);

 private:
  class Impl;
  void MoveTo(std::size_t index);  // another endpoint: the connection is dropped
  std::vector<Endpoint> endpoints_;
  std::size_t current_ = 0;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::net
