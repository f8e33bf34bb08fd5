#include "net/client_stream.h"

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <boost/asio/ip/address.hpp>

namespace tessera::net {
namespace beast = boost::beast;

namespace {

std::variant<beast::tcp_stream, ClientStream::Tls> MakeStream(boost::asio::io_context& io, const TlsContext& tls) {
  if (!tls) return std::variant<beast::tcp_stream, ClientStream::Tls>(std::in_place_index<0>, io);
  return std::variant<beast::tcp_stream, ClientStream::Tls>(std::in_place_index<1>, io, *tls);
}

}  // namespace

ClientStream::ClientStream(boost::asio::io_context& io, TlsContext tls) : tls_(std::move(tls)), stream_(MakeStream(io, tls_)) {}

void ClientStream::Handshake(const std::string& host, std::function<void(beast::error_code)> done) {
  Tls& stream = std::get<Tls>(stream_);
  SSL* ssl = stream.native_handle();
  // The certificate must name what was dialled: an IP address in its
  // subjectAltName IPs, a host name in its DNS names (then also sent as SNI).
  boost::system::error_code not_ip;
  boost::asio::ip::make_address(host, not_ip);
  if (!not_ip) {
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host.c_str());
  } else {
    SSL_set1_host(ssl, host.c_str());
    // SSL_set_tlsext_host_name, without the macro's C cast.
    SSL_ctrl(ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name, const_cast<char*>(host.c_str()));
  }
  stream.async_handshake(boost::asio::ssl::stream_base::client, [done = std::move(done)](beast::error_code ec) { done(ec); });
}

}  // namespace tessera::net
