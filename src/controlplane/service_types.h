// What the control plane's services take and give back (control_plane.h):
// plain values, parsed already. Reading them from a request and writing the
// answer belong to the routes (src/server); no HTTP type reaches this layer.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "auth/roles.h"
#include "base/status.h"
#include "controlplane/event_log.h"
#include "controlplane/records.h"
#include "model/queue.h"
#include "spec/yaml_util.h"

namespace tessera::controlplane {

// How an operation that waits for the store (or a long poll) answers: once,
// from whichever thread finished it.
template <typename T>
using Done = std::function<void(Result<T>)>;
using Finished = std::function<void(Status)>;

// --- jobs -------------------------------------------------------------------------
// A job as the API names it: by its id ("12"), or an element of an array job
// by its index ("12[3]"; a started element's own id names it too).
struct JobRef {
  std::int64_t id = 0;
  std::optional<std::int32_t> index;
  std::string Text() const { return std::to_string(id) + (index ? "[" + std::to_string(*index) + "]" : ""); }
};

struct Submission {
  std::string text;                         // as the user sent it: a one-job submission is stored as sent
  std::vector<spec::YamlValue> documents;   // its documents, read
  std::string submit_dir;                   // absolute; tasks start there unless their spec says otherwise
};
struct AcceptedJob {
  std::int64_t id = 0;
  std::string name;
};

// The states GET /v1/jobs?state= names: one shown state, or all active or ended ones.
enum class JobStateFilter { kAny, kPending, kStarting, kRunning, kSucceeded, kFailed, kCancelled, kActive, kEnded };

struct JobQuery {
  JobStateFilter state = JobStateFilter::kAny;
  std::string queue;  // this queue and those below it
  std::string user;
  std::string name;
  std::size_t limit = 100'000;
  std::int64_t ended_after_ms = -1;  // -1: any time
  bool newest_first = false;
  // Arrays are listed as one job each; `expand` lists each one's elements
  // after it, and `array` lists only the elements of that array job.
  bool expand = false;
  std::optional<std::int64_t> array;
};

struct AccountingQuery {
  bool by_user = false;  // else by queue
  std::int64_t since_ms = 0;
};

// Where an interactive session reaches a task (`tessera exec`, `attach`,
// `port-forward`): its node and its key there.
struct TaskLocation {
  std::string node;
  api::TaskKey key;
  std::string task;  // its name
};

struct LogQuery {
  JobRef job;
  bool stderr_stream = false;
  std::string task;                     // empty: the first task
  std::optional<std::int32_t> attempt;  // none: the latest
  std::int64_t offset = 0;
};
struct LogChunk {
  std::string data;  // at most 1 MiB from the offset
  std::int64_t next_offset = 0;
  std::string job_state;
  std::int32_t attempt = 0;
};

struct EventQuery {
  std::int64_t since = 0;
  EventFilter filter;
  std::chrono::milliseconds wait{0};  // a long poll: answered when an event arrives or the wait ends
};

// --- nodes and agents --------------------------------------------------------------
struct LogAppend {
  std::string node;  // the agent that sends it
  std::int64_t job = 0, attempt = 0, task = 0, offset = 0;
  bool stderr_stream = false;
  std::string data;
};
struct AppendedLog {
  std::int64_t accepted = 0;
  std::int64_t size = 0;       // the log's size after it
  bool past_end = false;       // the offset was past the end: nothing written; send again from `size`
};

// --- queues -------------------------------------------------------------------------
struct QueueChange {
  model::QueueSpec spec;  // its path names the queue
  QueueAccess access;
};

// --- access -------------------------------------------------------------------------
// A queue's registry login to set (PUT /v1/registry-credentials/...).
struct RegistryLogin {
  std::string queue;
  std::string registry;
  std::string username;
  std::string password;
};

struct TokenRequest {
  std::string user;  // empty: the caller's
  auth::Role role = auth::Role::kUser;
  std::string description;
  std::int64_t expires_in_s = 0;  // 0: never
};

struct AuditQuery {
  std::int64_t since = 0;
  std::int64_t limit = 1000;
  std::string user;
};

// One call to a mutating route, as the audit log keeps it.
struct AuditedCall {
  std::string method;
  std::string target;
  std::string remote;
  int status = 0;  // the answer's HTTP status
};

}  // namespace tessera::controlplane
