// `tessera agent`: the node side of the control plane.
//
// It registers the node's inventory (GPUs from NVML, or a fake where no
// driver is present), then loops:
//   * a long poll receives the node's assignment set whenever it changes;
//   * reconciliation starts the assigned tasks that are not running and stops
//     (SIGTERM, grace, SIGKILL) the running ones that are no longer assigned;
//   * a status report, sent on every change and at least once per heartbeat
//     interval, lists every assigned task as running or exited;
//   * task logs are shipped to the server, which serves `tessera logs`;
//   * GPU telemetry is sampled every heartbeat, sent with the status report
//     (the server's idle-GPU accounting) and served on /metrics;
//   * GPU faults are judged (node/health/gpu_health.h): a GPU out of service
//     is listed in every report until a health check brings it back, and the
//     server requeues the runs on it.
//
// Exactly-once start: every start is written to a journal before the process
// is launched. A task of the same (job, attempt, task) is never started a
// second time.
//
// Tasks outlive the agent: each runs under its own tessera-supervise
// (node/launch/supervisor_protocol.h), which waits for it and records its exit
// status in the task's state directory. An agent that crashes, is killed or
// is upgraded leaves its tasks running; the next one re-adopts them from the
// journal and their state directories, and reports the exits that happened
// while it was down. Only what cannot be adopted -- an interactive task, whose
// terminal died with the agent, or a task whose supervisor was killed -- is
// stopped and reported lost, and the server requeues the run. A server
// restart does not disturb running tasks either: the agent keeps polling and
// reconciles against the recovered assignment set.
//
// A task with an image (docs/containers.md) is reported "preparing" while its
// image is pulled on a thread of its own, then runs as `runc run` in place of
// its command (node/container/container_tasks.h): supervised, adopted and
// reaped like any other.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "net/tls.h"
#include "node/gpu/gpu_provider.h"
#include "node/health/gpu_health.h"
#include "node/sharing/shared_gpus.h"

namespace tessera::node {

struct AgentOptions {
  std::string server = "http://127.0.0.1:7070";  // or every replica, comma-separated
  // For an https server: the CA that signed its certificate, and this node's
  // own certificate and key for mutual TLS (its common name is the node's name).
  net::TlsFiles tls;
  // A node-join token (docs/security.md): the first registration trades it
  // for this node's own credential, kept in <data_dir>/credential.
  std::string join_token;
  std::string name;        // default: the host name
  std::string address;     // advertised to peers for MASTER_ADDR; empty: as the server sees us
  std::string leaf = "leaf-0";
  std::string spine = "spine-0";
  // The multi-node NVLink domain (an NVL72 rack) of this node's GPUs; empty:
  // the one NVML's fabric information names, if any.
  std::string nvlink_group;
  std::string data_dir = "tessera-agent";  // journal, task logs, checkpoints, work dirs
  // The tasks' state directories (their supervisors' pid and exit files),
  // which must outlive the agent, not the node; empty: under /run, else
  // /dev/shm, whichever is a tmpfs (else <data_dir>/tasks). On a tmpfs a
  // burst of starts and ends costs the disk's inode allocator nothing.
  std::string state_dir;
  // Where TESSERA_CHECKPOINT_DIR points, one directory per job below it; empty:
  // <data_dir>/checkpoints. Shared storage here lets a run restarted on another
  // node resume from its checkpoint.
  std::string checkpoint_dir;
  std::string fake_gpus;   // a fake GPU file; empty: NVML, or 8 fake GPUs when NVML is absent
  bool force_fake = false; // fake GPUs even when NVML is present (tests, `tessera up --fake`)
  FakeGpuSpec fake_spec;   // the fake used when no file is given
  std::int64_t cpu_milli = 0;  // 0: this machine's CPUs
  std::int64_t memory = 0;     // 0: this machine's memory
  std::chrono::milliseconds heartbeat{1'000};
  std::chrono::milliseconds grace{10'000};  // SIGTERM -> SIGKILL
  // The tasks' supervisor; empty: tessera-supervise beside this program. When
  // it is missing, tasks run without one and cannot outlive the agent.
  std::string supervisor;
  // Whether a stopping agent stops its tasks too (`tessera up`: the whole
  // cluster goes); otherwise they keep running for the next agent to adopt.
  bool stop_tasks_on_exit = false;
  bool cgroups = true;
  SharingOptions sharing;  // its data_dir is the agent's
  std::string metrics_listen;  // ADDRESS:PORT of /metrics (port 0: any); empty: none
  GpuHealthOptions gpu_health; // which faults take a GPU out of service, and its health checks
  // Container tasks (docs/containers.md): registries pulled from without TLS
  // verification ("host[:port]"), and the image cache's size limit (0: none).
  std::vector<std::string> insecure_registries;
  std::int64_t image_cache_bytes = 0;
  std::string runc = "runc";  // searched on PATH without a '/'
};

class Agent {
 public:
  // Discovers GPUs and cgroups; fails with a message naming what is missing.
  static Result<std::unique_ptr<Agent>> Create(AgentOptions options);
  ~Agent();
  // Runs until `stop` is set; then stops its tasks (grace period included)
  // with stop_tasks_on_exit, else leaves the supervised ones running.
  void Run(const std::atomic<bool>& stop);
  // One line per finding for the log: GPU provider, cgroups, journal.
  std::string Describe() const;

 private:
  class Impl;
  explicit Agent(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::node
