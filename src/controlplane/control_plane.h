// The control plane's state and every operation on it: jobs, nodes, queues,
// events, the scheduling cycle on the real clock, and recovery from the store.
//
// Concurrency: one mutex guards everything here; HTTP handlers, the
// scheduling thread and the housekeeping thread each hold it briefly. A cycle
// holds it only to begin and to end: it runs on the scheduler state's copy
// (state_mirror.h), so reads and submissions never wait for one. Writes
// go to the store through a CommitQueue; an operation answers its caller only
// from the commit's callback, so an accepted job is on disk before the API
// says so.
//
// Assume, then bind: a cycle's placements take effect in SchedulerState at
// once (the next cycle sees them), but agents see a run's tasks only after its
// binding is durable (JobRecord::dispatched). A crash can therefore lose a
// decision, never start a task the recovered server does not know about.
//
// Agents are level-triggered: each node's assignment set is computed from the
// records and carries a revision; an agent long-polls for a revision newer
// than the one it has and reconciles its processes to the set.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <deque>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "api/agent_protocol.h"
#include "auth/caller.h"
#include "auth/rate_limiter.h"
#include "auth/roles.h"
#include "auth/token.h"
#include "base/clock.h"
#include "base/id_map.h"
#include "controlplane/cluster_history.h"
#include "controlplane/event_log.h"
#include "controlplane/gpu_cells.h"
#include "controlplane/record_codecs.h"
#include "controlplane/records.h"
#include "controlplane/rendezvous_ports.h"
#include "controlplane/server_metrics.h"
#include "controlplane/service_types.h"
#include "controlplane/state_mirror.h"
#include "sched/scheduler.h"
#include "store/commit_queue.h"
#include "store/state_store.h"

