#include "auth/secret_box.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>

namespace tessera::auth {

namespace {

constexpr std::string_view kVersion = "v1:";
constexpr std::size_t kNonceBytes = 12;
constexpr std::size_t kTagBytes = 16;

using CipherContext = std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)>;

std::string ToHex(const unsigned char* bytes, std::size_t n) {
  std::string out(2 * n + 1, '\0');
  std::size_t length = 0;
  OPENSSL_buf2hexstr_ex(out.data(), out.size(), &length, bytes, n, '\0');
  out.resize(2 * n);
  return out;
}

// Hex digits to bytes; nullopt for anything else (odd length, other characters).
std::optional<std::string> FromHex(std::string_view hex) {
  if (hex.size() % 2 != 0) return std::nullopt;
  std::string out(hex.size() / 2, '\0');
  std::size_t length = 0;
  const std::string text(hex);
  if (OPENSSL_hexstr2buf_ex(reinterpret_cast<unsigned char*>(out.data()), out.size(), &length, text.c_str(), '\0') != 1 ||
      length != out.size()) {
    return std::nullopt;
  }
  return out;
}

Status Errno(const std::string& what, const std::string& path) { return Internal(what + " " + path + ": " + std::strerror(errno)); }

}  // namespace

Result<SecretBox> SecretBox::OpenOrCreate(const std::string& path) {
  std::array<unsigned char, kKeyBytes> key{};
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) return Errno("cannot read the secret key", path);
    if (RAND_bytes(key.data(), static_cast<int>(key.size())) != 1) return Internal("OpenSSL RAND_bytes failed: no randomness for the secret key");
    // O_EXCL: two servers starting on one directory never write two keys.
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return Errno("cannot create the secret key", path);
    const std::string text = ToHex(key.data(), key.size()) + "\n";
    const bool written = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && fsync(fd) == 0;
    close(fd);
    if (!written) return Errno("cannot write the secret key", path);
    return SecretBox(key);
  }
  if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%03o", static_cast<unsigned>(st.st_mode & 0777));
    return FailedPrecondition("the secret key " + path + " may be read by other users (mode " + mode + "); make it 0600");
  }
  std::ifstream in(path);
  std::string text;
  std::getline(in, text);
  const std::optional<std::string> bytes = FromHex(text);
  if (!in || !bytes || bytes->size() != kKeyBytes) {
    return InvalidArgument("the secret key " + path + " is not 64 hex digits; the secrets it sealed cannot be read without it");
  }
  std::memcpy(key.data(), bytes->data(), kKeyBytes);
  return SecretBox(key);
}

std::string SecretBox::Seal(std::string_view plaintext, std::string_view context) const {
  unsigned char nonce[kNonceBytes];
  if (RAND_bytes(nonce, sizeof nonce) != 1) throw std::runtime_error("OpenSSL RAND_bytes failed: no nonce for a secret");
  std::string out(kNonceBytes + plaintext.size() + kTagBytes, '\0');
  auto* bytes = reinterpret_cast<unsigned char*>(out.data());
  std::memcpy(bytes, nonce, kNonceBytes);
  CipherContext ctx(EVP_CIPHER_CTX_new(), EVP_CIPHER_CTX_free);
  int n = 0;
  const bool ok =
      ctx && EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, key_.data(), nonce) == 1 &&
      EVP_EncryptUpdate(ctx.get(), nullptr, &n, reinterpret_cast<const unsigned char*>(context.data()), static_cast<int>(context.size())) == 1 &&
      EVP_EncryptUpdate(ctx.get(), bytes + kNonceBytes, &n, reinterpret_cast<const unsigned char*>(plaintext.data()),
                        static_cast<int>(plaintext.size())) == 1 &&
      EVP_EncryptFinal_ex(ctx.get(), bytes + kNonceBytes + n, &n) == 1 &&
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, kTagBytes, bytes + kNonceBytes + plaintext.size()) == 1;
  // Only an OpenSSL broken beyond use fails here; a secret is never stored unsealed.
  if (!ok) throw std::runtime_error("OpenSSL AES-256-GCM failed to seal a secret");
  return std::string(kVersion) + ToHex(bytes, out.size());
}

Result<std::string> SecretBox::Open(std::string_view sealed, std::string_view context) const {
  if (!sealed.starts_with(kVersion)) return InvalidArgument("not a sealed secret (it must begin with v1:)");
  const std::optional<std::string> raw = FromHex(sealed.substr(kVersion.size()));
  if (!raw || raw->size() < kNonceBytes + kTagBytes) return InvalidArgument("not a sealed secret (malformed hex or too short)");
  const auto* bytes = reinterpret_cast<const unsigned char*>(raw->data());
  const std::size_t length = raw->size() - kNonceBytes - kTagBytes;
  std::string plain(length, '\0');
  std::string tag(raw->substr(kNonceBytes + length));
  CipherContext ctx(EVP_CIPHER_CTX_new(), EVP_CIPHER_CTX_free);
  int n = 0;
  const bool ok =
      ctx && EVP_DecryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, key_.data(), bytes) == 1 &&
      EVP_DecryptUpdate(ctx.get(), nullptr, &n, reinterpret_cast<const unsigned char*>(context.data()), static_cast<int>(context.size())) == 1 &&
      EVP_DecryptUpdate(ctx.get(), reinterpret_cast<unsigned char*>(plain.data()), &n, bytes + kNonceBytes, static_cast<int>(length)) == 1 &&
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, kTagBytes, tag.data()) == 1 &&
      EVP_DecryptFinal_ex(ctx.get(), reinterpret_cast<unsigned char*>(plain.data()) + n, &n) == 1;
  if (!ok) return InvalidArgument("the sealed secret does not open: sealed under another key file, for another record, or altered");
  return plain;
}

}  // namespace tessera::auth
