// The long-running commands: `tessera server`, `tessera agent`, and
// `tessera up`, which runs a server and local agents in one process: the
// embedded default (SQLite state, fake GPUs where the machine has none).
#include <signal.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include <unistd.h>

#include "auth/certificates.h"
#include "auth/roles.h"
#include "base/quantity.h"
#include "cli/api_client.h"
#include "cli/commands.h"
#include "server/server.h"
#include "node/agent.h"
#include "node/gpu/gpu_provider.h"
#include "spec/queue_yaml.h"
#include "spec/scheduler_yaml.h"
#include "spec/yaml_util.h"

namespace tessera::cli {
namespace {

std::atomic<bool> stop_requested{false};

void StopOnSignals() {
  struct sigaction action {};
  action.sa_handler = [](int) { stop_requested = true; };
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

void WaitForStop() {
  while (!stop_requested) std::this_thread::sleep_for(std::chrono::milliseconds(100));
}

struct ServerArgs {
  server::ServerOptions server;
  std::string listen = "127.0.0.1:7070";
  std::string queues_file;
  std::string scheduler_file;
  double heartbeat_timeout_s = 30;
  int lease_ttl_s = 2;
  bool no_auth = false;
  bool plain_http = false;
  std::string idle_window = "5m", idle_warn_after, idle_reclaim_after;
  std::string job_retention = "7d";
  bool check_store = false;
  int handshake_timeout_s = 10, header_timeout_s = 10, idle_timeout_s = 120;
};

// The default queue takes every GPU; a queues file replaces it.
std::vector<model::QueueSpec> DefaultQueues() { return {{"default", model::kUnlimited / 2, model::kUnlimited, 1.0}}; }

// What one client may hold of the listener (docs/security.md, "Connection limits").
void AddConnectionFlags(CLI::App* cmd, ServerArgs* args) {
  const char* group = "Connection limits";
  net::ConnectionLimits& limits = args->server.connections;
  cmd->add_option("--handshake-timeout", args->handshake_timeout_s, "Seconds a TLS handshake may take")
      ->group(group)->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--header-timeout", args->header_timeout_s, "Seconds from a request's first byte to the end of its headers")
      ->group(group)->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--idle-timeout", args->idle_timeout_s, "Seconds a keep-alive connection may idle between requests")
      ->group(group)->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--min-body-rate", args->server.timeouts.min_body_rate,
                  "Bytes per second a request body must keep up, after a grace of --header-timeout")
      ->group(group)->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--max-connections", limits.max_connections,
                  "Connections the API holds at once (default: the descriptor limit less 256, at most 32768)")->group(group);
  cmd->add_option("--reserved-connections", limits.reserved,
                  "Of those, kept for agents and cluster administrators (default: an eighth)")->group(group);
  cmd->add_option("--max-connections-per-address", limits.max_per_address,
                  "Connections one address may hold before it proves itself an agent or an administrator (default: an eighth)")
      ->group(group);
  cmd->add_option("--max-requests-in-flight", args->server.load.max_in_flight,
                  "Requests of other callers served at once; past it they are answered 503 with Retry-After")
      ->group(group)->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--max-request-memory", args->server.load.body_budget,
                  "Bytes of other callers' request bodies held at once; past it they are answered 503 with Retry-After")
      ->group(group)->capture_default_str()->check(CLI::PositiveNumber);
}