namespace tessera::controlplane {

// Authentication and authorization (docs/security.md).
struct AccessOptions {
  bool enabled = false;                   // every route but a few public ones needs a bearer token
  double rate_per_token = 100;            // requests per second per token; 0: no limit (node credentials: none)
  double burst_per_token = 200;
  std::int64_t max_pending_per_user = 0;  // jobs a user may have waiting; 0: no limit
  std::size_t audit_window = 100'000;     // audit records kept, in memory and in the store
  // Mutual TLS for agents: the agent's side of the API answers only a
  // connection whose client certificate names the node in the path.
  bool node_certificates = false;
};

struct ControlPlaneOptions {
  std::chrono::milliseconds heartbeat_timeout{30'000};  // a silent node is lost after this
  std::chrono::milliseconds cycle_interval{20};         // least time between two cycles
  std::chrono::milliseconds idle_cycle{1'000};          // a cycle at least this often
  std::string log_dir;                                  // task logs: <log_dir>/<job>/<task>.<attempt>.<stream>
  std::size_t event_window = 100'000;                   // events kept in memory and in the store
  // Ended jobs are forgotten (records, spec, logs) once they ended this long
  // ago, or sooner, oldest first, once more than max_ended_jobs have ended.
  std::chrono::seconds job_retention{7 * 24 * 3600};
  std::size_t max_ended_jobs = 100'000;
  sched::SchedulerConfig scheduler;
  // The SchedulerConfig document `scheduler` was read from (empty: the
  // default), as GET /v1/cluster/record gives it to `tessera whatif`.
  std::string scheduler_document;
  std::vector<model::QueueSpec> initial_queues;         // used when the store has none
  IdlePolicy idle;                                      // idle-GPU accounting and its policy
  std::chrono::milliseconds history_interval{10'000};   // one utilization sample per interval (GET /v1/cluster/history)
  AccessOptions access;
  // The time every record, event and timeout is read in; the system's unless a test gives its own.
  std::shared_ptr<const WallClock> clock = std::make_shared<SystemWallClock>();
  // Recovery sets damaged records aside (the store's quarantine collection)
  // instead of refusing to start (--quarantine-damaged).
  bool quarantine_damaged = false;
  // The key that seals secrets in the store (auth/secret_box.h), made at the
  // first secret; empty: the server keeps none.
  std::string secret_key_file;
};

// What `tessera server --check-store` reports: every damaged record as
// "collection/key: field: reason".
struct StoreCheck {
  std::size_t records = 0;
  std::vector<std::string> damaged;
};

// Figures for `tessera bench control-plane` and `top`.
struct ControlPlaneStats {
  std::int64_t cycles = 0;
  double last_cycle_ms = 0;
  std::int64_t jobs_started = 0;
  std::int64_t store_transactions = 0;
};

class ControlPlane {
 public:
  ControlPlane(ControlPlaneOptions options, store::StateStore& store, sched::Scheduler scheduler);
  ~ControlPlane();
  ControlPlane(const ControlPlane&) = delete;
  ControlPlane& operator=(const ControlPlane&) = delete;

  // Loads queues, nodes, jobs and events from the store. Nodes start with a
  // fresh heartbeat deadline so their agents have a full timeout to return.
  // A damaged record stops it with "collection/key: field: reason", unless
  // options.quarantine_damaged sets such records aside.
  Status Recover();
  // Reads every record as Recover would and reports the damaged ones; writes
  // nothing. Call it on a control plane that is not started.
  Result<StoreCheck> CheckStore();
  // Starts the scheduling and housekeeping threads.
  void Start();
  void Stop();

  // The services. Each takes its caller and parsed values and answers with a
  // Result (service_types.h); those that change the state answer through a
  // completion once the change is durable. The routes (src/server) read
  // requests into these values and turn the answers into HTTP.

  // --- jobs (jobs.cc) --------------------------------------------------------------
  void SubmitJobs(const auth::Caller& caller, Submission submission, Done<std::vector<AcceptedJob>> done);
  Result<nlohmann::json> ListJobs(const auth::Caller& caller, const JobQuery& query);
  Result<nlohmann::json> GetJob(const auth::Caller& caller, const JobRef& ref);  // with its spec and latest events
  // GPU-hours of the jobs that ran since then, by queue or by user (an array
  // is one job, its elements' time summed).
  nlohmann::json Accounting(const auth::Caller& caller, const AccountingQuery& query);
  // Cancels a job; an array job with every element it has not finished; one
  // element of an array alone, started or not.
  void CancelJob(const auth::Caller& caller, const JobRef& ref, Done<nlohmann::json> done);
  Result<LogChunk> ReadLogs(const auth::Caller& caller, const LogQuery& query);
  // The job's current run wrote a checkpoint now: what the run's tasks say by
  // touching TESSERA_CHECKPOINT_FILE, said through the API by whoever may
  // cancel the job (a training framework's callback, an operator's script).
  // Preemption, drains and failures then count the work lost from here.
  void ReportCheckpoint(const auth::Caller& caller, const JobRef& ref, Done<nlohmann::json> done);
  // The running task a session may reach, for a caller allowed to read the
  // job's logs; `task` empty: the first. Refused while the task is not running.
  Result<TaskLocation> LocateTask(const auth::Caller& caller, const JobRef& ref, const std::string& task);
  void WatchEvents(const auth::Caller& caller, EventQuery query, Done<nlohmann::json> done);

  // --- nodes and agents (nodes.cc) -------------------------------------------------
  // `inventory.address` is where the agent's peers reach it (the routes fill
  // in the connection's address when the agent names none).
  void RegisterNode(const auth::Caller& caller, api::NodeInventory inventory, Done<nlohmann::json> done);
  void ReportStatus(const std::string& node, api::StatusReport report, Done<nlohmann::json> done);
  // The node's assignment set (api::AssignmentSet as JSON text) once its
  // revision differs from `after` (-1: at once), or when `wait` ends.
  void WaitAssignments(const std::string& node, std::int64_t after, std::chrono::milliseconds wait, Done<std::string> done);
  Result<AppendedLog> AppendLogs(const LogAppend& chunk);
  nlohmann::json ListNodes(bool with_gpus);
  Result<nlohmann::json> GetNode(const std::string& name);
  void SetCordon(const std::string& node, bool cordoned, Done<nlohmann::json> done);
  void DrainNode(const std::string& node, Done<nlohmann::json> done);

  // --- queues (queues.cc) ----------------------------------------------------------
  nlohmann::json ListQueues();
  // Creates or updates a queue; answers whether it was created.
  void PutQueue(const auth::Caller& caller, QueueChange change, Done<bool> done);
  void DeleteQueue(const auth::Caller& caller, const std::string& path, Finished done);

  // --- queues' registry logins (registry_credentials.cc) ----------------------------
  // Sets a queue's login to a registry, for a queue admin; answers whether it is new.
  void PutRegistryCredential(const auth::Caller& caller, RegistryLogin login, Done<bool> done);
  // The logins of the queues the caller administers, without their passwords.
  nlohmann::json ListRegistryCredentials(const auth::Caller& caller);
  void DeleteRegistryCredential(const auth::Caller& caller, const std::string& queue, const std::string& registry, Finished done);

  // --- access (access.cc) ----------------------------------------------------------
  // The caller a request's credentials name: its "Authorization" header, or
  // with access off the user it claims (X-Tessera-User), as a cluster-admin.
  // No header: an unauthenticated caller, enough for public routes.
  // Unauthenticated when the token is unknown, revoked or expired;
  // ResourceExhausted when it is over its rate.
  Result<auth::Caller> Authenticate(const std::string& authorization, const std::string& claimed_user);
  // The role of a valid token (with access off: cluster-admin), without
  // charging its rate: how the server tells privileged connections.
  std::optional<auth::Role> RoleOf(const std::string& authorization) const;
  bool access_enabled() const { return options_.access.enabled; }
  bool node_certificates_required() const { return options_.access.node_certificates; }
  void CreateToken(const auth::Caller& caller, TokenRequest request, Done<nlohmann::json> done);
  nlohmann::json ListTokens(const auth::Caller& caller);
  void RevokeToken(const auth::Caller& caller, const std::string& id, Done<nlohmann::json> done);
  nlohmann::json ListAudit(const AuditQuery& query);
  // Records a mutating call and its answer in the audit log.
  void Audit(const auth::Caller& caller, const AuditedCall& call);
  // A token made by the server itself (the first admin's, a local agent's
  // join token), durable when this returns: its text.
  Result<std::string> IssueToken(const std::string& user, auth::Role role, const std::string& description);
  // Whether `text` is a token this server accepts now (a kept bootstrap file).
  bool TokenValid(const std::string& text) const;

  // --- read-only views of the cluster (cluster_view.cc, metrics.cc) ---------------
  nlohmann::json ClusterSummary();
  nlohmann::json GpuMap();  // every GPU's cell, for the dashboard's heatmap
  nlohmann::json History(std::int64_t since_ms);
  // What `tessera whatif` replays (GET /v1/cluster/record, cluster_record.cc):
  // the nodes as their agents registered them, the queues as a QueueTree
  // document, the scheduler's configuration document, and every ended job
  // still kept (retention), with its spec and its real times.
  nlohmann::json ClusterRecord();
  std::string Metrics();  // the Prometheus text exposition
  ControlPlaneStats stats() const;
  // The leader's epoch, sent with every assignment set; set before Start.
  void SetEpoch(std::int64_t epoch);

 private:
  struct NodeWaiter {
    std::int64_t after = 0;
    std::chrono::steady_clock::time_point deadline;
    Done<std::string> done;
  };
  struct EventWaiter {
    std::int64_t since = 0;
    EventFilter filter;
    std::size_t limit = 0;
    std::chrono::steady_clock::time_point deadline;
    Done<nlohmann::json> done;
  };

  // All private methods expect mu_ to be held, but this one.
  // The record of the bearer token `authorization` presents, when valid.
  Result<auth::TokenRecord> VerifyToken(const std::string& authorization) const;

  // Recovery (recovery.cc): one loader per collection.
  enum class RecoveryMode { kStop, kQuarantine, kReport };
  class DamagedRecords;
  Status Load(DamagedRecords& damaged);
  Status LoadMeta(DamagedRecords& damaged, bool* seeded, std::int64_t* next_id);
  Status LoadQueues(DamagedRecords& damaged, bool seeded);
  Status LoadNodes(DamagedRecords& damaged);
  Status LoadJobs(DamagedRecords& damaged, std::int64_t next_id);
  // A decoded job record with its parsed spec back into the state; refused
  // when its run does not fit this cluster.
  Status RestoreJob(StoredJob stored, model::Job job, const std::string& spec);
  // An array element's record, made again from its array's restored job.
  Status RestoreElement(StoredJob stored);
  Status LoadUsage(DamagedRecords& damaged);
  Status LoadTokens(DamagedRecords& damaged);
  Status LoadAudit(DamagedRecords& damaged);
  Status LoadEvents(DamagedRecords& damaged);
  Status LoadRegistryCredentials(DamagedRecords& damaged);
  std::int64_t NowMs() const;
  Time NowSeconds() const { return NowMs() / 1000; }
  void EnsureState();  // rebuilds the scheduler's state after nodes or queues changed
  std::string QueuePath(model::QueueId id) const;
  // The record of the job an API path names, if the server knows it.
  JobRecord* FindRecord(std::int64_t id);
  Status NoJob(std::int64_t id) const;  // NotFound: never known, or forgotten

  // Arrays (arrays.cc; model/job_array.h). What a JobRef names: a job (a
  // started element included), or an element that has not started, which
  // is no job yet: `exists` false, its array and position set.
  struct NamedJob {
    model::JobId id;
    bool exists = true;
    model::JobId parent;
    std::int32_t position = -1;
  };
  Result<NamedJob> Resolve(const JobRef& ref);
  // Resolve, for a caller who must manage the job (an element: its array):
  // "bob may not <action> job 12: it is alice's, in queue team-a" otherwise.
  Result<NamedJob> ResolveManaged(const auth::Caller& caller, const JobRef& ref, std::string_view action);
  // An unstarted element as the API shows it.
  nlohmann::json UnstartedElementJson(const NamedJob& element) const;
  // Cancels an element that has not started: it comes into being cancelled.
  void CancelUnstarted(const NamedJob& element, const std::string& message);
  // Elements the cycle spawned get their records, beside their array's.
  void AddElementRecords(const std::vector<std::pair<model::JobId, model::JobId>>& spawned);
  // An element changed state: the array's own state may have followed, and
  // when that ended the array, it ends here too (event, record, retention).
  void ArrayFollowed(model::JobId parent, model::JobState before);
  // The array job's elements that exist, in index order.
  std::vector<model::JobId> ElementsOf(model::JobId parent) const;
  // Forgets ended jobs past their retention (retention.cc).
  void ForgetEndedJobs(std::int64_t now_ms);
  void AddForgottenUsage(const UsageKey& key, const Usage& usage);  // ... and its write
  nlohmann::json JobJson(model::JobId id, bool with_spec) const;
  // A node with each GPU's state, or (with_gpus false) the light form: a GPU count.
  nlohmann::json NodeJson(const NodeRecord& node, bool with_gpus = true) const;
  GpuContext ContextOf(const NodeRecord& node, std::int32_t local_index) const;
  ClusterSample SampleCluster(std::int64_t now_ms) const;
  void Emit(std::string type, std::int64_t job, std::string node, std::string message);
  // Access checks on one object (access.cc); all true while access is off.
  bool QueueAdmin(const auth::Caller& caller, const std::string& queue) const;  // admin of it or an ancestor
  bool QueueMember(const auth::Caller& caller, const std::string& queue) const; // may submit there
  // Whether the container rule `rule` (model::QueueSpec) is set on queue `path` or a queue above it.
  bool QueueRule(const std::string& path, bool model::QueueSpec::*rule) const;
  // The login a task of `queue` pulls `image` (canonical) with: its queue's
  // for the image's registry, or the nearest queue's above it.
  std::optional<api::ContainerAssignment::Login> RegistryLoginFor(const std::string& queue, const std::string& image) const;
  void ForgetRegistryCredentials(const std::string& queue);  // a deleted queue's, gathered into writes_
  // The box that seals secrets, opened (or, with `create`, made) at first use.
  Result<const auth::SecretBox*> Secrets(bool create);
  // Work of `user` in `queue`: the owner, the queue's admins, cluster admins
  // (and, to see, viewers).
  bool ManagesWorkOf(const auth::Caller& caller, const std::string& user, const std::string& queue) const;
  bool SeesWorkOf(const auth::Caller& caller, const std::string& user, const std::string& queue) const;
  bool SeesJob(const auth::Caller& caller, model::JobId job) const;             // its record, events, accounting
  bool ManagesJob(const auth::Caller& caller, model::JobId job) const;          // cancel, logs
  // A node credential for `node` (older ones revoked), gathered into writes_.
  std::string IssueNodeCredential(const std::string& node, const std::string& by);
  void PersistToken(const auth::TokenRecord& record);
  void PersistJob(model::JobId id);
  void PersistNode(const NodeRecord& node);
  void PersistQueues();
  // Submits the writes gathered so far; `done` runs under mu_ once they are
  // durable. A write that fails stops the server (see the definition).
  void Commit(std::function<void()> done);
  void RequestCycle();

  // Runs and their tasks.
  void Attach(model::JobId id);  // the run's tasks join their nodes' assignment sets
  void Detach(model::JobId id);  // ... and leave them, and its rendezvous port is free again
  void Touch(const std::string& node);  // the node's set changed: answer its waiter
  // The node's assignment set as JSON (api::AssignmentSet), from cached tasks.
  std::string AssignmentsFor(const NodeRecord& node);
  void EndRun(model::JobId id, model::JobState end, const std::string& message);
  void RetireRun(JobRecord& record);  // the run's tasks become previous_tasks; nothing runs
  void FailRun(model::JobId id, const std::string& message);     // counts against maxRestarts
  void RequeueRun(model::JobId id, const std::string& message);  // infrastructure: does not count
  // The run stopped making progress (spec.hangDetection): reported once, and
  // failed (counting against maxRestarts) when its action is restart.
  void DeclareHung(model::JobId id, const std::string& why);
  // A task of the current run reported a checkpoint written at `at_ms`
  // (TESSERA_CHECKPOINT_FILE): what preempting the run would lose starts there.
  void RecordCheckpoint(model::JobId id, std::int64_t at_ms);
  // The current run is being stopped before it ended: its lost work is
  // counted under `reason` and added to the job's. Before the run retires.
  void AccountLostWork(model::JobId id, prometheus::Counter& reason);
  void ApplyTaskReport(const std::string& node, const api::TaskReport& report);
  // Idle-GPU accounting of the node's running tasks from its telemetry, and the idle policy.
  void AccountGpuUsage(const NodeRecord& node);  // from node.gpu_utilization, just updated by a report
  void MarkLost(NodeRecord& node);
  // The agent's GPU faults as events, and its out-of-service GPUs applied: a
  // GPU newly out leaves the scheduler's capacity and the runs on it are
  // requeued; one back in service returns (gpu_health.cc).
  void ApplyGpuHealth(NodeRecord& node, const api::StatusReport& report);

  void SchedulingLoop();
  // A job's changed reason to wait, from a cycle.
  struct WaitChange {
    model::JobId job;
    std::string message;
    std::string reason;
  };
  // Runs a cycle on the state's copy, without mu_ (scheduling thread only);
  // fills `decisions` and returns the waits that changed.
  std::vector<WaitChange> RunCycle(StateMirror::CatchUp catch_up, CycleDecisions& decisions);
  // Under mu_: the cycle's decisions into the live state and the records.
  void ApplyCycle(const CycleDecisions& decisions, const std::vector<WaitChange>& waits, std::chrono::steady_clock::time_point start);
  void HousekeepingLoop();
  void ExpireWaiters(std::chrono::steady_clock::time_point now);
  void AnswerEventWaiters();

  ControlPlaneOptions options_;
  store::StateStore& store_;
  std::unique_ptr<store::CommitQueue> commits_;
  std::uint64_t commits_submitted_ = 0;            // under mu_
  // The last commit whose callback has run: every caller it answered has its answer.
  std::atomic<std::uint64_t> commits_done_{0};
  sched::Scheduler scheduler_;

  mutable std::mutex mu_;
  // The scheduler's state: read through ->, changed through its methods; the
  // cycle runs on its copy (state_mirror.h).
  StateMirror state_;
  bool rebuild_needed_ = true;
  IdMap<model::JobId, JobRecord> records_;  // the same jobs as the JobTable
  std::deque<model::JobId> ended_;          // ended jobs, in the order they ended
  std::map<UsageKey, Usage> forgotten_usage_;
  std::map<std::string, NodeRecord> nodes_;
  std::vector<std::string> node_order_;     // registration order: the cluster's node order
  std::map<std::string, std::set<std::int64_t>> node_jobs_;  // dispatched runs on each node
  std::vector<model::QueueSpec> queue_specs_;
  EventLog events_;
  std::vector<store::Mutation> writes_;     // gathered by Persist*, submitted by Commit
  std::map<std::string, NodeWaiter> node_waiters_;
  std::vector<EventWaiter> event_waiters_;
  ControlPlaneStats stats_;
  std::int64_t epoch_ = 0;
  std::string step_key_;  // what each run's TESSERA_STEP_SECRET is derived from (kept in the store's meta)
  RendezvousPorts ports_;  // the live runs' MASTER_PORTs, by their rank 0's node
  std::map<std::string, QueueAccess> queue_access_;  // by queue path
  std::map<std::pair<std::string, std::string>, RegistryCredential> registry_credentials_;  // by queue path and registry
  std::optional<auth::SecretBox> secrets_;

  // Tokens are read on every request: a lock of their own, not mu_.
  mutable std::shared_mutex tokens_mu_;
  std::map<std::string, auth::TokenRecord> tokens_;  // by id
  auth::RateLimiter limiter_{options_.access.rate_per_token, options_.access.burst_per_token};
  // The audit log: appended from any thread, after the answer (a lock of its own).
  std::mutex audit_mu_;
  std::deque<nlohmann::json> audit_;
  std::int64_t audit_revision_ = 0;
  std::chrono::steady_clock::time_point accounting_saved_;  // running jobs' accounting last persisted
  std::chrono::steady_clock::time_point forgotten_last_;    // the last pass that forgot by age
  bool forgetting_unfinished_ = false;  // the last pass stopped at an end not yet durable, or at kMostPerPass
  std::unique_ptr<ServerMetrics> metrics_ = std::make_unique<ServerMetrics>();
  ClusterHistory history_{options_.history_interval};

  // The scheduling thread's own: each waiting job's last explanation.
  std::unordered_map<std::int32_t, std::string> explained_;
  std::condition_variable wake_scheduler_;
  std::condition_variable wake_housekeeping_;
  bool cycle_requested_ = false;
  bool stopping_ = false;
  std::thread scheduling_thread_;
  std::thread housekeeping_thread_;
};

}  // namespace tessera::controlplane
