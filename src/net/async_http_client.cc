#include "net/async_http_client.h"

#include <array>
#include <deque>
#include <optional>
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

class AsyncHttpConnection::Impl : public std::enable_shared_from_this<Impl> {
 public:
  Impl(asio::io_context& io, Endpoint endpoint, TlsContext tls) : io_(io), endpoint_(std::move(endpoint)), tls_(std::move(tls)) {}

  void Send(std::string method, std::string target, std::string body, Callback done) {
    queue_.push_back({std::move(method), std::move(target), std::move(body), std::move(done)});
    if (!busy_) Next();
  }
  void SetHeader(std::string name, std::string value) { headers_.emplace_back(std::move(name), std::move(value)); }

 private:
  struct Pending {
    std::string method, target, body;
    Callback done;
  };

  void Next() {
    if (queue_.empty()) {
      busy_ = false;
      return;
    }
    busy_ = true;
    if (!stream_) return Connect();
    Write();
  }

  void Connect() {
    if (endpoint_.tls && !tls_) return Finish(0, "no TLS context for " + endpoint_.Url());
    stream_.emplace(io_, endpoint_.tls ? tls_ : nullptr);
    beast::error_code ec;
    const std::array<tcp::endpoint, 1> to{tcp::endpoint(asio::ip::make_address(endpoint_.host, ec), endpoint_.port)};
    if (ec) return Finish(0, "bad address " + endpoint_.host);
    stream_->tcp().expires_after(std::chrono::seconds(10));
    stream_->AsyncConnect(to, endpoint_.host, [self = shared_from_this()](beast::error_code e) {
      if (e) return self->Finish(0, "connect: " + e.message());
      self->Write();
    });
  }

  void Write() {
    const Pending& p = queue_.front();
    request_ = {};
    request_.method(http::string_to_verb(p.method));
    request_.target(p.target);
    request_.version(11);
    request_.set(http::field::host, endpoint_.ToString());
    request_.set(http::field::content_type, "application/json");
    for (const auto& [name, value] : headers_) request_.set(name, value);
    request_.keep_alive(true);
    request_.body() = p.body;
    request_.prepare_payload();
    stream_->tcp().expires_after(std::chrono::seconds(90));
    stream_->Visit([self = shared_from_this()](auto& stream) {
      http::async_write(stream, self->request_, [self, &stream](beast::error_code e, std::size_t) {
        if (e) return self->Finish(0, "write: " + e.message());
        self->response_ = {};
        http::async_read(stream, self->buffer_, self->response_, [self](beast::error_code e2, std::size_t) {
          if (e2) return self->Finish(0, "read: " + e2.message());
          if (!self->response_.keep_alive()) self->reopen_ = true;
          self->Finish(static_cast<int>(self->response_.result_int()), std::move(self->response_.body()));
        });
      });
    });
  }

  void Finish(int status, std::string body) {
    if (status == 0 || reopen_) {
      stream_.reset();
      buffer_.clear();
      reopen_ = false;
    }
    Pending p = std::move(queue_.front());
    queue_.pop_front();
    p.done(status, std::move(body));
    Next();
  }

  asio::io_context& io_;
  Endpoint endpoint_;
  TlsContext tls_;
  std::vector<std::pair<std::string, std::string>> headers_;
  std::optional<ClientStream> stream_;
  beast::flat_buffer buffer_;
  http::request<http::string_body> request_;
  http::response<http::string_body> response_;
  std::deque<Pending> queue_;
  bool busy_ = false;
  bool reopen_ = false;
};

AsyncHttpConnection::AsyncHttpConnection(asio::io_context& io, Endpoint endpoint, TlsContext tls)
    : impl_(std::make_shared<Impl>(io, std::move(endpoint), std::move(tls))) {}
AsyncHttpConnection::~AsyncHttpConnection() = default;

void AsyncHttpConnection::SetHeader(std::string name, std::string value) { impl_->SetHeader(std::move(name), std::move(value)); }

void AsyncHttpConnection::Send(std::string method, std::string target, std::string body, Callback done) {
  impl_->Send(std::move(method), std::move(target), std::move(body), std::move(done));
}

}  // namespace tessera::net
