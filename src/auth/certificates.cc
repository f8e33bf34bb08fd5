#include "auth/certificates.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>

#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <boost/asio/ip/address.hpp>

namespace tessera::auth {
namespace {

template <typename T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { Free(p); }
};
using Key = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using Certificate = std::unique_ptr<X509, Deleter<X509, X509_free>>;

Status OpenSslFailure(const std::string& what) { return Status(StatusCode::kInternal, "cannot " + what + " (OpenSSL)"); }

// Opens `path` for writing with `mode` from the start, so that a key is
// never readable by others, not even for a moment.
Result<FILE*> OpenForWriting(const std::string& path, mode_t mode) {
  std::error_code ec;
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return Status(StatusCode::kFailedPrecondition, "cannot write " + path);
  ::fchmod(fd, mode);
  FILE* file = ::fdopen(fd, "w");
  if (file == nullptr) ::close(fd);
  return file != nullptr ? Result<FILE*>(file) : Status(StatusCode::kFailedPrecondition, "cannot write " + path);
}

Status WriteKey(const EVP_PKEY* key, const std::string& path) {
  Result<FILE*> file = OpenForWriting(path, 0600);
  if (!file.ok()) return file.status();
  const bool ok = PEM_write_PrivateKey(*file, key, nullptr, nullptr, 0, nullptr, nullptr) == 1;
  std::fclose(*file);
  return ok ? Status::Ok() : OpenSslFailure("write the key " + path);
}

Status WriteCertificate(X509* certificate, const std::string& path) {
  Result<FILE*> file = OpenForWriting(path, 0644);
  if (!file.ok()) return file.status();
  const bool ok = PEM_write_X509(*file, certificate) == 1;
  std::fclose(*file);
  return ok ? Status::Ok() : OpenSslFailure("write the certificate " + path);
}

// Reads the CA's key or certificate with `read` (PEM_read_PrivateKey, PEM_read_X509).
template <typename Owned, typename Read>
Result<Owned> ReadPem(const std::string& path, const std::string& what, Read read) {
  FILE* file = std::fopen(path.c_str(), "r");
  if (file == nullptr) return Status(StatusCode::kFailedPrecondition, "cannot read the CA " + what + " " + path);
  Owned object(read(file, nullptr, nullptr, nullptr));
  std::fclose(file);
  if (!object) return InvalidArgument(path + " holds no PEM " + what);
  return object;
}

Result<Key> NewKey() {
  Key key(EVP_EC_gen("P-256"));
  if (!key) return OpenSslFailure("generate an ECDSA P-256 key");
  return key;
}

bool AddExtension(X509* certificate, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX context;
  X509V3_set_ctx(&context, issuer, certificate, nullptr, nullptr, 0);
  X509_EXTENSION* extension = X509V3_EXT_conf_nid(nullptr, &context, nid, value.c_str());
  if (extension == nullptr) return false;
  const bool ok = X509_add_ext(certificate, extension, -1) == 1;
  X509_EXTENSION_free(extension);
  return ok;
}

// A certificate for `key` with `name`, valid from an hour ago (clock skew)
// for `days`, with a random 128-bit serial; the caller adds extensions and signs.
Result<Certificate> NewCertificate(EVP_PKEY* key, const std::string& name, int days) {
  Certificate certificate(X509_new());
  BIGNUM* serial = BN_new();
  const bool ok = certificate && serial != nullptr && X509_set_version(certificate.get(), 2) == 1 &&
                  BN_rand(serial, 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) == 1 &&
                  BN_to_ASN1_INTEGER(serial, X509_get_serialNumber(certificate.get())) != nullptr &&
                  X509_gmtime_adj(X509_getm_notBefore(certificate.get()), -3600) != nullptr &&
                  X509_gmtime_adj(X509_getm_notAfter(certificate.get()), static_cast<long>(days) * 86400) != nullptr &&
                  X509_set_pubkey(certificate.get(), key) == 1 &&
                  X509_NAME_add_entry_by_txt(X509_get_subject_name(certificate.get()), "CN", MBSTRING_UTF8,
                                             reinterpret_cast<const unsigned char*>(name.c_str()), -1, -1, 0) == 1;
  BN_free(serial);
  if (!ok) return OpenSslFailure("build a certificate for " + name);
  return certificate;
}

std::string SubjectAltNames(const std::vector<std::string>& hosts) {
  std::string out;
  for (const std::string& host : hosts) {
    boost::system::error_code not_ip;
    boost::asio::ip::make_address(host, not_ip);
    out += (out.empty() ? "" : ",") + std::string(not_ip ? "DNS:" : "IP:") + host;
  }
  return out;
}

}  // namespace

