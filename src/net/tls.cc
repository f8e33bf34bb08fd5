#include "net/tls.h"

#include <openssl/ssl.h>

#include <boost/asio/ssl.hpp>

namespace tessera::net {
namespace ssl = boost::asio::ssl;

namespace {

// Loads one file into the context, naming the file and the flag's purpose
// when OpenSSL refuses it (missing, not PEM, key not matching).
template <typename Load>
Status LoadFile(const std::string& path, const char* what, Load load) {
  boost::system::error_code ec;
  load(path, ec);
  if (ec) return Status(StatusCode::kInvalidArgument, "cannot load the " + std::string(what) + " " + path + ": " + ec.message());
  return Status::Ok();
}

Result<TlsContext> NewContext(ssl::context::method method) {
  auto context = std::make_shared<ssl::context>(method);
  context->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                       ssl::context::single_dh_use);
  SSL_CTX_set_min_proto_version(context->native_handle(), TLS1_2_VERSION);
  return context;
}

Status LoadIdentity(ssl::context& context, const TlsFiles& files) {
  TESSERA_RETURN_IF_ERROR(LoadFile(files.cert_file, "certificate",
                                   [&](const std::string& p, auto& ec) { context.use_certificate_chain_file(p, ec); }));
  // OpenSSL also refuses a key of another certificate ("key values mismatch").
  return LoadFile(files.key_file, "private key", [&](const std::string& p, auto& ec) { context.use_private_key_file(p, ssl::context::pem, ec); });
}

}  // namespace

Result<TlsContext> MakeServerTls(const TlsFiles& files, bool require_client_cert) {
  if (files.cert_file.empty() || files.key_file.empty()) return InvalidArgument("TLS needs both a certificate and its private key");
  if (require_client_cert && files.ca_file.empty()) return InvalidArgument("requiring client certificates needs a client CA");
  Result<TlsContext> context = NewContext(ssl::context::tls_server);
  TESSERA_RETURN_IF_ERROR(LoadIdentity(**context, files));
  if (!files.ca_file.empty()) {
    TESSERA_RETURN_IF_ERROR(LoadFile(files.ca_file, "client CA", [&](const std::string& p, auto& ec) { (*context)->load_verify_file(p, ec); }));
    // Name the accepted CA in the handshake, so that a client holding several
    // certificates picks the right one.
    SSL_CTX_set_client_CA_list((*context)->native_handle(), SSL_load_client_CA_file(files.ca_file.c_str()));
    (*context)->set_verify_mode(ssl::verify_peer | (require_client_cert ? ssl::verify_fail_if_no_peer_cert : 0));
  }
  return context;
}

Result<TlsContext> MakeClientTls(const TlsFiles& files) {
  Result<TlsContext> context = NewContext(ssl::context::tls_client);
  if (files.ca_file.empty()) {
    (*context)->set_default_verify_paths();
  } else {
    TESSERA_RETURN_IF_ERROR(LoadFile(files.ca_file, "CA certificate", [&](const std::string& p, auto& ec) { (*context)->load_verify_file(p, ec); }));
  }
  if (!files.cert_file.empty() || !files.key_file.empty()) TESSERA_RETURN_IF_ERROR(LoadIdentity(**context, files));
  (*context)->set_verify_mode(ssl::verify_peer);
  return context;
}

}  // namespace tessera::net