void AddServerFlags(CLI::App* cmd, ServerArgs* args) {
  cmd->add_option("--listen", args->listen, "Address and port of the API")->capture_default_str();
  cmd->add_option("--data-dir", args->server.data_dir, "State (state.db) and task logs")->capture_default_str();
  cmd->add_option("--store", args->server.store,
                  "Where the state lives: sqlite (DATA_DIR/state.db) or etcd://HOST:PORT[,HOST:PORT...][/PREFIX]; with etcd, "
                  "replicas elect a leader (docs/fault-tolerance.md)")
      ->capture_default_str();
  cmd->add_option("--advertise", args->server.advertise,
                  "With etcd: the URL clients reach this replica at, which followers redirect to (default http://LISTEN)");
  cmd->add_option("--lease-ttl", args->lease_ttl_s, "With etcd: seconds a leader that stopped renewing its lease keeps it")
      ->capture_default_str()
      ->check(CLI::Range(1, 60));
  cmd->add_option("--threads", args->server.threads, "HTTP threads")->capture_default_str();
  cmd->add_option("--tls-cert", args->server.tls.cert_file,
                  "The API's TLS certificate chain (PEM); without it the server makes its own CA and certificate in DATA_DIR/tls");
  cmd->add_option("--tls-key", args->server.tls.key_file, "The private key of --tls-cert (PEM)");
  cmd->add_option("--client-ca", args->server.tls.ca_file,
                  "With --tls-cert: the CA that signs agents' certificates; agents must then prove their node by one (mutual TLS)");
  cmd->add_flag("--require-client-cert", args->server.require_client_cert,
                "Refuse, at the handshake, every connection without a certificate the client CA signed");
  cmd->add_flag("--plain-http", args->plain_http, "Serve plain HTTP instead of TLS (loopback addresses only)");
  cmd->add_flag("--auth", args->server.plane.access.enabled,
                "Require a bearer token on every route but /v1/healthz and /v1/leader (docs/security.md)");
  cmd->add_flag("--no-auth", args->no_auth,
                "Serve a non-loopback address without tokens, a trusted network only (tessera up: no access control at all)");
  cmd->add_option("--admin-token-file", args->server.admin_token_file,
                  "With --auth: where the first cluster-admin token is written (mode 0600) when the file holds none the server accepts");
  cmd->add_option("--rate-limit", args->server.plane.access.rate_per_token,
                  "With --auth: requests per second per token (bursts of twice that); 0: no limit")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--max-pending-per-user", args->server.plane.access.max_pending_per_user,
                  "Jobs one user may have waiting (429 past it); 0: no limit")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  AddConnectionFlags(cmd, args);
  cmd->add_option("--queues", args->queues_file, "A QueueTree file for a new cluster (default: one queue, 'default')");
  cmd->add_option("--scheduler-config", args->scheduler_file, "A SchedulerConfig file (docs/scheduling.md)");
  cmd->add_option("--heartbeat-timeout", args->heartbeat_timeout_s, "Seconds of agent silence before its node is lost")->capture_default_str();
  cmd->add_option("--idle-threshold", args->server.plane.idle.threshold_percent,
                  "GPU utilization (percent) under which an allocated GPU counts as idle")->capture_default_str();
  cmd->add_option("--idle-window", args->idle_window, "How long a GPU must stay under the threshold to count as idle")
      ->capture_default_str();
  cmd->add_option("--idle-warn-after", args->idle_warn_after, "Emit a JobIdle event once a job's GPUs have been idle this long");
  cmd->add_option("--idle-reclaim-after", args->idle_reclaim_after,
                  "Cancel a job whose GPUs have been idle this long (the idle policy; off by default)");
  cmd->add_option("--job-retention", args->job_retention,
                  "How long the server keeps an ended job (record, spec, logs) before forgetting it; its GPU time stays in accounting")
      ->capture_default_str();
  cmd->add_option("--max-ended-jobs", args->server.plane.max_ended_jobs,
                  "The most ended jobs kept; beyond it the oldest are forgotten before their retention")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--secret-key-file", args->server.plane.secret_key_file,
                  "The key that seals secrets in the store, made when missing (default: DATA_DIR/secret.key; every replica of one etcd store needs the same)");
  cmd->add_flag("--quarantine-damaged", args->server.plane.quarantine_damaged,
                "Start even when the store holds damaged records: each is moved to the quarantine collection and logged "
                "(default: refuse to start, naming the record)");
}

bool IsLoopback(const std::string& address) { return address.starts_with("127.") || address == "::1" || address == "localhost"; }

// TLS unless asked for plain HTTP on loopback. Without a certificate of the
// operator's, the server is its own CA (DATA_DIR/tls) and requires agents
// to hold certificates from it (`tessera certs issue`).
void ChooseTransport(ServerArgs& args) {
  net::TlsFiles& tls = args.server.tls;
  const std::string& address = args.server.address;
  if (args.plain_http) {
    if (!tls.cert_file.empty()) Fail(kExitBadInput, "--plain-http and --tls-cert exclude each other");
    if (!IsLoopback(address)) {
      Fail(kExitBadInput, "--plain-http serves loopback addresses only: tokens and jobs would cross the network in the clear "
                          "(drop it, and the server makes its own CA and certificate)");
    }
    return;
  }
  if (tls.cert_file.empty() != tls.key_file.empty()) Fail(kExitBadInput, "--tls-cert and --tls-key go together");
  if (!tls.cert_file.empty()) return;
  if (!tls.ca_file.empty()) Fail(kExitBadInput, "--client-ca needs --tls-cert and --tls-key");
  std::vector<std::string> hosts = {"localhost", "127.0.0.1", "::1"};
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) == 0 && *name != '\0') hosts.push_back(name);
  if (address != "0.0.0.0" && address != "::" && !IsLoopback(address)) hosts.push_back(address);
  const std::string dir = (std::filesystem::path(args.server.data_dir) / "tls").string();
  auth::ServerCertificates made = OrFail(auth::EnsureServerCertificates(dir, hosts), kExitFailure);
  tls = {made.ca_cert, made.cert, made.key};
  std::cerr << "tessera server: TLS with its own CA: clients trust " << made.ca_cert << "; agents need certificates from it "
            << "(tessera certs issue --ca-dir " << dir << " --name NODE)" << std::endl;
}

