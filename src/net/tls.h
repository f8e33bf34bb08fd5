// TLS for the API (OpenSSL through Boost.Asio): the contexts that the server
// and the clients build once from PEM files and share across connections.
//
// The server presents its certificate; given a client CA it also asks each
// client for a certificate and refuses the handshake when one is presented
// that the CA did not sign (mutual TLS, how agents prove which node they
// are); `require_client_cert` refuses clients that present none. Clients
// verify the server's chain and its name or address against the URL they
// dialled, and present their own certificate when they hold one.
// TLS 1.2 is the oldest version either side speaks.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"

namespace boost::asio::ssl {
class context;
}

namespace tessera::net {

struct TlsFiles {
  // Certificates trusted to sign the other side's. A client without one
  // trusts the system's store; a server without one asks for no client
  // certificate.
  std::string ca_file;
  std::string cert_file;  // this side's certificate chain (PEM); optional for a client
  std::string key_file;   // its private key (PEM)
};

using TlsContext = std::shared_ptr<boost::asio::ssl::context>;

Result<TlsContext> MakeServerTls(const TlsFiles& files, bool require_client_cert);
Result<TlsContext> MakeClientTls(const TlsFiles& files);

}  // namespace tessera::net
