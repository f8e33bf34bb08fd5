#include "net/client_tunnel.h"

#include <future>
#include <optional>
#include <thread>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "net/client_stream.h"

namespace tessera::net {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

class ClientTunnel::Impl {
 public:
  explicit Impl(const TlsContext& tls) : stream(io, tls) {}
  ~Impl() {
    Close();
    work.reset();
    if (runner.joinable()) runner.join();
  }

  // Runs the I/O context on this thread until the pending operations end.
  void RunHere() {
    io.restart();
    io.run();
  }
  // From now on a thread of the tunnel's own drives every operation.
  void Detach() {
    work.emplace(io.get_executor());
    io.restart();
    runner = std::thread([this] { io.run(); });
  }

  std::size_t ReadSome(char* data, std::size_t size) {
    std::promise<std::size_t> got;
    asio::post(io, [&] {
      if (buffer.size() > 0) {  // what came with the server's answer
        const std::size_t n = asio::buffer_copy(asio::buffer(data, size), buffer.data());
        buffer.consume(n);
        return got.set_value(n);
      }
      stream.Visit([&](auto& s) {
        s.async_read_some(asio::buffer(data, size), [&](beast::error_code ec, std::size_t n) { got.set_value(ec ? 0 : n); });
      });
    });
    return got.get_future().get();
  }

  bool Write(std::string_view bytes) {
    std::promise<bool> done;
    asio::post(io, [&] {
      stream.Visit([&](auto& s) {
        asio::async_write(s, asio::buffer(bytes.data(), bytes.size()), [&](beast::error_code ec, std::size_t) { done.set_value(!ec); });
      });
    });
    return done.get_future().get();
  }

  void Close() {
    asio::post(io, [this] {
      beast::error_code ignored;
      stream.tcp().socket().shutdown(tcp::socket::shutdown_both, ignored);
      stream.tcp().close();
    });
  }

  asio::io_context io;
  ClientStream stream;
  beast::flat_buffer buffer;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::thread runner;
};

Result<std::unique_ptr<ClientTunnel>> ClientTunnel::Open(const Endpoint& endpoint, TlsContext tls, std::string_view method, std::string_view target,
                                                         std::string_view body, const std::vector<std::pair<std::string, std::string>>& headers,
                                                         std::chrono::milliseconds timeout, HttpResponse* refusal) {
  if (endpoint.tls && !tls) {
    Result<TlsContext> system = MakeClientTls({});
    if (!system.ok()) return system.status();
    tls = *system;
  }
  auto impl = std::make_unique<Impl>(endpoint.tls ? tls : TlsContext());
  const auto unreachable = [&](const beast::error_code& ec) {
    return Status(StatusCode::kFailedPrecondition, "cannot reach the Tessera server at " + endpoint.ToString() + ": " +
                                                       (ec == beast::error::timeout ? "timed out" : ec.message()));
  };
  beast::error_code ec;
  tcp::resolver resolver(impl->io);
  const auto addresses = resolver.resolve(endpoint.host, std::to_string(endpoint.port), ec);
  if (ec) return unreachable(ec);
  impl->stream.tcp().expires_after(timeout);
  impl->stream.AsyncConnect(addresses, endpoint.host, [&](beast::error_code e) { ec = e; });
  impl->RunHere();
  if (ec) return unreachable(ec);

  http::request<http::string_body> request{http::string_to_verb({method.data(), method.size()}), std::string(target), 11};
  request.set(http::field::host, endpoint.ToString());
  request.set(http::field::user_agent, "tessera");
  for (const auto& [name, value] : headers) request.set(name, value);
  request.set(http::field::connection, "Upgrade");
  request.set(http::field::upgrade, kSessionProtocol);
  if (!body.empty()) request.set(http::field::content_type, "application/json");
  request.body() = std::string(body);
  request.prepare_payload();
  impl->stream.Visit([&](auto& s) { http::async_write(s, request, [&](beast::error_code e, std::size_t) { ec = e; }); });
  impl->RunHere();
  if (ec) return unreachable(ec);

  // The answer: 101 and nothing more, or an error with its body.
  http::response_parser<http::string_body> parser;
  parser.body_limit(1 << 20);
  impl->stream.Visit([&](auto& s) { http::async_read_header(s, impl->buffer, parser, [&](beast::error_code e, std::size_t) { ec = e; }); });
  impl->RunHere();
  if (ec) return unreachable(ec);
  const int status = static_cast<int>(parser.get().result_int());
  if (status != 101) {
    impl->stream.Visit([&](auto& s) { http::async_read(s, impl->buffer, parser, [&](beast::error_code e, std::size_t) { ec = e; }); });
    impl->RunHere();
    refusal->status = status;
    refusal->content_type = std::string(parser.get()[http::field::content_type]);
    refusal->body = ec ? std::string() : parser.get().body();
    return Status(StatusCode::kFailedPrecondition, "the server answered " + std::to_string(status) + " instead of opening the session");
  }
  impl->stream.tcp().expires_never();
  impl->Detach();
  return std::unique_ptr<ClientTunnel>(new ClientTunnel(std::move(impl)));
}

ClientTunnel::ClientTunnel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ClientTunnel::~ClientTunnel() = default;
std::size_t ClientTunnel::ReadSome(char* data, std::size_t size) { return impl_->ReadSome(data, size); }
bool ClientTunnel::Write(std::string_view bytes) { return impl_->Write(bytes); }
void ClientTunnel::Close() { impl_->Close(); }

}  // namespace tessera::net
