#include "net/http_server.h"

#include "net/tunnel.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <filesystem>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <optional>
#include <utility>

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
  if (response.status == 101) {
    raw.set(http::field::connection, "Upgrade");
  } else {
    raw.keep_alive(keep_alive);
  }
  raw.body() = std::move(response.body);
  raw.prepare_payload();
  return raw;
}

// What every connection of one server shares. Declared before the I/O
// context that owns the sessions, so that it outlives them all.
struct Shared {
  Shared(const HttpServerOptions& o, const Router& r) : options(o), router(r), table(o.connections), shedder(o.load) {}
  const HttpServerOptions& options;
  const Router& router;
  ConnectionTable table;
  LoadShedder shedder;
  std::array<std::atomic<std::uint64_t>, kTimeoutPhases> timeouts{};
};

// 503 with Retry-After: the caller may come back.
HttpResponse Busy(const std::string& why, int retry_after_s) {
  HttpResponse response = ErrorResponse(503, why);
  response.headers.emplace_back("Retry-After", std::to_string(retry_after_s));
  return response;
}

// The answer to a connection refused before it sent anything (plain HTTP
// only: a TLS client would read it as a broken handshake).
const std::string& RefusedAnswer() {
  static const std::string answer = [] {
    const std::string body = R"({"error": "the server holds as many connections as it allows; retry later", "code": 503})" "\n";
    return "HTTP/1.1 503 Service Unavailable\r\nServer: tessera\r\nRetry-After: 1\r\nContent-Type: application/json\r\n"
           "Connection: close\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  }();
  return answer;
}

// Closes a connection past the limits; plain HTTP gets a 503 first,
// written without waiting (a client that does not read it loses it).
void TurnAway(tcp::socket& socket, bool answer) {
  beast::error_code ignored;
  if (answer) {
    socket.non_blocking(true, ignored);
    socket.write_some(asio::buffer(RefusedAnswer()), ignored);
  }
  socket.shutdown(tcp::socket::shutdown_both, ignored);
  socket.close(ignored);
}

// The largest body a shed request may have for its connection to be kept.
constexpr std::uint64_t kSmallBody = 64 << 10;

template <typename Stream>
class Session;
template <typename Stream>
class SessionTunnel;

template <typename Stream>
class SessionExchange final : public Exchange {
 public:
  SessionExchange(std::shared_ptr<Session<Stream>> session, HttpRequest request, bool keep_alive, unsigned version, LoadShedder::Slot slot)
      : session_(std::move(session)), request_(std::move(request)), keep_alive_(keep_alive), version_(version), slot_(std::move(slot)) {}
  const HttpRequest& request() const override { return request_; }
  HttpRequest& request() override { return request_; }
  void Reply(HttpResponse response) override;
  void Waiting() override { slot_.Release(); }

 private:
  std::shared_ptr<Session<Stream>> session_;
  HttpRequest request_;
  bool keep_alive_;
  unsigned version_;
  LoadShedder::Slot slot_;
};

// One connection, plain (beast::tcp_stream) or TLS (TlsStream): a TLS
// session first shakes hands, then both read and answer requests alike.
// Reading a request is two steps: the headers, after which the sender is
// identified (once per connection) and the request admitted or shed, then
// the body, against a deadline its length sets.
template <typename Stream>
class Session : public std::enable_shared_from_this<Session<Stream>> {
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;
  using std::enable_shared_from_this<Session<Stream>>::shared_from_this;
  friend class SessionTunnel<Stream>;

 public:
  template <typename... Tls>
  Session(tcp::socket socket, Shared& shared, std::string address, Tls&... tls)
      : stream_(std::move(socket), tls...), shared_(shared), remote_address_(std::move(address)) {}
  ~Session() {
    if (id_ != 0) shared_.table.Close(id_);
  }

  // Takes its place in the connection table and starts, or is turned away.
  void Admit() {
    const ConnectionTable::Decision decision = shared_.table.Open(remote_address_, [weak = this->weak_from_this()] {
      if (auto self = weak.lock()) asio::post(self->stream_.get_executor(), [self] { self->tcp().close(); });
    });
    if (decision.admission == ConnectionTable::Admission::kRefused) return TurnAway(tcp().socket(), !kTls);
    id_ = decision.id;
    if (decision.admission == ConnectionTable::Admission::kProbation) probation_ = decision.refusal;
    Start();
  }

 private:
  void Start() {
    if constexpr (kTls) {
      asio::dispatch(stream_.get_executor(), [self = shared_from_this()] {
        self->Expect(TimeoutPhase::kHandshake, self->options().timeouts.handshake);
        beast::async_detect_ssl(self->tcp(), self->buffer_, [self](beast::error_code ec, bool tls) {
          if (ec) return self->Count(ec);
          if (!tls) return self->RefusePlainHttp();
          self->stream_.async_handshake(asio::ssl::stream_base::server, self->buffer_.data(),
                                        [self](beast::error_code ec2, std::size_t used) {
                                          if (ec2) return self->Count(ec2);  // refused: no certificate, or one the CA did not sign
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

 public:
  // Any thread: builds the message, then writes it on the session's strand.
  void Reply(HttpResponse response, bool keep_alive, unsigned version) {
    auto upgrade = response.status == 101 ? std::move(response.upgrade) : nullptr;
    http::response<http::string_body> raw = ToBeast(std::move(response), keep_alive && !close_after_write_, version);
    asio::post(stream_.get_executor(), [self = shared_from_this(), raw = std::move(raw), upgrade = std::move(upgrade)]() mutable {
      self->upgrade_ = std::move(upgrade);
      self->Write(std::move(raw));
    });
  }

 private:
  beast::tcp_stream& tcp() { return beast::get_lowest_layer(stream_); }
  const HttpServerOptions& options() const { return shared_.options; }

  void Expect(TimeoutPhase phase, std::chrono::steady_clock::duration within) {
    phase_ = phase;
    tcp().expires_after(within);
  }
  // A connection that ran out of time is counted by the phase it was in.
  void Count(const beast::error_code& ec) {
    if (ec == beast::error::timeout) ++shared_.timeouts[static_cast<std::size_t>(phase_)];
  }

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
    Expect(TimeoutPhase::kWrite, options().timeouts.write);
    http::async_write(stream_, response_, beast::bind_front_handler(&Session::OnWrite, shared_from_this()));
  }

  // The next request. A new connection's first request, and one already
  // begun in the buffer, must finish its headers in time; between requests
  // a keep-alive connection may idle longer, until its next first byte.
  void Read() {
    parser_.emplace();
    parser_->body_limit(options().body_limit);
    if (requests_ > 0 && buffer_.size() == 0) {
      Expect(TimeoutPhase::kIdle, options().timeouts.idle);
      http::async_read_some(stream_, buffer_, *parser_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
        if (ec) return self->Failed(ec);
        self->Expect(TimeoutPhase::kHeaders, self->options().timeouts.headers);
        self->ReadHeader();
      });
      return;
    }
    Expect(TimeoutPhase::kHeaders, options().timeouts.headers);
    ReadHeader();
  }

  void ReadHeader() {
    if (parser_->is_header_done()) return OnHeader({});
    http::async_read_header(stream_, buffer_, *parser_, [self = shared_from_this()](beast::error_code ec, std::size_t) { self->OnHeader(ec); });
  }

  void OnHeader(beast::error_code ec) {
    if (ec) return Failed(ec);
    ++requests_;
    const auto& head = parser_->get();
    request_ = HttpRequest();
    request_.method = std::string(head.method_string());
    const std::string_view target(head.target().data(), head.target().size());
    const std::size_t question = target.find('?');
    request_.path = PercentDecode(target.substr(0, question), false);
    request_.target = std::string(target);
    if (question != std::string_view::npos) request_.query = ParseQuery(target.substr(question + 1));
    for (const auto& field : head) {
      std::string name(field.name_string());
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      request_.headers[name] = std::string(field.value());
    }
    request_.remote_address = remote_address_;
    request_.client_certificate = client_name_;
    if (peer_ == PeerClass::kUnidentified) {
      peer_ = options().identify ? options().identify(request_) : PeerClass::kClient;
      shared_.table.Identify(id_, peer_);
      if (probation_ && !Privileged(peer_)) {
        const std::string why = *probation_ == Refusal::kAddressFull
                                    ? "this server holds as many connections from " + remote_address_ + " as it allows (" +
                                          std::to_string(shared_.table.limits().max_per_address) + ")"
                                    : "this server holds as many connections from unauthenticated clients as it allows; "
                                      "the rest are kept for agents and administrators";
        return Refuse(Busy(why + "; retry later", options().load.retry_after_s));
      }
    }
    // Without a length a body may be as long as the limit allows.
    const std::uint64_t length = parser_->content_length().value_or(parser_->chunked() ? options().body_limit : 0);
    if (!Privileged(peer_)) {
      if (const std::optional<Shed> shed = shared_.shedder.Admit(length, &slot_)) {
        HttpResponse busy = Busy(*shed == Shed::kInFlight ? "the server is answering as many requests as it takes at once; retry later"
                                                          : "the server holds as many request bodies as it takes at once; retry later",
                                 options().load.retry_after_s);
        // A small body is read and dropped, so that the connection (and its
        // TLS session) serves the retry; a large one is not worth reading.
        if (length > kSmallBody) return Refuse(std::move(busy));
        instead_ = std::move(busy);
      }
    }
    Expect(TimeoutPhase::kBody, options().timeouts.headers + std::chrono::seconds(length / std::max<std::uint64_t>(options().timeouts.min_body_rate, 1)));
    http::async_read(stream_, buffer_, *parser_, [self = shared_from_this()](beast::error_code ec2, std::size_t) { self->OnRead(ec2); });
  }

  // Answers, then closes: what is left of the request stays unread.
  void Refuse(HttpResponse response) {
    close_after_write_ = true;
    Reply(std::move(response), false, 11);
  }

  void Failed(beast::error_code ec) {
    Count(ec);
    if (ec == http::error::body_limit) {
      // The rest of the body is still on the wire: answer, then close.
      return Refuse(ErrorResponse(413, "request body exceeds the limit of " + std::to_string(options().body_limit) + " bytes"));
    }
    if (ec != http::error::end_of_stream && ec != beast::error::timeout &&
        ec.category() == http::make_error_code(http::error::bad_target).category()) {
      // A malformed request line or header: say so before closing.
      return Refuse(ErrorResponse(400, "malformed HTTP request: " + ec.message()));
    }
    EndSending();
  }

  void OnRead(beast::error_code ec) {
    if (ec) return Failed(ec);
    http::request<http::string_body> raw = parser_->release();
    if (instead_) return Reply(*std::exchange(instead_, std::nullopt), raw.keep_alive(), raw.version());
    request_.body = std::move(raw.body());
    auto exchange = std::make_shared<SessionExchange<Stream>>(shared_from_this(), std::move(request_), raw.keep_alive(), raw.version(),
                                                              std::move(slot_));
    shared_.router.Dispatch(exchange);
  }

  void OnWrite(beast::error_code ec, std::size_t) {
    if (ec) return Count(ec);
    if (upgrade_) return HandOver();
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

  // Switched protocols: the connection is the tunnel's, with no deadline of
  // HTTP's (a session may sit quiet for hours); TCP keepalive finds a peer
  // that vanished.
  void HandOver() {
    tcp().expires_never();
    beast::error_code ignored;
    tcp().socket().set_option(asio::socket_base::keep_alive(true), ignored);
    std::exchange(upgrade_, nullptr)(std::make_shared<SessionTunnel<Stream>>(shared_from_this()));
  }

  void Drain() {
    tcp().async_read_some(asio::buffer(drain_), [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (!ec) self->Drain();
    });
  }

  Stream stream_;
  Shared& shared_;
  std::string client_name_;  // the verified client certificate's common name
  const std::string remote_address_;
  std::uint64_t id_ = 0;                // in the connection table; 0: turned away
  std::optional<Refusal> probation_;  // set: admitted on probation, past this limit
  PeerClass peer_ = PeerClass::kUnidentified;
  TimeoutPhase phase_ = TimeoutPhase::kHeaders;
  std::uint64_t requests_ = 0;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  HttpRequest request_;     // the one being read
  std::optional<HttpResponse> instead_;  // its answer, without a handler: it was shed
  LoadShedder::Slot slot_;  // its share of the load limits, until answered
  http::response<http::string_body> response_;
  bool close_after_write_ = false;
  std::function<void(std::shared_ptr<Tunnel>)> upgrade_;  // set: the answer being written switches protocols
  std::array<char, 16384> drain_{};
};

// An upgraded connection: its session's stream, on the session's strand.
template <typename Stream>
class SessionTunnel final : public Tunnel {
 public:
  explicit SessionTunnel(std::shared_ptr<Session<Stream>> session) : session_(std::move(session)) {}

  void ReadSome(char* data, std::size_t size, Done done) override {
    asio::post(session_->stream_.get_executor(), [s = session_, data, size, done = std::move(done)]() mutable {
      // What the client sent after its request's headers is already buffered.
      if (s->buffer_.size() > 0) {
        const std::size_t n = asio::buffer_copy(asio::buffer(data, size), s->buffer_.data());
        s->buffer_.consume(n);
        return done(true, n);
      }
      s->stream_.async_read_some(asio::buffer(data, size), [done = std::move(done)](beast::error_code ec, std::size_t n) { done(!ec, n); });
    });
  }
  void Write(const char* data, std::size_t size, Done done) override {
    asio::post(session_->stream_.get_executor(), [s = session_, data, size, done = std::move(done)]() mutable {
      asio::async_write(s->stream_, asio::buffer(data, size), [done = std::move(done)](beast::error_code ec, std::size_t n) { done(!ec, n); });
    });
  }
  void Close() override {
    asio::post(session_->stream_.get_executor(), [s = session_] {
      beast::error_code ignored;
      s->tcp().socket().shutdown(tcp::socket::shutdown_both, ignored);
      s->tcp().close();
    });
  }

 private:
  std::shared_ptr<Session<Stream>> session_;
};

template <typename Stream>
void SessionExchange<Stream>::Reply(HttpResponse response) {
  slot_.Release();
  session_->Reply(std::move(response), keep_alive_, version_);
}

}  // namespace

class HttpServer::Impl {
 public:
  Impl(const HttpServerOptions& options, const Router& router)
      : shared(options, router), io(options.threads), acceptor(asio::make_strand(io)), pause(acceptor.get_executor()) {
    spare = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  }
  ~Impl() {
    if (spare >= 0) ::close(spare);
  }

  void Accept() {
    acceptor.async_accept(asio::make_strand(io), [this](beast::error_code ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted) return;
      if (ec == asio::error::no_descriptors || ec.value() == ENFILE) return OutOfDescriptors();
      if (!ec) Admit(std::move(socket));
      Accept();
    });
  }

 private:
  void Admit(tcp::socket socket) {
    beast::error_code ignored;
    const tcp::endpoint remote = socket.remote_endpoint(ignored);
    std::string address = ignored ? std::string() : remote.address().to_string();
    if (shared.options.tls) {
      std::make_shared<Session<TlsStream>>(std::move(socket), shared, std::move(address), *shared.options.tls)->Admit();
    } else {
      std::make_shared<Session<beast::tcp_stream>>(std::move(socket), shared, std::move(address))->Admit();
    }
  }

  // No descriptor is left to accept with (Linux says so even when no
  // connection waits): the spare one makes room to take a waiting
  // connection and turn it away, so that its client hears why instead of
  // waiting in the backlog; then a short pause, so that a lasting shortage
  // does not spin.
  void OutOfDescriptors() {
    if (spare < 0) shared.table.CountRefusal(Refusal::kDescriptors);
    if (spare >= 0) {
      ::close(spare);
      const int fd = ::accept4(acceptor.native_handle(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd >= 0) {
        shared.table.CountRefusal(Refusal::kDescriptors);
        if (!shared.options.tls) (void)!::send(fd, RefusedAnswer().data(), RefusedAnswer().size(), MSG_NOSIGNAL);
        ::close(fd);
      }
      spare = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    }
    pause.expires_after(std::chrono::milliseconds(50));
    pause.async_wait([this](beast::error_code ec) {
      if (!ec) Accept();
    });
  }

 public:
  Shared shared;  // before io: the sessions it owns use it as they go
  asio::io_context io;
  tcp::acceptor acceptor;
  asio::steady_timer pause;
  int spare = -1;  // a descriptor kept for when none is left
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
};

std::string_view ToString(TimeoutPhase p) {
  switch (p) {
    case TimeoutPhase::kHandshake: return "handshake";
    case TimeoutPhase::kHeaders: return "headers";
    case TimeoutPhase::kBody: return "body";
    case TimeoutPhase::kIdle: return "idle";
    case TimeoutPhase::kWrite: return "write";
  }
  return "headers";
}

HttpServer::HttpServer(HttpServerOptions options, const Router& router)
    : options_(std::move(options)), router_(router), impl_(std::make_unique<Impl>(options_, router_)) {
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
  impl_->Accept();
  for (int i = 0; i < options_.threads; ++i) threads_.emplace_back([this] { impl_->io.run(); });
  return Status::Ok();
}

HttpServerStats HttpServer::Stats() const {
  HttpServerStats stats;
  stats.limits = impl_->shared.table.limits();
  stats.connections = impl_->shared.table.counts();
  stats.load = impl_->shared.shedder.counts();
  for (std::size_t i = 0; i < kTimeoutPhases; ++i) stats.timeouts[i] = impl_->shared.timeouts[i].load();
  return stats;
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
