#include "net/http_server.h"

#include <array>
#include <cctype>
#include <optional>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <openssl/ssl.h>
#include <openssl/x509.h>

namespace tessera::net {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// The common name of the certificate a client proved it holds; "" for none.
std::string VerifiedClientName(SSL* ssl) {
  X509* certificate = SSL_get0_peer_certificate(ssl);
  if (certificate == nullptr || SSL_get_verify_result(ssl) != X509_V_OK) return {};
  char name[256] = {};
  if (X509_NAME_get_text_by_NID(X509_get_subject_name(certificate), NID_commonName, name, sizeof name) < 0) return {};
  return name;
}

http::response<http::string_body> ToBeast(HttpResponse response, bool keep_alive, unsigned version) {
  http::response<http::string_body> raw{static_cast<http::status>(response.status), version};
  raw.set(http::field::server, "tessera");
  raw.set(http::field::content_type, response.content_type);
  for (const auto& [name, value] : response.headers) raw.set(name, value);
  raw.keep_alive(keep_alive);
  raw.body() = std::move(response.body);
  raw.prepare_payload();
  return raw;
}

template <typename Stream>
class Session;

template <typename Stream>
class SessionExchange final : public Exchange {
 public:
  SessionExchange(std::shared_ptr<Session<Stream>> session, HttpRequest request, bool keep_alive, unsigned version)
      : session_(std::move(session)), request_(std::move(request)), keep_alive_(keep_alive), version_(version) {}
  const HttpRequest& request() const override { return request_; }
  HttpRequest& request() override { return request_; }
  void Reply(HttpResponse response) override;

 private:
  std::shared_ptr<Session<Stream>> session_;
  HttpRequest request_;
  bool keep_alive_;
  unsigned version_;
};

// One connection, plain (beast::tcp_stream) or TLS (TlsStream): a TLS
// session first shakes hands, then both read and answer requests alike.
template <typename Stream>
class Session : public std::enable_shared_from_this<Session<Stream>> {
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;
  using std::enable_shared_from_this<Session<Stream>>::shared_from_this;

 public:
  template <typename... Tls>
  Session(tcp::socket socket, const Router& router, const HttpServerOptions& options, Tls&... tls)
      : stream_(std::move(socket), tls...), router_(router), options_(options) {
    // Once per connection: asking the kernel at every request was a syscall per request.
    beast::error_code ignored;
    const tcp::endpoint remote = tcp().socket().remote_endpoint(ignored);
    if (!ignored) remote_address_ = remote.address().to_string();
  }

  void Start() {
    if constexpr (kTls) {
      asio::dispatch(stream_.get_executor(), [self = shared_from_this()] {
        // A client that never completes the handshake holds nothing for long.
        self->tcp().expires_after(std::chrono::seconds(10));
        beast::async_detect_ssl(self->tcp(), self->buffer_, [self](beast::error_code ec, bool tls) {
          if (ec) return;
          if (!tls) return self->RefusePlainHttp();
          self->stream_.async_handshake(asio::ssl::stream_base::server, self->buffer_.data(),
                                        [self](beast::error_code ec2, std::size_t used) {
                                          if (ec2) return;  // refused: no certificate, or one the CA did not sign
                                          self->buffer_.consume(used);
                                          self->client_name_ = VerifiedClientName(self->stream_.native_handle());
                                          self->Read();
                                        });
        });
      });
    } else {
      asio::dispatch(stream_.get_executor(), beast::bind_front_handler(&Session::Read, shared_from_this()));
    }
  }

  // Any thread: builds the message, then writes it on the session's strand.
  void Reply(HttpResponse response, bool keep_alive, unsigned version) {
    http::response<http::string_body> raw = ToBeast(std::move(response), keep_alive && !close_after_write_, version);
    asio::post(stream_.get_executor(), [self = shared_from_this(), raw = std::move(raw)]() mutable { self->Write(std::move(raw)); });
  }

 private:
  beast::tcp_stream& tcp() { return beast::get_lowest_layer(stream_); }

  // A plain HTTP request to a TLS port: say so in plain HTTP, then close,
  // rather than leave the client with a reset connection.
  void RefusePlainHttp() {
    response_ = ToBeast(ErrorResponse(400, "this server speaks TLS: use https://"), false, 11);
    http::async_write(tcp(), response_, [self = shared_from_this()](beast::error_code, std::size_t) {
      beast::error_code ignored;
      self->tcp().socket().shutdown(tcp::socket::shutdown_send, ignored);
    });
  }

  // Ends the connection after the last answer: TLS says so first (close_notify).
  void EndSending() {
    if constexpr (kTls) {
      tcp().expires_after(std::chrono::seconds(5));
      stream_.async_shutdown([self = shared_from_this()](beast::error_code) {
        beast::error_code ignored;
        self->tcp().socket().shutdown(tcp::socket::shutdown_send, ignored);
      });
    } else {
      beast::error_code ignored;
      tcp().socket().shutdown(tcp::socket::shutdown_send, ignored);
    }
  }

  // Runs on the session's strand.
  void Write(http::response<http::string_body> response) {
    response_ = std::move(response);
    tcp().expires_after(std::chrono::seconds(30));
    http::async_write(stream_, response_, beast::bind_front_handler(&Session::OnWrite, shared_from_this()));
  }

