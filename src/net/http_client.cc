#include "net/http_client.h"

#include <charconv>
#include <optional>
#include <vector>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace tessera::net {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

Result<Endpoint> ParseEndpoint(std::string_view url) {
  std::string_view rest = url;
  if (rest.starts_with("http://")) rest.remove_prefix(7);
  if (rest.starts_with("https://")) return InvalidArgument("'" + std::string(url) + "': https is not supported yet; use http://");
  while (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  const std::size_t colon = rest.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return InvalidArgument("'" + std::string(url) + "' is not HOST:PORT");
  unsigned port = 0;
  const std::string_view digits = rest.substr(colon + 1);
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
  if (ec != std::errc() || end != digits.data() + digits.size() || port == 0 || port > 65535) {
    return InvalidArgument("'" + std::string(url) + "': bad port");
  }
  return Endpoint{std::string(rest.substr(0, colon)), static_cast<std::uint16_t>(port)};
}

class HttpClient::Impl {
 public:
  asio::io_context io;
  std::optional<beast::tcp_stream> stream;
  beast::flat_buffer buffer;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string peer = "the Tessera server";
  std::uint64_t response_limit = 8 << 20;  // Beast's default

  // One synchronous exchange driven through the io_context so that the
  // stream's timeout applies to connect, write and read alike.
  beast::error_code Exchange(const Endpoint& endpoint, http::request<http::string_body>& request,
                             http::response<http::string_body>& response, std::chrono::milliseconds timeout) {
    beast::error_code result;
    if (!stream) {
      tcp::resolver resolver(io);
      beast::error_code ec;
      const auto addresses = resolver.resolve(endpoint.host, std::to_string(endpoint.port), ec);
      if (ec) return ec;
      stream.emplace(io);
      stream->expires_after(timeout);
      stream->async_connect(addresses, [&](beast::error_code e, const tcp::endpoint&) { result = e; });
      io.restart();
      io.run();
      if (result) {
        stream.reset();
        return result;
      }
    }
    stream->expires_after(timeout);
    std::optional<http::response_parser<http::string_body>> parser;
    http::async_write(*stream, request, [&](beast::error_code e, std::size_t) {
      result = e;
      if (e) return;
      parser.emplace();
      parser->body_limit(response_limit);
      http::async_read(*stream, buffer, *parser, [&](beast::error_code e2, std::size_t) { result = e2; });
    });
    io.restart();
    io.run();
    if (!result) response = parser->release();
    if (result || !response.keep_alive()) {
      stream.reset();
      buffer.clear();
    }
    return result;
  }
};

HttpClient::HttpClient(Endpoint endpoint) : endpoint_(std::move(endpoint)), impl_(std::make_unique<Impl>()) {}
HttpClient::~HttpClient() = default;

void HttpClient::SetHeader(std::string name, std::string value) { impl_->headers.emplace_back(std::move(name), std::move(value)); }
void HttpClient::SetPeer(std::string name, std::uint64_t response_limit) {
  impl_->peer = std::move(name);
  impl_->response_limit = response_limit;
}

Result<HttpResponse> HttpClient::Send(std::string_view method, std::string_view target, std::string_view body,
                                      std::string_view content_type, std::chrono::milliseconds timeout) {
  http::request<http::string_body> request{http::string_to_verb({method.data(), method.size()}), std::string(target), 11};
  request.set(http::field::host, endpoint_.ToString());
  request.set(http::field::user_agent, "tessera");
  for (const auto& [name, value] : impl_->headers) request.set(name, value);
  if (!body.empty()) request.set(http::field::content_type, std::string(content_type));
  request.body() = std::string(body);
  request.prepare_payload();
  request.keep_alive(true);

  // A reused connection may have been closed by the server while idle: retry
  // once on a fresh one. Requests are safe to resend only when nothing was
  // answered, which is the only case that reaches the retry.
  const bool reused = impl_->stream.has_value();
  for (int attempt = 0; attempt < (reused ? 2 : 1); ++attempt) {
    http::response<http::string_body> response;
    const beast::error_code ec = impl_->Exchange(endpoint_, request, response, timeout);
    if (!ec) {
      HttpResponse out;
      out.status = static_cast<int>(response.result_int());
      out.content_type = std::string(response[http::field::content_type]);
      out.body = std::move(response.body());
      return out;
    }
    const bool stale = ec == http::error::end_of_stream || ec == asio::error::connection_reset ||
                       ec == asio::error::broken_pipe || ec == asio::error::eof;
    if (!(reused && attempt == 0 && stale)) {
      const std::string why = ec == beast::error::timeout ? "timed out after " + std::to_string(timeout.count()) + " ms" : ec.message();
      return Status(StatusCode::kFailedPrecondition, "cannot reach " + impl_->peer + " at " + endpoint_.ToString() + ": " + why);
    }
  }
  return Internal("no response");  // not reached: the last attempt always returns above
}

}  // namespace tessera::net
