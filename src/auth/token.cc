#include "auth/token.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <limits>
#include <stdexcept>

#include "api/json_reader.h"

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

}  // namespace

std::string RandomHex(std::size_t bytes) {
  std::string raw(bytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), static_cast<int>(bytes)) != 1) {
    throw std::runtime_error("OpenSSL RAND_bytes failed: no randomness for a token");
  }
  return Hex(reinterpret_cast<const unsigned char*>(raw.data()), bytes);
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

Result<TokenRecord> TokenFromJson(const nlohmann::json& value) {
  Result<api::JsonObject> o = api::JsonObject::Read(
      value, "", {"id", "user", "role", "description", "createdTime", "expiresTime", "revokedTime", "createdBy", "salt", "hash"},
      {"id", "user", "role", "salt", "hash"});
  if (!o.ok()) return o.status();
  TokenRecord r;
  std::string role;
  TESSERA_RETURN_IF_ERROR(o->ReadString("id", &r.id));
  TESSERA_RETURN_IF_ERROR(o->ReadString("user", &r.user));
  TESSERA_RETURN_IF_ERROR(o->ReadString("role", &role));
  TESSERA_RETURN_IF_ERROR(o->ReadString("description", &r.description));
  TESSERA_RETURN_IF_ERROR(o->ReadInt("createdTime", &r.created_ms, 0, kMaxMs));
  TESSERA_RETURN_IF_ERROR(o->ReadInt("expiresTime", &r.expires_ms, 0, kMaxMs));
  TESSERA_RETURN_IF_ERROR(o->ReadInt("revokedTime", &r.revoked_ms, 0, kMaxMs));
  TESSERA_RETURN_IF_ERROR(o->ReadString("createdBy", &r.created_by));
  TESSERA_RETURN_IF_ERROR(o->ReadString("salt", &r.salt));
  TESSERA_RETURN_IF_ERROR(o->ReadString("hash", &r.hash));
  const std::optional<Role> parsed = RoleFromString(role);
  if (!parsed) return InvalidArgument("role: '" + role + "' is not a role");
  r.role = *parsed;
  return r;
}

}  // namespace tessera::auth