  void Read() {
    parser_.emplace();
    parser_->body_limit(options_.body_limit);
    tcp().expires_after(options_.idle_timeout);
    http::async_read(stream_, buffer_, *parser_, beast::bind_front_handler(&Session::OnRead, shared_from_this()));
  }

  void OnRead(beast::error_code ec, std::size_t) {
    if (ec == http::error::body_limit) {
      // The rest of the body is still on the wire: answer, then close.
      HttpResponse response = ErrorResponse(413, "request body exceeds the limit of " + std::to_string(options_.body_limit) + " bytes");
      close_after_write_ = true;
      Reply(std::move(response), false, 11);
      return;
    }
    if (ec) {
      if (ec != http::error::end_of_stream && ec != beast::error::timeout) {
        // A malformed request line or header: say so before closing.
        if (ec.category() == http::make_error_code(http::error::bad_target).category()) {
          close_after_write_ = true;
          Reply(ErrorResponse(400, "malformed HTTP request: " + ec.message()), false, 11);
          return;
        }
      }
      EndSending();
      return;
    }
    http::request<http::string_body> raw = parser_->release();
    HttpRequest request;
    request.method = std::string(raw.method_string());
    const std::string_view target(raw.target().data(), raw.target().size());
    const std::size_t question = target.find('?');
    request.path = PercentDecode(target.substr(0, question), false);
    request.target = std::string(target);
    if (question != std::string_view::npos) request.query = ParseQuery(target.substr(question + 1));
    for (const auto& field : raw) {
      std::string name(field.name_string());
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      request.headers[name] = std::string(field.value());
    }
    request.body = std::move(raw.body());
    request.remote_address = remote_address_;
    request.client_certificate = client_name_;
    auto exchange = std::make_shared<SessionExchange<Stream>>(shared_from_this(), std::move(request), raw.keep_alive(), raw.version());
    router_.Dispatch(exchange);
  }

  void OnWrite(beast::error_code ec, std::size_t) {
    if (ec) return;
    if (close_after_write_ && !kTls) {
      // Lingering close (RFC 9112 9.6): the client may still be sending the
      // body we refused; closing now would reset the connection and lose our
      // answer. Stop sending, then read and discard until it stops. (TLS
      // ends with close_notify, which the client reads before any reset.)
      EndSending();
      tcp().expires_after(std::chrono::seconds(5));
      Drain();
      return;
    }
    if (close_after_write_ || !response_.keep_alive()) {
      EndSending();
      return;
    }
    Read();
  }

  void Drain() {
    tcp().async_read_some(asio::buffer(drain_), [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (!ec) self->Drain();
    });
  }

  Stream stream_;
  std::string client_name_;  // the verified client certificate's common name
  std::string remote_address_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> response_;
  const Router& router_;
  const HttpServerOptions& options_;
  bool close_after_write_ = false;
  std::array<char, 16384> drain_{};
};

template <typename Stream>
void SessionExchange<Stream>::Reply(HttpResponse response) {
  session_->Reply(std::move(response), keep_alive_, version_);
}

}  // namespace

class HttpServer::Impl {
 public:
  explicit Impl(int threads) : io(threads), acceptor(asio::make_strand(io)) {}

  void Accept(const Router& router, const HttpServerOptions& options) {
    acceptor.async_accept(asio::make_strand(io), [this, &router, &options](beast::error_code ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted) return;
      if (!ec && options.tls) {
        std::make_shared<Session<TlsStream>>(std::move(socket), router, options, *options.tls)->Start();
      } else if (!ec) {
        std::make_shared<Session<beast::tcp_stream>>(std::move(socket), router, options)->Start();
      }
      Accept(router, options);
    });
  }

  asio::io_context io;
  tcp::acceptor acceptor;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
};

HttpServer::HttpServer(HttpServerOptions options, const Router& router)
    : options_(std::move(options)), router_(router), impl_(std::make_unique<Impl>(options_.threads)) {
  impl_->work.emplace(impl_->io.get_executor());
}

HttpServer::~HttpServer() { Stop(); }

boost::asio::io_context& HttpServer::io_context() { return impl_->io; }

Status HttpServer::Start() {
  beast::error_code ec;
  const asio::ip::address address = asio::ip::make_address(options_.address, ec);
  if (ec) return InvalidArgument("'" + options_.address + "' is not an IP address");
  const tcp::endpoint endpoint(address, options_.port);
  const std::string where = options_.address + ":" + std::to_string(options_.port);
  impl_->acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl_->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl_->acceptor.bind(endpoint, ec);
  if (!ec) impl_->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return Status(StatusCode::kFailedPrecondition, "cannot listen on " + where + ": " + ec.message());
  port_ = impl_->acceptor.local_endpoint().port();
  impl_->Accept(router_, options_);
  for (int i = 0; i < options_.threads; ++i) threads_.emplace_back([this] { impl_->io.run(); });
  return Status::Ok();
}

void HttpServer::Stop() {
  if (threads_.empty()) return;
  asio::post(impl_->acceptor.get_executor(), [this] {
    beast::error_code ignored;
    impl_->acceptor.close(ignored);
  });
  impl_->work.reset();
  impl_->io.stop();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

}  // namespace tessera::net