std::unique_ptr<server::Server> StartServer(ServerArgs& args) {
  const std::size_t colon = args.listen.rfind(':');
  if (colon == std::string::npos) {
    std::fprintf(stderr, "tessera: --listen: '%s' is not ADDRESS:PORT\n", args.listen.c_str());
    throw CLI::RuntimeError(kExitBadInput);
  }
  args.server.address = args.listen.substr(0, colon);
  args.server.port = static_cast<std::uint16_t>(std::stoi(args.listen.substr(colon + 1)));
  args.server.plane.initial_queues = DefaultQueues();
  if (!args.queues_file.empty()) args.server.plane.initial_queues = OrFail(spec::ParseQueueYaml(ReadInputOrFail(args.queues_file), args.queues_file));
  if (!args.scheduler_file.empty()) {
    // kind: SchedulerConfig, with the fields of a scenario's `scheduler:` in spec.
    args.server.plane.scheduler_document = ReadInputOrFail(args.scheduler_file);
    args.server.plane.scheduler = OrFail(spec::ParseSchedulerConfigDocument(args.server.plane.scheduler_document, args.scheduler_file));
  }
  args.server.lease_ttl = std::chrono::seconds(args.lease_ttl_s);
  args.server.timeouts.handshake = std::chrono::seconds(args.handshake_timeout_s);
  args.server.timeouts.headers = std::chrono::seconds(args.header_timeout_s);
  args.server.timeouts.idle = std::chrono::seconds(args.idle_timeout_s);
  args.server.plane.access.burst_per_token = 2 * args.server.plane.access.rate_per_token;
  if (!IsLoopback(args.server.address) && !args.server.plane.access.enabled && !args.no_auth) {
    std::fprintf(stderr,
                 "tessera: --listen %s is reachable from other machines: start with --auth (tokens, docs/security.md), "
                 "or with --no-auth on a network you trust\n",
                 args.listen.c_str());
    throw CLI::RuntimeError(kExitBadInput);
  }
  ChooseTransport(args);
  args.server.plane.heartbeat_timeout = std::chrono::milliseconds(static_cast<std::int64_t>(args.heartbeat_timeout_s * 1000));
  const auto duration_ms = [](const char* flag, const std::string& text) -> std::int64_t {
    if (text.empty()) return 0;
    Result<Seconds> s = ParseDuration(text);
    if (!s.ok()) {
      std::fprintf(stderr, "tessera: %s: %s\n", flag, s.status().message().c_str());
      throw CLI::RuntimeError(kExitBadInput);
    }
    return *s * 1000;
  };
  args.server.plane.idle.window_ms = duration_ms("--idle-window", args.idle_window);
  args.server.plane.job_retention = std::chrono::seconds(duration_ms("--job-retention", args.job_retention) / 1000);
  args.server.plane.idle.warn_after_ms = duration_ms("--idle-warn-after", args.idle_warn_after);
  args.server.plane.idle.reclaim_after_ms = duration_ms("--idle-reclaim-after", args.idle_reclaim_after);
  auto server = OrFail(server::Server::Start(args.server), kExitFailure);
  std::cerr << "tessera server: listening on " << server->url() << ", state in "
            << server->store_description() << std::endl;
  return server;
}

// `tessera server --check-store`: every damaged record of the store, one per
// line; exit 0 when there is none, 1 when there are.
void CheckStore(const ServerArgs& args) {
  const server::StoreCheck check = OrFail(server::Server::CheckStore(args.server), kExitFailure);
  for (const std::string& line : check.damaged) std::cout << line << "\n";
  std::cout << check.records << " records read, " << check.damaged.size() << " damaged" << std::endl;
  if (!check.damaged.empty()) throw CLI::RuntimeError(kExitFailure);
}

