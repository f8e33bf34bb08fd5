// libFuzzer: the HTTP layer as the server runs it on bytes from the
// network: Beast's request parser under the server's limits, then ours:
// the target split and decoded, the query parsed, the request routed
// through every /v1 pattern, and the endpoint lists clients parse.
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "net/http_client.h"
#include "net/http_types.h"
#include "net/router.h"

namespace {

namespace http = boost::beast::http;

// The routes' shapes (server/*_routes.cc), with handlers that answer at once.
const tessera::net::Router& Routes() {
  static const tessera::net::Router router = [] {
    tessera::net::Router r;
    const auto ok = [](const tessera::net::ExchangePtr& ex) { ex->Reply({}); };
    for (const char* pattern : {"/v1/jobs", "/v1/jobs/{id}", "/v1/jobs/{id}/logs", "/v1/nodes/{name}/status", "/v1/queues/{path*}",
                                "/v1/tokens/{id}", "/v1/events"}) {
      r.Add("GET", pattern, ok);
      r.Add("POST", pattern, ok);
    }
    return r;
  }();
  return router;
}

class Sink final : public tessera::net::Exchange {
 public:
  explicit Sink(tessera::net::HttpRequest request) : request_(std::move(request)) {}
  const tessera::net::HttpRequest& request() const override { return request_; }
  tessera::net::HttpRequest& request() override { return request_; }
  void Reply(tessera::net::HttpResponse) override {}

 private:
  tessera::net::HttpRequest request_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  (void)tessera::net::ParseEndpoints(bytes);
  http::request_parser<http::string_body> parser;
  parser.body_limit(1 << 20);
  parser.header_limit(64 * 1024);
  boost::beast::error_code ec;
  parser.put(boost::asio::buffer(bytes.data(), bytes.size()), ec);
  if (ec || !parser.is_header_done()) return 0;
  const auto& raw = parser.get();
  tessera::net::HttpRequest request;
  request.method = std::string(raw.method_string());
  const std::string_view target(raw.target().data(), raw.target().size());
  const std::size_t question = target.find('?');
  request.path = tessera::net::PercentDecode(target.substr(0, question), false);
  request.target = std::string(target);
  if (question != std::string_view::npos) request.query = tessera::net::ParseQuery(target.substr(question + 1));
  Routes().Dispatch(std::make_shared<Sink>(std::move(request)));
  return 0;
}
