// Who may see and change what (auth/roles.h, docs/security.md): bearer
// tokens and their API, queue membership, which jobs a caller may see or
// manage, and the audit log of every mutating call.
#include <algorithm>
#include <mutex>

#include "api/json_reader.h"
#include "controlplane/control_plane.h"

namespace tessera::controlplane {

using nlohmann::json;

namespace {

bool Listed(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

bool IsAdmin(const auth::Caller& caller) { return caller.Is(auth::Role::kClusterAdmin); }

}  // namespace

Result<auth::Caller> ControlPlane::Authenticate(const std::string& authorization, const std::string& claimed_user) {
  if (!options_.access.enabled) {
    // Access control off (a loopback server without --auth): the caller is
    // who it says it is, and may do everything.
    return auth::Caller{claimed_user.empty() ? "anonymous" : claimed_user, auth::Role::kClusterAdmin, "", false};
  }
  if (authorization.empty()) return auth::Caller{};  // enough for public routes; the others refuse it
  Result<auth::TokenRecord> record = VerifyToken(authorization);
  if (!record.ok()) return record.status();
  std::int64_t retry_after = 0;
  if (record->role != auth::Role::kNode && !limiter_.Admit(record->id, std::chrono::steady_clock::now(), &retry_after)) {
    return ResourceExhausted("token " + record->id + " is over its rate of " +
                                 std::to_string(static_cast<std::int64_t>(options_.access.rate_per_token)) +
                                 " requests per second; retry in " + std::to_string(retry_after) + "s",
                             retry_after);
  }
  return auth::Caller{record->user, record->role, record->id, true};
}

std::optional<auth::Role> ControlPlane::RoleOf(const std::string& authorization) const {
  if (!options_.access.enabled) return auth::Role::kClusterAdmin;
  if (authorization.empty()) return std::nullopt;
  const Result<auth::TokenRecord> record = VerifyToken(authorization);
  return record.ok() ? std::optional(record->role) : std::nullopt;
}

Result<auth::TokenRecord> ControlPlane::VerifyToken(const std::string& authorization) const {
  constexpr std::string_view kBearer = "Bearer ";
  if (!authorization.starts_with(kBearer)) return Unauthenticated("Authorization: expected 'Bearer tsr_...'");
  const std::optional<auth::ParsedToken> parsed = auth::ParseToken(std::string_view(authorization).substr(kBearer.size()));
  if (!parsed) return Unauthenticated("the bearer token is malformed: expected tsr_<16 hex>_<64 hex>");
  auth::TokenRecord record;
  {
    std::shared_lock lock(tokens_mu_);
    auto it = tokens_.find(parsed->id);
    if (it == tokens_.end()) return Unauthenticated("unknown token");
    record = it->second;
  }
  if (!auth::SecretMatches(record, parsed->secret)) return Unauthenticated("unknown token");
  if (const std::string why = auth::Unusable(record, NowMs()); !why.empty()) return Unauthenticated(why);
  return record;
}

// --- object checks (mu_ held) ------------------------------------------------------

bool ControlPlane::QueueAdmin(const auth::Caller& caller, const std::string& queue) const {
  if (!options_.access.enabled || IsAdmin(caller)) return true;
  for (std::string path = queue; !path.empty(); path = model::ParentQueuePath(path)) {
    auto it = queue_access_.find(path);
    if (it != queue_access_.end() && Listed(it->second.admins, caller.user)) return true;
  }
  return false;
}

bool ControlPlane::QueueMember(const auth::Caller& caller, const std::string& queue) const {
  if (QueueAdmin(caller, queue)) return true;
  for (std::string path = queue; !path.empty(); path = model::ParentQueuePath(path)) {
    auto it = queue_access_.find(path);
    if (it != queue_access_.end() && Listed(it->second.members, caller.user)) return true;
  }
  return false;
}

bool ControlPlane::ManagesWorkOf(const auth::Caller& caller, const std::string& user, const std::string& queue) const {
  if (!options_.access.enabled || IsAdmin(caller)) return true;
  if (!caller.Is(auth::Role::kUser)) return false;
  return user == caller.user || QueueAdmin(caller, queue);
}

bool ControlPlane::SeesWorkOf(const auth::Caller& caller, const std::string& user, const std::string& queue) const {
  return caller.Is(auth::Role::kViewer) || ManagesWorkOf(caller, user, queue);
}

bool ControlPlane::ManagesJob(const auth::Caller& caller, model::JobId job) const {
  const JobRecord& record = records_.at(job);
  return ManagesWorkOf(caller, record.user, record.queue);
}

bool ControlPlane::SeesJob(const auth::Caller& caller, model::JobId job) const {
  const JobRecord& record = records_.at(job);
  return SeesWorkOf(caller, record.user, record.queue);
}

// --- tokens ------------------------------------------------------------------------

void ControlPlane::PersistToken(const auth::TokenRecord& record) {
  writes_.push_back(store::Mutation::Put(store::Collection::kTokens, record.id, api::Dump(auth::ToJson(record, true))));
  std::unique_lock lock(tokens_mu_);
  tokens_[record.id] = record;
}

void ControlPlane::CreateToken(const auth::Caller& caller, TokenRequest request, Done<json> done) {
  if (request.user.empty()) request.user = caller.user;
  if (request.role == auth::Role::kNode) {
    return done(InvalidArgument("role: 'node' is not one of: cluster-admin, user, viewer, node-join (a node's credential comes with its registration)"));
  }
  if (request.user.empty() || request.user.size() > 128) return done(InvalidArgument("user: must be 1 to 128 characters"));
  if (!IsAdmin(caller)) {
    // Others make tokens for themselves, with no more than their own role.
    if (request.user != caller.user) return done(PermissionDenied("only a cluster-admin makes tokens for another user"));
    const bool allowed = request.role == auth::Role::kViewer || (request.role == auth::Role::kUser && caller.Is(auth::Role::kUser));
    if (!allowed) {
      return done(PermissionDenied("a " + std::string(caller.RoleName()) + " cannot make a " + std::string(auth::ToString(request.role)) +
                                   " token"));
    }
  }
  auth::NewToken token = auth::GenerateToken(request.user, request.role);
  token.record.description = request.description;
  token.record.created_ms = NowMs();
  token.record.expires_ms = request.expires_in_s > 0 ? NowMs() + request.expires_in_s * 1000 : 0;
  token.record.created_by = caller.user;
  std::lock_guard lock(mu_);
  PersistToken(token.record);
  Commit([token, done = std::move(done)]() {
    json answer = auth::ToJson(token.record, false);
    answer["token"] = token.text;  // the only time it is shown
    done(answer);
  });
}

json ControlPlane::ListTokens(const auth::Caller& caller) {
  json tokens = json::array();
  std::shared_lock lock(tokens_mu_);
  std::vector<const auth::TokenRecord*> shown;
  for (const auto& [id, record] : tokens_) {
    if (IsAdmin(caller) || record.user == caller.user) shown.push_back(&record);
  }
  std::sort(shown.begin(), shown.end(), [](auto* a, auto* b) { return a->created_ms < b->created_ms; });
  for (const auth::TokenRecord* record : shown) tokens.push_back(auth::ToJson(*record, false));
  return {{"tokens", tokens}};
}

void ControlPlane::RevokeToken(const auth::Caller& caller, const std::string& id, Done<json> done) {
  auth::TokenRecord record;
  {
    std::shared_lock lock(tokens_mu_);
    auto it = tokens_.find(id);
    if (it == tokens_.end()) return done(NotFound("no token " + id));
    record = it->second;
  }
  if (!IsAdmin(caller) && record.user != caller.user) {
    return done(PermissionDenied("token " + id + " is not yours; only a cluster-admin revokes others' tokens"));
  }
  if (record.revoked_ms == 0) record.revoked_ms = NowMs();
  std::lock_guard lock(mu_);
  PersistToken(record);
  Commit([record, done = std::move(done)]() { done(auth::ToJson(record, false)); });
}

std::string ControlPlane::IssueNodeCredential(const std::string& node, const std::string& by) {
  std::vector<auth::TokenRecord> older;
  {
    std::shared_lock lock(tokens_mu_);
    for (const auto& [id, record] : tokens_) {
      if (record.role == auth::Role::kNode && record.user == node && record.revoked_ms == 0) older.push_back(record);
    }
  }
  for (auth::TokenRecord& record : older) {  // a node holds one credential: the newest
    record.revoked_ms = NowMs();
    PersistToken(record);
  }
  auth::NewToken token = auth::GenerateToken(node, auth::Role::kNode);
  token.record.description = "credential of node " + node;
  token.record.created_ms = NowMs();
  token.record.created_by = by;
  PersistToken(token.record);
  return token.text;
}

Result<std::string> ControlPlane::IssueToken(const std::string& user, auth::Role role, const std::string& description) {
  auth::NewToken token = auth::GenerateToken(user, role);
  token.record.description = description;
  token.record.created_ms = NowMs();
  token.record.created_by = "tessera server";
  {
    std::lock_guard lock(mu_);
    PersistToken(token.record);
    Commit(nullptr);
  }
  commits_->Flush();  // durable before anyone is given it
  return token.text;
}

bool ControlPlane::TokenValid(const std::string& text) const {
  const std::optional<auth::ParsedToken> parsed = auth::ParseToken(text);
  if (!parsed) return false;
  std::shared_lock lock(tokens_mu_);
  auto it = tokens_.find(parsed->id);
  return it != tokens_.end() && auth::SecretMatches(it->second, parsed->secret) && auth::Unusable(it->second, NowMs()).empty();
}

// --- audit ---------------------------------------------------------------------------

void ControlPlane::Audit(const auth::Caller& caller, const AuditedCall& call) {
  std::vector<store::Mutation> writes;
  {
    std::lock_guard lock(audit_mu_);
    json entry = {{"revision", ++audit_revision_},
                  {"time", NowMs()},
                  {"user", caller.user.empty() ? "(no token)" : caller.user},
                  {"role", std::string(caller.RoleName())},
                  {"token", caller.token_id},
                  {"method", call.method},
                  {"target", call.target},
                  {"status", call.status},
                  {"remote", call.remote}};
    writes.push_back(store::Mutation::Put(store::Collection::kAudit, store::NumericKey(audit_revision_), api::Dump(entry)));
    audit_.push_back(std::move(entry));
    while (audit_.size() > options_.access.audit_window) {
      writes.push_back(store::Mutation::Delete(store::Collection::kAudit, store::NumericKey(audit_.front()["revision"].get<std::int64_t>())));
      audit_.pop_front();
    }
  }
  // Its own batch: the answer has gone out already, and no caller waits on it.
  commits_->Submit(std::move(writes), [](const Status&) {});
}

json ControlPlane::ListAudit(const AuditQuery& query) {
  json records = json::array();
  std::lock_guard lock(audit_mu_);
  for (const json& entry : audit_) {
    if (static_cast<std::int64_t>(records.size()) >= query.limit) break;
    if (entry["revision"].get<std::int64_t>() <= query.since) continue;
    if (!query.user.empty() && entry["user"] != query.user) continue;
    records.push_back(entry);
  }
  return {{"records", records}, {"revision", audit_revision_}};
}

}  // namespace tessera::controlplane