struct AgentArgs {
  node::AgentOptions agent;
  std::string join_token_file;
  double heartbeat_s = 1;
  double grace_s = 10;
  bool no_cgroups = false;
  double max_burst_s = 300;
  std::string image_cache_size;
};

// What a node needs to run container tasks; `tessera up` takes them for its agents too.
void AddContainerFlags(CLI::App* cmd, AgentArgs* args) {
  cmd->add_option("--insecure-registry", args->agent.insecure_registries,
                  "A registry (HOST[:PORT]) pulled from over plain HTTP or without verifying its certificate; repeatable");
  cmd->add_option("--image-cache-size", args->image_cache_size,
                  "Unused images are collected, least recently used first, beyond this size (e.g. 200Gi; default: no limit)");
  cmd->add_option("--runc", args->agent.runc, "The OCI runtime container tasks run with")->capture_default_str();
}

void AddAgentFlags(CLI::App* cmd, AgentArgs* args) {
  cmd->add_option("--server", args->agent.server, "The Tessera server, or every replica of it, comma-separated")->capture_default_str();
  cmd->add_option("--name", args->agent.name, "Node name (default: the host name)");
  cmd->add_option("--ca-file", args->agent.tls.ca_file, "For an https server: the CA that signed its certificate (default: the system's)");
  cmd->add_option("--cert-file", args->agent.tls.cert_file, "This node's certificate for mutual TLS (its common name is the node's name)");
  cmd->add_option("--key-file", args->agent.tls.key_file, "The private key of --cert-file");
  cmd->add_option("--join-token-file", args->join_token_file,
                  "A file holding a node-join token (env TESSERA_JOIN_TOKEN holds the token itself); needed once, to get the node's credential");
  cmd->add_option("--address", args->agent.address, "Address other nodes reach this one at (MASTER_ADDR)");
  cmd->add_option("--leaf", args->agent.leaf, "Leaf switch (rack) of this node")->capture_default_str();
  cmd->add_option("--spine", args->agent.spine, "Spine of the leaf")->capture_default_str();
  cmd->add_option("--nvlink-group", args->agent.nvlink_group,
                  "The multi-node NVLink domain (an NVL72 rack) of this node's GPUs; nodes naming one form one domain "
                  "(default: the one NVML's GPU fabric information names, if any)");
  cmd->add_option("--data-dir", args->agent.data_dir, "Journal, logs, checkpoints and work dirs")->capture_default_str();
  cmd->add_option("--state-dir", args->agent.state_dir,
                  "The tasks' supervisor state, which must outlive the agent, not the node (default: under /run or /dev/shm, a tmpfs)");
  cmd->add_option("--checkpoint-dir", args->agent.checkpoint_dir,
                  "Where TESSERA_CHECKPOINT_DIR points (a directory per job); shared storage lets a run resume on another node "
                  "(default: DATA_DIR/checkpoints)");
  cmd->add_option("--fake-gpus", args->agent.fake_gpus, "A fake GPU file (docs/agent.md) instead of NVML");
  cmd->add_flag("--fake", args->agent.force_fake, "8 fake H100s even where NVML is present");
  cmd->add_option("--heartbeat", args->heartbeat_s, "Seconds between status reports")->capture_default_str();
  cmd->add_option("--grace", args->grace_s, "Seconds between SIGTERM and SIGKILL when a task is stopped")->capture_default_str();
  cmd->add_flag("--no-cgroups", args->no_cgroups, "Run tasks without CPU and memory limits");
  cmd->add_option("--gpu-sharing", args->agent.sharing.modes,
                  "How fractions may share this node's GPUs: vgpu, mps, timeslice (comma-separated) or exclusive "
                  "(default: vgpu,timeslice, and mps where nvidia-cuda-mps-control is installed)");
  cmd->add_option("--vgpu-library", args->agent.sharing.vgpu_library,
                  "The vGPU shim (default: libtessera-vgpu.so beside the tessera binary)");
  cmd->add_option("--supervisor", args->agent.supervisor,
                  "The per-task supervisor that lets tasks outlive the agent (default: tessera-supervise beside the tessera binary)");
  cmd->add_flag("--stop-tasks-on-exit", args->agent.stop_tasks_on_exit,
                "Stop the node's tasks when the agent stops (default: leave them to their supervisors; the next agent adopts them)");
  cmd->add_option("--max-burst", args->max_burst_s, "Seconds a vGPU task may hold memory past its cap")
      ->capture_default_str();
  cmd->add_option("--gpu-recheck", args->agent.gpu_health.recheck_after,
                  "Seconds before a GPU taken out of service by a reset-class fault is health-checked (and between checks)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  AddContainerFlags(cmd, args);
  args->agent.metrics_listen = "0.0.0.0:9400";  // dcgm-exporter's port
  cmd->add_option("--metrics-listen", args->agent.metrics_listen,
                  "ADDRESS:PORT of the agent's /metrics (GPU telemetry, DCGM names); empty: none")
      ->capture_default_str();
}

void FinishAgentOptions(AgentArgs& args) {
  args.agent.heartbeat = std::chrono::milliseconds(static_cast<std::int64_t>(args.heartbeat_s * 1000));
  args.agent.grace = std::chrono::milliseconds(static_cast<std::int64_t>(args.grace_s * 1000));
  args.agent.cgroups = !args.no_cgroups;
  args.agent.sharing.max_burst = std::chrono::seconds(static_cast<std::int64_t>(args.max_burst_s));
  if (!args.image_cache_size.empty()) {
    const Result<std::int64_t> bytes = ParseBytes(args.image_cache_size);
    if (!bytes.ok() || *bytes <= 0) Fail(kExitBadInput, "--image-cache-size: '" + args.image_cache_size + "' is not a size such as 200Gi");
    args.agent.image_cache_bytes = *bytes;
  }
}

void RunAgent(AgentArgs& args) {
  FinishAgentOptions(args);
  if (const char* token = std::getenv("TESSERA_JOIN_TOKEN"); token != nullptr) args.agent.join_token = token;
  if (!args.join_token_file.empty()) {
    std::istringstream text(ReadInputOrFail(args.join_token_file));
    std::getline(text, args.agent.join_token);
  }
  auto agent = OrFail(node::Agent::Create(args.agent), kExitFailure);
  std::cerr << agent->Describe() << std::endl;
  StopOnSignals();
  agent->Run(stop_requested);
}

struct UpArgs {
  ServerArgs server;
  int nodes = 2;
  int gpus_per_node = 8;
  std::string gpu_model = "H100";
  bool fake = false;
  AgentArgs containers;  // the container flags, the same for every local agent
};

void RunUp(UpArgs& args) {
  StopOnSignals();
  // Access control on, with a cluster-admin token for the local user.
  args.server.server.plane.access.enabled = !args.server.no_auth;
  const std::string token_file = std::filesystem::absolute(std::filesystem::path(args.server.server.data_dir) / "admin.token").string();
  if (args.server.server.admin_token_file.empty()) args.server.server.admin_token_file = token_file;
  std::filesystem::create_directories(args.server.server.data_dir);
  auto server = StartServer(args.server);
  std::string join_token;  // for local agents without a credential yet
  const std::string url = server->url();
  // With the server's own CA, each local agent gets its node's certificate.
  const std::string own_ca = (std::filesystem::path(args.server.server.data_dir) / "tls").string();
  const bool issue_node_certificates = server->tls() && std::filesystem::exists(auth::CaFilesIn(own_ca).key) &&
                                       args.server.server.tls.ca_file == auth::CaFilesIn(own_ca).cert;
  const bool nvml = !args.fake && node::OpenNvml().ok();
  const int agents = nvml ? 1 : args.nodes;
  std::vector<std::unique_ptr<node::Agent>> started;
  std::vector<std::thread> threads;
  for (int i = 0; i < agents; ++i) {
    AgentArgs a;
    a.agent.insecure_registries = args.containers.agent.insecure_registries;
    a.agent.runc = args.containers.agent.runc;
    a.image_cache_size = args.containers.image_cache_size;
    a.agent.server = url;
    a.agent.name = "node-" + std::to_string(i);
    a.agent.address = "127.0.0.1";
    a.agent.stop_tasks_on_exit = true;  // Ctrl-C stops the whole cluster, its tasks too
    a.agent.data_dir = (std::filesystem::path(args.server.server.data_dir) / "agents" / a.agent.name).string();
    if (server->plane().access_enabled() && !std::filesystem::exists(std::filesystem::path(a.agent.data_dir) / "credential")) {
      if (join_token.empty()) join_token = OrFail(server->plane().IssueToken("tessera up", auth::Role::kNodeJoin, "the local agents of tessera up"));
      a.agent.join_token = join_token;
    }
    a.agent.tls.ca_file = args.server.server.tls.ca_file;
    if (issue_node_certificates) {
      const std::filesystem::path dir = std::filesystem::path(a.agent.data_dir) / "tls";
      a.agent.tls.cert_file = (dir / "node.crt").string();
      a.agent.tls.key_file = (dir / "node.key").string();
      if (!std::filesystem::exists(a.agent.tls.cert_file)) {
        const Status issued = auth::IssueCertificate(own_ca, {a.agent.name, {}}, a.agent.tls.cert_file, a.agent.tls.key_file);
        if (!issued.ok()) Fail(kExitFailure, issued.message());
      }
    }
    a.agent.force_fake = args.fake;
    a.agent.fake_spec.count = args.gpus_per_node;
    a.agent.fake_spec.model = args.gpu_model;
    a.grace_s = 5;
    FinishAgentOptions(a);
    started.push_back(OrFail(node::Agent::Create(a.agent), kExitFailure));
    if (i == 0) std::cerr << started.back()->Describe() << std::endl;
  }
  for (auto& agent : started) threads.emplace_back([&agent] { agent->Run(stop_requested); });
  if (nvml) {
    std::cerr << "tessera up: one node with this machine's GPUs (NVML)" << std::endl;
  } else {
    std::cerr << "tessera up: no NVIDIA driver found here: " << agents << " nodes x " << args.gpus_per_node << " fake " << args.gpu_model
              << " GPUs (tasks run as real processes; only the GPUs are pretend)" << std::endl;
  }
  std::cerr << "tessera up: ready. Try:\n";
  std::cerr << "  export TESSERA_SERVER=" << url << "\n";
  if (server->tls()) std::cerr << "  export TESSERA_CA_FILE=" << std::filesystem::absolute(args.server.server.tls.ca_file).string() << "\n";
  if (server->plane().access_enabled()) {
    std::cerr << "  export TESSERA_TOKEN_FILE=" << args.server.server.admin_token_file << "   # a cluster-admin token, readable by you only\n";
  }
  std::cerr << "  tessera submit --gpus 1 -- nvidia-smi || true\n"
            << "  tessera jobs\n"
            << "Ctrl-C stops the cluster; its state stays in " << args.server.server.data_dir << std::endl;
  WaitForStop();
  std::cerr << "tessera up: stopping" << std::endl;
  for (std::thread& t : threads) t.join();
  started.clear();
}

}  // namespace

