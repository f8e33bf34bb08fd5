// Who may see and change what (auth/roles.h, docs/security.md): bearer
// tokens and their API, queue membership, which jobs a caller may see or
// manage, and the audit log of every mutating call.
#include <algorithm>
#include <mutex>

#include "api/json_reader.h"
#include "base/quantity.h"
#include "controlplane/control_plane.h"
#include "controlplane/request_params.h"
#include "controlplane/responses.h"

namespace tessera::controlplane {

using nlohmann::json;

namespace {

net::HttpResponse Unauthorized(const std::string& why) {
  net::HttpResponse r = net::ErrorResponse(401, why);
  r.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"tessera\"");
  return r;
}

bool Listed(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

bool IsAdmin(const net::Caller& caller) { return caller.role == auth::ToString(auth::Role::kClusterAdmin); }

// "research/nlp" -> "research" -> "".
std::string Parent(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

}  // namespace

std::optional<net::HttpResponse> ControlPlane::Authenticate(net::HttpRequest& request) {
  net::Caller& caller = request.caller;
  if (!options_.access.enabled) {
    // Access control off (a loopback server without --auth): the caller is
    // who it says it is, and may do everything.
    caller.user = request.Header("x-tessera-user");
    if (caller.user.empty()) caller.user = "anonymous";
    caller.role = std::string(auth::ToString(auth::Role::kClusterAdmin));
    return std::nullopt;
  }
  const std::string header = request.Header("authorization");
  if (header.empty()) return std::nullopt;  // enough for public routes; the others answer 401
  constexpr std::string_view kBearer = "Bearer ";
  if (!header.starts_with(kBearer)) return Unauthorized("Authorization: expected 'Bearer tsr_...'");
  const std::optional<auth::ParsedToken> parsed = auth::ParseToken(std::string_view(header).substr(kBearer.size()));
  if (!parsed) return Unauthorized("the bearer token is malformed: expected tsr_<16 hex>_<64 hex>");
  auth::TokenRecord record;
  {
    std::shared_lock lock(tokens_mu_);
    auto it = tokens_.find(parsed->id);
    if (it == tokens_.end()) return Unauthorized("unknown token");
    record = it->second;
  }
  if (!auth::SecretMatches(record, parsed->secret)) return Unauthorized("unknown token");
  if (const std::string why = auth::Unusable(record, NowMs()); !why.empty()) return Unauthorized(why);
  caller = {record.user, std::string(auth::ToString(record.role)), record.id, true};
  std::int64_t retry_after = 0;
  if (record.role != auth::Role::kNode && !limiter_.Admit(record.id, std::chrono::steady_clock::now(), &retry_after)) {
    net::HttpResponse r = net::ErrorResponse(429, "token " + record.id + " is over its rate of " +
                                                      std::to_string(static_cast<std::int64_t>(options_.access.rate_per_token)) +
                                                      " requests per second; retry in " + std::to_string(retry_after) + "s");
    r.headers.emplace_back("Retry-After", std::to_string(retry_after));
    return r;
  }
  return std::nullopt;
}

// --- object checks (mu_ held) ------------------------------------------------------

bool ControlPlane::QueueAdmin(const net::Caller& caller, const std::string& queue) const {
  if (!options_.access.enabled || IsAdmin(caller)) return true;
  for (std::string path = queue; !path.empty(); path = Parent(path)) {
    auto it = queue_access_.find(path);
    if (it != queue_access_.end() && Listed(it->second.admins, caller.user)) return true;
  }
  return false;
}

bool ControlPlane::QueueMember(const net::Caller& caller, const std::string& queue) const {
  if (QueueAdmin(caller, queue)) return true;
  for (std::string path = queue; !path.empty(); path = Parent(path)) {
    auto it = queue_access_.find(path);
    if (it != queue_access_.end() && Listed(it->second.members, caller.user)) return true;
  }
  return false;
}

bool ControlPlane::ManagesWorkOf(const net::Caller& caller, const std::string& user, const std::string& queue) const {
  if (!options_.access.enabled || IsAdmin(caller)) return true;
  if (caller.role != auth::ToString(auth::Role::kUser)) return false;
  return user == caller.user || QueueAdmin(caller, queue);
}

bool ControlPlane::SeesWorkOf(const net::Caller& caller, const std::string& user, const std::string& queue) const {
  return caller.role == auth::ToString(auth::Role::kViewer) || ManagesWorkOf(caller, user, queue);
}

bool ControlPlane::ManagesJob(const net::Caller& caller, model::JobId job) const {
  const JobRecord& record = records_.at(job);
  return ManagesWorkOf(caller, record.user, record.queue);
}

bool ControlPlane::SeesJob(const net::Caller& caller, model::JobId job) const {
  const JobRecord& record = records_.at(job);
  return SeesWorkOf(caller, record.user, record.queue);
}

// --- tokens ------------------------------------------------------------------------

void ControlPlane::PersistToken(const auth::TokenRecord& record) {
  writes_.push_back(store::Mutation::Put(store::Collection::kTokens, record.id, api::Dump(auth::ToJson(record, true))));
  std::unique_lock lock(tokens_mu_);
  tokens_[record.id] = record;
}

void ControlPlane::CreateToken(const net::HttpRequest& request, Reply reply) {
  Result<json> body = api::ParseJsonBody(request.body.empty() ? "{}" : request.body);
  if (!body.ok()) return reply(StatusResponse(body.status()));
  Result<api::JsonObject> o = api::JsonObject::Read(*body, "", {"user", "role", "description", "expiresIn"});
  if (!o.ok()) return reply(StatusResponse(o.status()));
  const net::Caller& caller = request.caller;
  std::string user = caller.user, role_name = "user", description, expires_in;
  for (auto [key, out] : {std::pair{"user", &user}, {"role", &role_name}, {"description", &description}, {"expiresIn", &expires_in}}) {
    if (Status s = o->ReadString(key, out); !s.ok()) return reply(StatusResponse(s));
  }
  const std::optional<auth::Role> role = auth::RoleFromString(role_name);
  if (!role || *role == auth::Role::kNode) {
    return reply(net::ErrorResponse(400, "role: '" + role_name + "' is not one of: cluster-admin, user, viewer, node-join"));
  }
  if (user.empty() || user.size() > 128) return reply(net::ErrorResponse(400, "user: must be 1 to 128 characters"));
  if (!IsAdmin(caller)) {
    // Others make tokens for themselves, with no more than their own role.
    if (user != caller.user) return reply(net::ErrorResponse(403, "only a cluster-admin makes tokens for another user"));
    const bool allowed = *role == auth::Role::kViewer || (*role == auth::Role::kUser && caller.role == auth::ToString(auth::Role::kUser));
    if (!allowed) return reply(net::ErrorResponse(403, "a " + caller.role + " cannot make a " + role_name + " token"));
  }
  std::int64_t expires_ms = 0;
  if (!expires_in.empty()) {
    Result<Seconds> s = ParseDuration(expires_in);
    if (!s.ok() || *s <= 0) return reply(net::ErrorResponse(400, "expiresIn: '" + expires_in + "' is not a duration such as 30d or 12h"));
    expires_ms = NowMs() + *s * 1000;
  }
  auth::NewToken token = auth::GenerateToken(user, *role);
  token.record.description = description;
  token.record.created_ms = NowMs();
  token.record.expires_ms = expires_ms;
  token.record.created_by = caller.user;
  std::lock_guard lock(mu_);
  PersistToken(token.record);
  Commit([token, reply]() {
    json answer = auth::ToJson(token.record, false);
    answer["token"] = token.text;  // the only time it is shown
    reply(JsonResponse(201, answer));
  });
}

net::HttpResponse ControlPlane::ListTokens(const net::HttpRequest& request) {
  json tokens = json::array();
  std::shared_lock lock(tokens_mu_);
  std::vector<const auth::TokenRecord*> shown;
  for (const auto& [id, record] : tokens_) {
    if (IsAdmin(request.caller) || record.user == request.caller.user) shown.push_back(&record);
  }
  std::sort(shown.begin(), shown.end(), [](auto* a, auto* b) { return a->created_ms < b->created_ms; });
  for (const auth::TokenRecord* record : shown) tokens.push_back(auth::ToJson(*record, false));
  return JsonResponse(200, {{"tokens", tokens}});
}

void ControlPlane::RevokeToken(const net::HttpRequest& request, Reply reply) {
  const std::string id = request.params.at("id");
  auth::TokenRecord record;
  {
    std::shared_lock lock(tokens_mu_);
    auto it = tokens_.find(id);
    if (it == tokens_.end()) return reply(net::ErrorResponse(404, "no token " + id));
    record = it->second;
  }
  if (!IsAdmin(request.caller) && record.user != request.caller.user) {
    return reply(net::ErrorResponse(403, "token " + id + " is not yours; only a cluster-admin revokes others' tokens"));
  }
  if (record.revoked_ms == 0) record.revoked_ms = NowMs();
  std::lock_guard lock(mu_);
  PersistToken(record);
  Commit([record, reply]() { reply(JsonResponse(200, auth::ToJson(record, false))); });
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

void ControlPlane::Audit(const net::HttpRequest& request, int status) {
  const net::Caller& caller = request.caller;
  std::vector<store::Mutation> writes;
  {
    std::lock_guard lock(audit_mu_);
    json entry = {{"revision", ++audit_revision_},
                  {"time", NowMs()},
                  {"user", caller.user.empty() ? "(no token)" : caller.user},
                  {"role", caller.role},
                  {"token", caller.token_id},
                  {"method", request.method},
                  {"target", request.target},
                  {"status", status},
                  {"remote", request.remote_address}};
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

net::HttpResponse ControlPlane::ListAudit(const net::HttpRequest& request) {
  const Result<std::int64_t> since = QueryCount(request, "since", 0);
  if (!since.ok()) return StatusResponse(since.status());
  const Result<std::int64_t> limit = QueryCount(request, "limit", 1000);
  if (!limit.ok()) return StatusResponse(limit.status());
  const std::string user = request.Query("user");
  json records = json::array();
  std::lock_guard lock(audit_mu_);
  for (const json& entry : audit_) {
    if (static_cast<std::int64_t>(records.size()) >= *limit) break;
    if (entry["revision"].get<std::int64_t>() <= *since) continue;
    if (!user.empty() && entry["user"] != user) continue;
    records.push_back(entry);
  }
  return JsonResponse(200, {{"records", records}, {"revision", audit_revision_}});
}

}  // namespace tessera::controlplane
