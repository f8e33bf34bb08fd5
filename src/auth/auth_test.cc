#include <gtest/gtest.h>

#include <string>

#include "auth/rate_limiter.h"
#include "auth/roles.h"
#include "auth/token.h"

namespace tessera::auth {
namespace {

TEST(Tokens, OnlyTheSecretMatchesAndTheRecordKeepsNoSecret) {
  NewToken t = GenerateToken("alice", Role::kUser);
  auto parsed = ParseToken(t.text);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->id, t.record.id);
  EXPECT_TRUE(SecretMatches(t.record, parsed->secret));
  std::string wrong = parsed->secret;
  wrong[0] = wrong[0] == 'a' ? 'b' : 'a';
  EXPECT_FALSE(SecretMatches(t.record, wrong));
  const std::string stored = ToJson(t.record, true).dump();
  EXPECT_EQ(stored.find(parsed->secret), std::string::npos) << "the secret is never stored";
  auto back = TokenFromJson(ToJson(t.record, true));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_TRUE(SecretMatches(*back, parsed->secret));
  EXPECT_NE(GenerateToken("alice", Role::kUser).text, t.text) << "random";
}

// What TokenFromJson says of `stored` with `key` set to `value`.
std::string ProblemWith(nlohmann::json stored, const std::string& key, const nlohmann::json& value) {
  stored[key] = value;
  const Result<TokenRecord> record = TokenFromJson(stored);
  return record.ok() ? "read" : record.status().message();
}

TEST(Tokens, StoredRecordsAreReadStrictly) {
  const nlohmann::json stored = ToJson(GenerateToken("alice", Role::kUser).record, true);
  EXPECT_EQ(ProblemWith(stored, "expiresTime", 1700000000000), "read");
  EXPECT_EQ(ProblemWith(stored, "owner", "bob"), "owner: unknown field");
  EXPECT_EQ(ProblemWith(stored, "user", 7), "user: expected a string");
  EXPECT_EQ(ProblemWith(stored, "role", "root"), "role: 'root' is not a role");
  for (const nlohmann::json& time : {nlohmann::json(-1), nlohmann::json(1.5), nlohmann::json(1ULL << 63)}) {
    EXPECT_EQ(ProblemWith(stored, "revokedTime", time), "revokedTime: expected milliseconds, an integer of at least 0")
        << time;
  }
  nlohmann::json without_hash = stored;
  without_hash.erase("hash");
  EXPECT_EQ(TokenFromJson(without_hash).status().message(), "hash: required field is missing");
  EXPECT_FALSE(TokenFromJson(nlohmann::json::array()).ok());
}

TEST(Tokens, MalformedTextsAreNotTokens) {
  for (const char* text : {"", "tsr_", "tsr_abc_def", "Bearer x", "tsr_0123456789abcdef_short",
                           "tsr_0123456789ABCDEF_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}) {
    EXPECT_FALSE(ParseToken(text).has_value()) << text;
  }
}

TEST(Tokens, RevokedAndExpiredAreUnusable) {
  TokenRecord r = GenerateToken("bob", Role::kViewer).record;
  EXPECT_EQ(Unusable(r, 1000), "");
  r.expires_ms = 1000;
  EXPECT_NE(Unusable(r, 1000).find("expired"), std::string::npos);
  r.expires_ms = 0;
  r.revoked_ms = 5;
  EXPECT_NE(Unusable(r, 1000).find("revoked"), std::string::npos);
}

TEST(Tokens, HmacMatchesRfc4231) {
  // RFC 4231, test case 2.
  EXPECT_EQ(HmacSha256Hex("Jefe", "what do ya want for nothing?"), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_NE(HmacSha256Hex("Jefe", "what do ya want for nothing!"), HmacSha256Hex("Jefe", "what do ya want for nothing?"));
}

TEST(Roles, AccessLevels) {
  EXPECT_TRUE(Allows(Role::kViewer, Access::kRead));
  EXPECT_FALSE(Allows(Role::kViewer, Access::kWrite));
  EXPECT_TRUE(Allows(Role::kUser, Access::kWrite));
  EXPECT_FALSE(Allows(Role::kUser, Access::kAdmin));
  EXPECT_FALSE(Allows(Role::kNode, Access::kRead)) << "an agent's credential reads nothing of people's";
  EXPECT_TRUE(Allows(Role::kNodeJoin, Access::kJoin));
  EXPECT_FALSE(Allows(Role::kNodeJoin, Access::kNode));
  for (Role r : {Role::kClusterAdmin, Role::kUser, Role::kViewer, Role::kNodeJoin, Role::kNode}) {
    EXPECT_EQ(RoleFromString(ToString(r)), r);
  }
  EXPECT_FALSE(RoleFromString("root").has_value());
}

TEST(RateLimiter, BurstThenRate) {
  RateLimiter limiter(10, 3);
  const auto t0 = std::chrono::steady_clock::time_point() + std::chrono::hours(1);
  std::int64_t retry = 0;
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(limiter.Admit("a", t0, &retry));
  EXPECT_FALSE(limiter.Admit("a", t0, &retry));
  EXPECT_EQ(retry, 1);
  EXPECT_TRUE(limiter.Admit("b", t0, &retry)) << "buckets are per key";
  EXPECT_TRUE(limiter.Admit("a", t0 + std::chrono::milliseconds(100), &retry)) << "one request per 100 ms";
  EXPECT_FALSE(limiter.Admit("a", t0 + std::chrono::milliseconds(150), &retry));
  RateLimiter off(0, 0);
  EXPECT_TRUE(off.Admit("a", t0, &retry));
}

}  // namespace
}  // namespace tessera::auth