void AddServerCommands(CLI::App& app) {
  {
    auto args = std::make_shared<ServerArgs>();
    CLI::App* cmd = app.add_subcommand("server", "Run the control plane: API, state, scheduling loop");
    AddServerFlags(cmd, args.get());
    cmd->add_flag("--check-store", args->check_store,
                  "Read the store offline (the server must be stopped), list every damaged record, exit 1 if there is one");
    cmd->callback([args] {
      if (args->check_store) return CheckStore(*args);
      StopOnSignals();
      auto server = StartServer(*args);
      WaitForStop();
      std::cerr << "tessera server: stopping" << std::endl;
    });
  }
  {
    auto args = std::make_shared<AgentArgs>();
    CLI::App* cmd = app.add_subcommand("agent", "Run the node agent: GPUs, task processes, heartbeats");
    AddAgentFlags(cmd, args.get());
    cmd->callback([args] { RunAgent(*args); });
  }
  {
    auto args = std::make_shared<UpArgs>();
    args->server.server.data_dir = "tessera-data";
    CLI::App* cmd = app.add_subcommand("up", "A whole cluster in one process: server and local agents, SQLite state, fake GPUs where there are none");
    AddServerFlags(cmd, &args->server);
    cmd->add_option("--nodes", args->nodes, "Fake nodes (without NVIDIA GPUs)")->capture_default_str()->check(CLI::Range(1, 64));
    cmd->add_option("--gpus-per-node", args->gpus_per_node, "Fake GPUs per node")->capture_default_str()->check(CLI::Range(0, 64));
    cmd->add_option("--gpu-model", args->gpu_model, "Fake GPU model")->capture_default_str();
    cmd->add_flag("--fake", args->fake, "Fake GPUs even where NVML is present");
    AddContainerFlags(cmd, &args->containers);
    cmd->callback([args] { RunUp(*args); });
  }
}

}  // namespace tessera::cli
