// A small certificate authority for clusters without a PKI of their own:
// `tessera up` and `tessera certs` create a CA (an ECDSA P-256 key and a
// self-signed certificate) and issue the server's and each node's
// certificate from it. Keys are written readable by their owner only.
//
// Certificates are for TLS on the API (net/tls.h): a server certificate names
// every host name and address clients dial (subjectAltName); a node's client
// certificate carries the node's name as its common name, which the server
// holds its agent to (docs/security.md).
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace tessera::auth {

struct CertificateAuthorityFiles {
  std::string cert;  // ca.crt: what clients and the server trust
  std::string key;   // ca.key: signs certificates; keep it off the nodes
};
// DIR/ca.crt and DIR/ca.key.
CertificateAuthorityFiles CaFilesIn(const std::string& dir);

// Creates the CA in `dir` unless one is there already (then keeps it).
Status EnsureCertificateAuthority(const std::string& dir, const std::string& name);

struct CertificateRequest {
  std::string common_name;
  // DNS names and IP addresses the holder serves at (subjectAltName); empty
  // for a certificate that only identifies a client.
  std::vector<std::string> hosts;
  int days = 825;
};

// Writes a new key and a certificate for it signed by the CA in `ca_dir`.
Status IssueCertificate(const std::string& ca_dir, const CertificateRequest& request, const std::string& cert_path,
                        const std::string& key_path);

// The certificates a server keeps in `dir` when it is its own CA (tessera up,
// or tessera server without --tls-cert): ca.crt and ca.key, made once, and
// server.crt and server.key, issued anew at every start for `hosts` (the
// listen address may have changed; clients trust the CA, not the leaf).
struct ServerCertificates {
  std::string ca_cert;
  std::string cert;
  std::string key;
};
Result<ServerCertificates> EnsureServerCertificates(const std::string& dir, const std::vector<std::string>& hosts);

}  // namespace tessera::auth
