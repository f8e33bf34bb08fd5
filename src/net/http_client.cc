#include "net/http_client.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "net/client_stream.h"

namespace tessera::net {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

Result<Endpoint> ParseEndpoint(std::string_view url) {
  std::string_view rest = url;
  bool tls = false;
  if (rest.starts_with("http://")) {
    rest.remove_prefix(7);
  } else if (rest.starts_with("https://")) {
    rest.remove_prefix(8);
    tls = true;
  }
  while (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  const std::size_t colon = rest.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return InvalidArgument("'" + std::string(url) + "' is not HOST:PORT");
  unsigned port = 0;
  const std::string_view digits = rest.substr(colon + 1);
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
  if (ec != std::errc() || end != digits.data() + digits.size() || port == 0 || port > 65535) {
    return InvalidArgument("'" + std::string(url) + "': bad port");
  }
  return Endpoint{std::string(rest.substr(0, colon)), static_cast<std::uint16_t>(port), tls};
}

Result<std::vector<Endpoint>> ParseEndpoints(std::string_view list) {
  std::vector<Endpoint> out;
  for (;;) {
    const std::size_t comma = list.find(',');
    Result<Endpoint> endpoint = ParseEndpoint(list.substr(0, comma));
    if (!endpoint.ok()) return endpoint.status();
    out.push_back(std::move(*endpoint));
    if (comma == std::string_view::npos) return out;
    list.remove_prefix(comma + 1);
  }
}

namespace {

bool IsTlsError(const beast::error_code& ec) {
  return ec.category() == asio::error::get_ssl_category() || ec.category() == asio::ssl::error::get_stream_category();
}

}  // namespace

class HttpClient::Impl {
 public:
  explicit Impl(TlsContext tls_context) : tls(std::move(tls_context)) {}

  // The context for an https endpoint: the caller's, else the system's CAs.
  Result<TlsContext> TlsFor(const Endpoint& endpoint) {
    if (!endpoint.tls) return TlsContext();
    if (!tls) {
      Result<TlsContext> system = MakeClientTls({});
      if (!system.ok()) return system.status();
      tls = *system;
    }
    return tls;
  }

  asio::io_context io;
  TlsContext tls;
  std::optional<ClientStream> stream;
  beast::flat_buffer buffer;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string peer = "the Tessera server";
  std::uint64_t response_limit = 8 << 20;  // Beast's default

  // One synchronous exchange driven through the io_context so that the
  // stream's timeout applies to connect, write and read alike.
  // `refused` tells that no connection could be made: nothing was sent.
  beast::error_code Exchange(const Endpoint& endpoint, const TlsContext& tls_context, http::request<http::string_body>& request,
                             http::response<http::string_body>& response, std::chrono::milliseconds timeout, bool* refused) {
    beast::error_code result;
    *refused = false;
    if (!stream) {
      *refused = true;
      tcp::resolver resolver(io);
      beast::error_code ec;
      const auto addresses = resolver.resolve(endpoint.host, std::to_string(endpoint.port), ec);
      if (ec) return ec;  // a name that does not resolve: refused too
      stream.emplace(io, tls_context);
      stream->tcp().expires_after(timeout);
      stream->AsyncConnect(addresses, endpoint.host, [&](beast::error_code e) { result = e; });
      io.restart();
      io.run();
      if (result) {
        // A failed handshake reached the server: it refused us, not the network.
        *refused = !IsTlsError(result);
        stream.reset();
        return result;
      }
      *refused = false;
    }
    // The answer is read while the request is written: a server may answer
    // before the body is all sent (413, 503) and close, and that answer,
    // not the broken pipe, is what the caller must see.
    stream->tcp().expires_after(timeout);
    http::response_parser<http::string_body> parser;
    parser.body_limit(response_limit);
    beast::error_code write_error;
    bool written = false, cut_short = false;
    stream->Visit([&](auto& s) {
      http::async_write(s, request, [&](beast::error_code e, std::size_t) {
        write_error = e;
        written = true;
      });
      http::async_read(s, buffer, parser, [&](beast::error_code e, std::size_t) {
        result = e;
        if (!e && !written) {
          // Answered early: the rest of the request is not wanted.
          cut_short = true;
          beast::error_code ignored;
          stream->tcp().socket().cancel(ignored);
        }
      });
    });
    io.restart();
    io.run();
    if (result && write_error) result = write_error;  // no answer: the first failure says why
    if (!result) response = parser.release();
    if (result || cut_short || !response.keep_alive()) {
      stream.reset();
      buffer.clear();
    }
    return result;
  }
};

HttpClient::HttpClient(Endpoint endpoint, TlsContext tls) : HttpClient(std::vector<Endpoint>{std::move(endpoint)}, std::move(tls)) {}
HttpClient::HttpClient(std::vector<Endpoint> endpoints, TlsContext tls)
    : endpoints_(std::move(endpoints)), impl_(std::make_unique<Impl>(std::move(tls))) {}
HttpClient::~HttpClient() = default;

void HttpClient::MoveTo(std::size_t index) {
  current_ = index;
  impl_->stream.reset();
  impl_->buffer.clear();
}

void HttpClient::SetHeader(std::string name, std::string value) {
  for (auto& [n, v] : impl_->headers) {
    if (n == name) {
      v = std::move(value);
      return;
    }
  }
  impl_->headers.emplace_back(std::move(name), std::move(value));
}
void HttpClient::SetPeer(std::string name, std::uint64_t response_limit) {
  impl_->peer = std::move(name);
  impl_->response_limit = response_limit;
}

Status HttpClient::Stream(std::string_view method, std::string_view target, std::string_view body,
                          const std::function<bool(std::string_view)>& on_data, std::chrono::milliseconds idle) {
  const Endpoint& to = endpoint();
  const auto unreachable = [&](const beast::error_code& ec) {
    return Status(StatusCode::kFailedPrecondition, "cannot reach " + impl_->peer + " at " + to.ToString() + ": " + ec.message());
  };
  Result<TlsContext> tls = impl_->TlsFor(to);
  if (!tls.ok()) return tls.status();
  asio::io_context io;
  ClientStream stream(io, *tls);
  beast::error_code ec;
  const auto run = [&io] {
    io.restart();
    io.run();
  };
  tcp::resolver resolver(io);
  const auto addresses = resolver.resolve(to.host, std::to_string(to.port), ec);
  if (ec) return unreachable(ec);
  stream.tcp().expires_after(idle);
  stream.AsyncConnect(addresses, to.host, [&](beast::error_code e) { ec = e; });
  run();
  if (ec) return unreachable(ec);
  http::request<http::string_body> request{http::string_to_verb({method.data(), method.size()}), std::string(target), 11};
  request.set(http::field::host, to.ToString());
  request.set(http::field::content_type, "application/json");
  request.body() = std::string(body);
  request.prepare_payload();
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(boost::none);  // the body is consumed piece by piece below
  bool more = true;
  auto on_chunk = [&](std::uint64_t, beast::string_view piece, beast::error_code&) -> std::size_t {
    if (more) more = on_data(std::string_view(piece.data(), piece.size()));
    return piece.size();
  };
  parser.on_chunk_body(on_chunk);
  stream.tcp().expires_after(idle);
  stream.Visit([&](auto& s) { http::async_write(s, request, [&](beast::error_code e, std::size_t) { ec = e; }); });
  run();
  if (ec) return unreachable(ec);
  stream.Visit([&](auto& s) { http::async_read_header(s, buffer, parser, [&](beast::error_code e, std::size_t) { ec = e; }); });
  run();
  if (ec == beast::error::timeout) return Status::Ok();
  if (ec) return unreachable(ec);
  if (parser.get().result_int() != 200) {
    return Status(StatusCode::kFailedPrecondition, impl_->peer + " at " + to.ToString() + " answered " +
                                                       std::to_string(parser.get().result_int()) + " to " + std::string(target));
  }
  while (more && !parser.is_done()) {
    stream.tcp().expires_after(idle);
    stream.Visit([&](auto& s) { http::async_read_some(s, buffer, parser, [&](beast::error_code e, std::size_t) { ec = e; }); });
    run();
    if (ec == beast::error::timeout) return Status::Ok();
    if (ec) return unreachable(ec);
  }
  return Status::Ok();
}

namespace {

// A replica that does not lead marks its refusals so (server/server.h).
bool FollowerRefused(const http::response<http::string_body>& response) {
  return response.result_int() == 503 && response.find("X-Tessera-Replica") != response.end();
}

// How long a 429 or 503 asks the caller to wait (Retry-After, in seconds);
// none for other answers. Such an answer means the request was not carried
// out, so it is safe to send again.
std::optional<std::chrono::milliseconds> RetryAfter(const http::response<http::string_body>& response) {
  const unsigned status = response.result_int();
  if (status != 429 && status != 503) return std::nullopt;
  const auto header = response.find(http::field::retry_after);
  if (header == response.end()) return std::nullopt;
  const std::string_view text(header->value().data(), header->value().size());
  unsigned seconds = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return std::chrono::seconds(seconds);
}

// A longer Retry-After (a user's quota of waiting jobs) is the caller's to
// judge: the answer is returned at once.
constexpr std::chrono::seconds kLongestRetryAfter{5};

// Retry-After, with up to half again at random, so that the clients an
// overload turned away do not all come back in the same instant.
std::chrono::milliseconds Jittered(std::chrono::milliseconds wait) {
  thread_local std::mt19937 random(std::random_device{}());
  const auto least = std::max(wait, std::chrono::milliseconds(200));
  return least + std::chrono::milliseconds(std::uniform_int_distribution<std::int64_t>(0, least.count() / 2)(random));
}

}  // namespace

Result<HttpResponse> HttpClient::Send(std::string_view method, std::string_view target, std::string_view body,
                                      std::string_view content_type, std::chrono::milliseconds timeout) {
  http::request<http::string_body> request{http::string_to_verb({method.data(), method.size()}), std::string(target), 11};
  request.set(http::field::user_agent, "tessera");
  for (const auto& [name, value] : impl_->headers) request.set(name, value);
  if (!body.empty()) request.set(http::field::content_type, std::string(content_type));
  request.body() = std::string(body);
  request.prepare_payload();
  request.keep_alive(true);

  // While replicas elect a leader, a call waits for one, within its timeout
  // and at most this long.
  const auto give_up = std::chrono::steady_clock::now() + std::min<std::chrono::milliseconds>(timeout, std::chrono::seconds(15));
  const auto pause = [&give_up] {
    if (std::chrono::steady_clock::now() + std::chrono::milliseconds(100) >= give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    return true;
  };
  // Hops from replica to replica (a refused connection, a redirect); after
  // trying them all, a pause, so that a dead leader's lease can expire.
  std::size_t hops = 0;
  const auto hop = [&] { return ++hops % (endpoints_.size() + 1) != 0 || pause(); };
  for (;;) {
    request.set(http::field::host, endpoint().ToString());
    // A reused connection may have been closed by the server while idle: retry
    // once on a fresh one. Requests are safe to resend only when nothing was
    // answered, which is the only case that reaches the retry.
    const bool reused = impl_->stream.has_value();
    Result<TlsContext> tls = impl_->TlsFor(endpoint());
    if (!tls.ok()) return tls.status();
    http::response<http::string_body> response;
    bool refused = false;
    beast::error_code ec = impl_->Exchange(endpoint(), *tls, request, response, timeout, &refused);
    const bool stale = ec == http::error::end_of_stream || ec == asio::error::connection_reset || ec == asio::error::broken_pipe ||
                       ec == asio::error::eof || ec == asio::ssl::error::stream_truncated;
    if (ec && reused && stale) ec = impl_->Exchange(endpoint(), *tls, request, response, timeout, &refused);
    if (ec) {
      // Nothing reached this replica: another may lead. A lone server that
      // is down is an error at once.
      if (refused && endpoints_.size() > 1 && hop()) {
        MoveTo((current_ + 1) % endpoints_.size());
        continue;
      }
      const std::string why = ec == beast::error::timeout ? "timed out after " + std::to_string(timeout.count()) + " ms"
                              : IsTlsError(ec)            ? "TLS handshake failed: " + ec.message()
                                                          : ec.message();
      return Status(StatusCode::kFailedPrecondition, "cannot reach " + impl_->peer + " at " + endpoint().ToString() + ": " + why);
    }
    const int status = static_cast<int>(response.result_int());
    if (status == 307 || status == 308) {
      const std::string location(response[http::field::location]);
      Result<Endpoint> leader = ParseEndpoint(location.substr(0, location.find('/', location.find("://") + 3)));
      if (leader.ok() && hop()) {
        auto known = std::find_if(endpoints_.begin(), endpoints_.end(), [&](const Endpoint& e) { return e.ToString() == leader->ToString(); });
        if (known == endpoints_.end()) known = endpoints_.insert(endpoints_.end(), *leader);
        MoveTo(static_cast<std::size_t>(known - endpoints_.begin()));
        continue;
      }
    }
    if (FollowerRefused(response) && pause()) {
      MoveTo((current_ + 1) % endpoints_.size());
      continue;
    }
    if (const std::optional<std::chrono::milliseconds> wait = RetryAfter(response); wait && *wait <= kLongestRetryAfter) {
      // Turned away for now (an overload, a rate): wait as asked, within this call's time.
      const std::chrono::milliseconds jittered = Jittered(*wait);
      if (std::chrono::steady_clock::now() + jittered < give_up) {
        std::this_thread::sleep_for(jittered);
        continue;
      }
    }
    HttpResponse out;
    out.status = status;
    out.content_type = std::string(response[http::field::content_type]);
    for (const auto& field : response) {
      std::string name(field.name_string());
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      out.headers.emplace_back(std::move(name), std::string(field.value()));
    }
    out.body = std::move(response.body());
    return out;
  }
}

}  // namespace tessera::net
