// API tokens. A token is shown once, when it is created, as
//   tsr_<id>_<secret>
// where <id> (16 hex digits) names it in lists and audit records and
// <secret> (64 hex digits, 256 random bits) proves it. The server keeps only
// a random salt and SHA-256(salt || secret), and compares in constant time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "auth/roles.h"
#include "base/status.h"

namespace tessera::auth {

struct TokenRecord {
  std::string id;
  std::string user;         // who it speaks for; a node credential: the node's name
  Role role = Role::kViewer;
  std::string description;
  std::int64_t created_ms = 0;
  std::int64_t expires_ms = 0;  // 0: never
  std::int64_t revoked_ms = 0;  // 0: valid
  std::string created_by;
  std::string salt;  // hex
  std::string hash;  // hex SHA-256(salt || secret)
};

struct NewToken {
  std::string text;  // tsr_<id>_<secret>: given to the holder, never stored
  TokenRecord record;
};

// A fresh random token for `user` with `role`; the caller fills the rest.
NewToken GenerateToken(std::string user, Role role);

struct ParsedToken {
  std::string id;
  std::string secret;
};
// "tsr_<id>_<secret>" -> its parts; nullopt when it is not of that form.
std::optional<ParsedToken> ParseToken(std::string_view text);

// The secret matches the record's hash (constant time).
bool SecretMatches(const TokenRecord& record, std::string_view secret);

// Why a token cannot be used now, or empty when it can.
std::string Unusable(const TokenRecord& record, std::int64_t now_ms);

nlohmann::json ToJson(const TokenRecord& record, bool with_hash);
Result<TokenRecord> TokenFromJson(const nlohmann::json& value);

// n random bytes as lower-case hex (OpenSSL's RAND_bytes).
std::string RandomHex(std::size_t bytes);
// HMAC-SHA-256 of `message` under `key`, in hex: a secret derived from a kept
// key, the same each time it is asked (a job attempt's step secret).
std::string HmacSha256Hex(std::string_view key, std::string_view message);

}  // namespace tessera::auth
