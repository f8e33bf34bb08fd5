// Secrets kept at rest (registry passwords of queues): sealed with
// AES-256-GCM under a key the server keeps in a file of its own, never in
// the store. A sealed text is "v1:" and hex of nonce (12 bytes), ciphertext
// and tag (16 bytes). Sealing binds a context (the record's key): a sealed
// value copied under another record's key does not open, and neither does
// one sealed under another key file or altered by one bit.
//
// The key file holds 64 hex digits and a newline, mode 0600. It is made on
// first use; replicas of one store (etcd) must be given the same file.
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "base/status.h"

namespace tessera::auth {

class SecretBox {
 public:
  static constexpr std::size_t kKeyBytes = 32;

  // Reads the key at `path`, or creates it there (0600, 256 random bits)
  // when no file is there. Refuses a file that is not exactly a key, or one
  // that other users may read.
  static Result<SecretBox> OpenOrCreate(const std::string& path);
  // A box over the given key (tests).
  explicit SecretBox(const std::array<unsigned char, kKeyBytes>& key) : key_(key) {}

  std::string Seal(std::string_view plaintext, std::string_view context) const;
  // The plaintext, or InvalidArgument when `sealed` is malformed, was
  // sealed under another key or context, or was altered.
  Result<std::string> Open(std::string_view sealed, std::string_view context) const;

 private:
  std::array<unsigned char, kKeyBytes> key_;
};

}  // namespace tessera::auth