CertificateAuthorityFiles CaFilesIn(const std::string& dir) {
  const std::filesystem::path base(dir);
  return {(base / "ca.crt").string(), (base / "ca.key").string()};
}

Status EnsureCertificateAuthority(const std::string& dir, const std::string& name) {
  const CertificateAuthorityFiles files = CaFilesIn(dir);
  if (std::filesystem::exists(files.cert) && std::filesystem::exists(files.key)) return Status::Ok();
  Result<Key> key = NewKey();
  if (!key.ok()) return key.status();
  Result<Certificate> certificate = NewCertificate(key->get(), name, 3650);
  if (!certificate.ok()) return certificate.status();
  X509* c = certificate->get();
  if (X509_set_issuer_name(c, X509_get_subject_name(c)) != 1 || !AddExtension(c, c, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") ||
      !AddExtension(c, c, NID_key_usage, "critical,keyCertSign,cRLSign") || !AddExtension(c, c, NID_subject_key_identifier, "hash") ||
      X509_sign(c, key->get(), EVP_sha256()) == 0) {
    return OpenSslFailure("sign the CA certificate");
  }
  TESSERA_RETURN_IF_ERROR(WriteKey(key->get(), files.key));
  return WriteCertificate(c, files.cert);
}

Status IssueCertificate(const std::string& ca_dir, const CertificateRequest& request, const std::string& cert_path,
                        const std::string& key_path) {
  if (request.common_name.empty()) return InvalidArgument("a certificate needs a name");
  const CertificateAuthorityFiles ca = CaFilesIn(ca_dir);
  Result<Key> ca_key = ReadPem<Key>(ca.key, "private key", PEM_read_PrivateKey);
  if (!ca_key.ok()) return ca_key.status();
  Result<Certificate> ca_certificate = ReadPem<Certificate>(ca.cert, "certificate", PEM_read_X509);
  if (!ca_certificate.ok()) return ca_certificate.status();
  Result<Key> key = NewKey();
  if (!key.ok()) return key.status();
  Result<Certificate> certificate = NewCertificate(key->get(), request.common_name, request.days);
  if (!certificate.ok()) return certificate.status();
  X509* c = certificate->get();
  X509* issuer = ca_certificate->get();
  // Every certificate may serve as a client's (a server dials etcd or its
  // peers too); one naming hosts may also serve.
  const std::string usage = request.hosts.empty() ? "clientAuth" : "serverAuth,clientAuth";
  bool ok = X509_set_issuer_name(c, X509_get_subject_name(issuer)) == 1 && AddExtension(c, issuer, NID_basic_constraints, "critical,CA:FALSE") &&
            AddExtension(c, issuer, NID_key_usage, "critical,digitalSignature") && AddExtension(c, issuer, NID_ext_key_usage, usage) &&
            AddExtension(c, issuer, NID_authority_key_identifier, "keyid:always");
  if (ok && !request.hosts.empty()) ok = AddExtension(c, issuer, NID_subject_alt_name, SubjectAltNames(request.hosts));
  if (!ok || X509_sign(c, ca_key->get(), EVP_sha256()) == 0) return OpenSslFailure("sign the certificate for " + request.common_name);
  TESSERA_RETURN_IF_ERROR(WriteKey(key->get(), key_path));
  return WriteCertificate(c, cert_path);
}

Result<ServerCertificates> EnsureServerCertificates(const std::string& dir, const std::vector<std::string>& hosts) {
  TESSERA_RETURN_IF_ERROR(EnsureCertificateAuthority(dir, "Tessera cluster CA"));
  const std::filesystem::path base(dir);
  ServerCertificates out{CaFilesIn(dir).cert, (base / "server.crt").string(), (base / "server.key").string()};
  TESSERA_RETURN_IF_ERROR(IssueCertificate(dir, {"tessera-server", hosts}, out.cert, out.key));
  return out;
}

}  // namespace tessera::auth
