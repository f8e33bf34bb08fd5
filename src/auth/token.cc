#include "auth/token.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <utility>

namespace tessera::auth {

namespace {

std::string Hex(const unsigned char* bytes, std::size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(2 * n, '0');
  for (std::size_t i = 0; i < n; ++i) {
    out[2 * i] = kDigits[bytes[i] >> 4];
    out[2 * i + 1] = kDigits[bytes[i] & 0xf];
  }
  return out;
}

bool IsHex(std::string_view text, std::size_t length) {
  if (text.size() != length) return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::string Sha256Hex(std::string_view salt, std::string_view secret) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr);
  EVP_DigestUpdate(ctx, salt.data(), salt.size());
  EVP_DigestUpdate(ctx, secret.data(), secret.size());
  EVP_DigestFinal_ex(ctx, digest, &length);
  EVP_MD_CTX_free(ctx);
  return Hex(digest, length);
}

constexpr std::size_t kIdBytes = 8, kSecretBytes = 32, kSaltBytes = 16;
constexpr std::int64_t kMaxMs = std::numeric_limits<std::int64_t>::max();

// Where the field named `key` goes, or null when no field has that name.
template <typename T, std::size_t N>
T* FieldFor(const std::pair<std::string_view, T*> (&fields)[N], std::string_view key) {
  for (const auto& [name, out] : fields) {
    if (name == key) return out;
  }
  return nullptr;
}

// A time in milliseconds: an integer in [0, kMaxMs] (JSON text reads
// non-negative integers as unsigned).
bool IsTimeMs(const nlohmann::json& value) {
  return value.is_number_unsigned() ? value.get<std::uint64_t>() <= static_cast<std::uint64_t>(kMaxMs)
                                    : value.is_number_integer() && value.get<std::int64_t>() >= 0;
}

}  // namespace

std::string RandomHex(std::size_t bytes) {
  std::string raw(bytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), static_cast<int>(bytes)) != 1) {
    throw std::runtime_error("OpenSSL RAND_bytes failed: no randomness for a token");
  }
  return Hex(reinterpret_cast<const unsigned char*>(raw.data()), bytes);
}

std::string HmacSha256Hex(std::string_view key, std::string_view message) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(message.data()), message.size(),
       digest, &length);
  return Hex(digest, length);
}

NewToken GenerateToken(std::string user, Role role) {
  NewToken out;
  out.record.id = RandomHex(kIdBytes);
  const std::string secret = RandomHex(kSecretBytes);
  out.record.user = std::move(user);
  out.record.role = role;
  out.record.salt = RandomHex(kSaltBytes);
  out.record.hash = Sha256Hex(out.record.salt, secret);
  out.text = "tsr_" + out.record.id + "_" + secret;
  return out;
}

std::optional<ParsedToken> ParseToken(std::string_view text) {
  if (!text.starts_with("tsr_")) return std::nullopt;
  text.remove_prefix(4);
  const std::size_t underscore = text.find('_');
  if (underscore == std::string_view::npos) return std::nullopt;
  const std::string_view id = text.substr(0, underscore), secret = text.substr(underscore + 1);
  if (!IsHex(id, 2 * kIdBytes) || !IsHex(secret, 2 * kSecretBytes)) return std::nullopt;
  return ParsedToken{std::string(id), std::string(secret)};
}

bool SecretMatches(const TokenRecord& record, std::string_view secret) {
  const std::string hash = Sha256Hex(record.salt, secret);
  return hash.size() == record.hash.size() && CRYPTO_memcmp(hash.data(), record.hash.data(), hash.size()) == 0;
}

std::string Unusable(const TokenRecord& record, std::int64_t now_ms) {
  if (record.revoked_ms != 0) return "token " + record.id + " was revoked";
  if (record.expires_ms != 0 && now_ms >= record.expires_ms) return "token " + record.id + " has expired";
  return {};
}

nlohmann::json ToJson(const TokenRecord& r, bool with_hash) {
  nlohmann::json j = {{"id", r.id},           {"user", r.user},           {"role", ToString(r.role)},
                      {"description", r.description}, {"createdTime", r.created_ms}, {"expiresTime", r.expires_ms},
                      {"revokedTime", r.revoked_ms},   {"createdBy", r.created_by}};
  if (with_hash) {
    j["salt"] = r.salt;
    j["hash"] = r.hash;
  }
  return j;
}

// Strict, as every stored record is read: known fields only, the required
// ones present, each of its type. auth reads the few fields itself rather
// than through api/json_reader.h: auth sits below api (docs/architecture.md).
Result<TokenRecord> TokenFromJson(const nlohmann::json& value) {
  if (!value.is_object()) return InvalidArgument("token: expected an object");
  TokenRecord r;
  std::string role;
  const std::pair<std::string_view, std::string*> texts[] = {
      {"id", &r.id},     {"user", &r.user}, {"role", &role},                {"description", &r.description},
      {"salt", &r.salt}, {"hash", &r.hash}, {"createdBy", &r.created_by}};
  const std::pair<std::string_view, std::int64_t*> times[] = {
      {"createdTime", &r.created_ms}, {"expiresTime", &r.expires_ms}, {"revokedTime", &r.revoked_ms}};
  for (const auto& [key, field] : value.items()) {
    if (std::string* text = FieldFor(texts, key)) {
      if (!field.is_string()) return InvalidArgument(key + ": expected a string");
      *text = field.get<std::string>();
    } else if (std::int64_t* ms = FieldFor(times, key)) {
      if (!IsTimeMs(field)) return InvalidArgument(key + ": expected milliseconds, an integer of at least 0");
      *ms = field.get<std::int64_t>();
    } else {
      return InvalidArgument(key + ": unknown field");
    }
  }
  for (std::string_view key : {"id", "user", "role", "salt", "hash"}) {
    if (!value.contains(key)) return InvalidArgument(std::string(key) + ": required field is missing");
  }
  const std::optional<Role> parsed = RoleFromString(role);
  if (!parsed) return InvalidArgument("role: '" + role + "' is not a role");
  r.role = *parsed;
  return r;
}

}  // namespace tessera::auth
