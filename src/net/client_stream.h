// One client connection, plain TCP or TLS, for the blocking and the
// asynchronous HTTP clients alike: connecting includes the TLS handshake and
// the check that the server's certificate names the host that was dialled;
// Visit hands the right stream type to Beast's read and write operations.
// Internal to src/net.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <variant>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>

#include "net/tls.h"

namespace tessera::net {

class ClientStream {
 public:
  using Tls = boost::beast::ssl_stream<boost::beast::tcp_stream>;

  // A null `tls` is plain TCP.
  ClientStream(boost::asio::io_context& io, TlsContext tls);

  boost::beast::tcp_stream& tcp() {
    return std::visit([](auto& s) -> boost::beast::tcp_stream& { return boost::beast::get_lowest_layer(s); }, stream_);
  }

  template <typename Endpoints>
  void AsyncConnect(const Endpoints& endpoints, const std::string& host, std::function<void(boost::beast::error_code)> done) {
    tcp().async_connect(endpoints, [this, host, done = std::move(done)](boost::beast::error_code ec, const auto&) mutable {
      if (ec || std::holds_alternative<boost::beast::tcp_stream>(stream_)) return done(ec);
      Handshake(host, std::move(done));
    });
  }

  template <typename F>
  decltype(auto) Visit(F&& f) {
    return std::visit(std::forward<F>(f), stream_);
  }

 private:
  void Handshake(const std::string& host, std::function<void(boost::beast::error_code)> done);

  TlsContext tls_;  // outlives the stream that uses it
  std::variant<boost::beast::tcp_stream, Tls> stream_;
};

}  // namespace tessera::net
