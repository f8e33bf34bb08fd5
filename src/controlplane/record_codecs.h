// The records the control plane keeps in its store, each with its encoder and
// its decoder side by side, so that a field's name is written once.
//
// Decoders never throw and never guess: a record that is not exactly what the
// encoder writes (malformed JSON, an unknown or missing field, a value of the
// wrong type or out of range, a key that is not the record's) is refused with
// "field: reason". Recovery (recovery.cc) turns that into
// "collection/key: field: reason" and stops, or sets the record aside.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "auth/secret_box.h"
#include "auth/token.h"
#include "base/status.h"
#include "controlplane/event_log.h"
#include "controlplane/records.h"
#include "model/job.h"
#include "model/queue.h"

namespace tessera::controlplane {

// --- keys --------------------------------------------------------------------
// Job records and specs are keyed by store::NumericKey(id): exactly 20 digits.
Result<model::JobId> DecodeJobKey(std::string_view key);

// --- queues (key: the queue's path) ------------------------------------------
struct StoredQueue {
  model::QueueSpec spec;
  QueueAccess access;
};
std::string EncodeQueue(const model::QueueSpec& spec, const QueueAccess& access);
Result<StoredQueue> DecodeQueue(std::string_view key, std::string_view value);

// --- nodes (key: the node's name) ---------------------------------------------
// What a node's record keeps: inventory, cordon, liveness, registration time
// and the GPUs its agent took out of service.
std::string EncodeNode(const NodeRecord& node);
Result<NodeRecord> DecodeNode(std::string_view key, std::string_view value);

// --- jobs (key: NumericKey(id)) ----------------------------------------------
// The stored record is the API's view of the job without its spec (the spec
// is a record of its own, in job-specs): what GET /v1/jobs/ID shows. An
// array job's shows its indices, limit and counts ("array"); an element's
// names its array and index ("arrayJobId", "arrayIndex") and has no spec of
// its own.
nlohmann::json JobDocument(model::JobId id, const model::Job& job, const JobRecord& record);
// What recovery takes from a stored job; the rest comes from its spec.
struct StoredJob {
  model::JobId id;
  model::JobState state = model::JobState::kPending;
  std::int32_t restarts = 0;
  double attained_gpu_seconds = 0;
  std::int64_t restart_after_ms = 0;  // 0: none
  JobRecord record;                   // everything but spec, the meters and dispatched
  // An array element: its array job and index (its spec is the array's).
  model::JobId array_parent;
  std::int32_t array_index = -1;
};
Result<StoredJob> DecodeJob(std::string_view key, std::string_view value);
// The model state an API state name stands for; none for an unknown name.
std::optional<model::JobState> ModelState(std::string_view api_state);

// --- usage of forgotten jobs (key: [hour, queue, user]) ----------------------
std::pair<std::string, std::string> EncodeUsage(const UsageKey& key, const Usage& usage);
Result<std::pair<UsageKey, Usage>> DecodeUsage(std::string_view key, std::string_view value);

// --- registry credentials (key: [queue, registry]) --------------------------
// The password is sealed under `box`, bound to the record's key: a sealed
// password copied under another key does not open.
std::string RegistryCredentialKey(const std::string& queue, const std::string& registry);
std::pair<std::string, std::string> EncodeRegistryCredential(const RegistryCredential& credential, const auth::SecretBox& box);
Result<RegistryCredential> DecodeRegistryCredential(std::string_view key, std::string_view value, const auth::SecretBox& box);

// --- tokens, audit, events: their JSON is their types' own -------------------
// (auth::TokenFromJson, the audit answer, EventFromJson); these read a stored
// value and check it against its key (the token's id, the revision).
Result<auth::TokenRecord> DecodeToken(std::string_view key, std::string_view value);
Result<nlohmann::json> DecodeAudit(std::string_view key, std::string_view value);  // any object with its revision
Result<Event> DecodeEvent(std::string_view key, std::string_view value);

// --- meta --------------------------------------------------------------------
// kNextJobIdKey's value: a job id in decimal.
Result<std::int64_t> DecodeNextJobId(std::string_view value);

}  // namespace tessera::controlplane
