#include "node/agent.h"

#include <fcntl.h>
#include <signal.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <thread>

#include "api/json_reader.h"
#include "base/backoff.h"
#include "base/self_path.h"
#include "metrics/exposition.h"
#include "net/http_client.h"
#include "net/http_server.h"
#include "node/container/container_tasks.h"
#include "node/container/driver_cdi.h"
#include "node/image/command.h"
#include "node/container/job_network.h"
#include "node/interactive/node_sessions.h"
#include "node/interactive/task_terminal.h"
#include "node/node_metrics.h"
#include "node/launch/cgroups.h"
#include "node/launch/supervisor_protocol.h"
#include "node/launch/task_process.h"
#include "node/task_journal.h"
#include "vgpu/memory_ledger.h"

namespace tessera::node {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr std::size_t kLogChunk = 256 << 10;
constexpr int kAssignmentWaitSeconds = 5;
// Retries of a call that failed wait from about this long, doubling, up to the
// last (base/backoff.h): the server is not stampeded when it comes back.
constexpr std::chrono::milliseconds kFirstRetry{500};
constexpr std::chrono::milliseconds kLastRetry{5000};

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

std::int64_t MachineMemory() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<std::int64_t>(pages) * page : 0;
}

void Log(const std::string& name, const std::string& line) { std::cerr << "tessera agent " << name << ": " << line << std::endl; }

struct LocalTask {
  api::Assignment assignment;
  std::unique_ptr<TaskProcess> process;
  std::shared_ptr<TaskTerminal> terminal;  // an interactive task's (`tessera run -it`)
  bool hung_up = false;                    // ...ended for being idle
  bool exited = false;
  bool lost = false;
  std::int32_t exit_code = 0;
  std::string message;
  bool terminating = false;
  bool evicting = false;              // being stopped by the node's own rules (a burst not given back)
  bool left_running = false;          // left to its supervisor as the agent stops
  std::string log_base;               // <logs>/<job>/<task>.<attempt>
  std::string progress_file;          // TESSERA_PROGRESS_FILE: the task touches it to show progress
  std::string checkpoint_file;        // TESSERA_CHECKPOINT_FILE: ...and this one once it wrote a checkpoint
  fs::file_time_type started{};       // on the progress file's clock
  // While stopping with a checkpoint contract: the checkpoint file's time
  // when the signal went out (min() when it had none), so that the next touch
  // ends the checkpoint grace early.
  std::optional<fs::file_time_type> checkpoint_asked;
  std::int64_t shipped[2] = {0, 0};   // stdout, stderr bytes the server has
  // A container task's image, leased while the task lives; or why it could not be had.
  std::optional<Image> image;
  std::string image_error;
  SharedGpus::NodePaths shared_paths;  // what its GPU sharing mode uses on the node (a container binds them in)
};

}  // namespace

class Agent::Impl {
 public:
  explicit Impl(AgentOptions options) : options_(std::move(options)) {}

  Status Init() {
    if (options_.name.empty()) options_.name = HostName();
    Result<std::vector<net::Endpoint>> endpoints = net::ParseEndpoints(options_.server);
    if (!endpoints.ok()) return endpoints.status();
    servers_ = *endpoints;
    if (!options_.tls.ca_file.empty() || !options_.tls.cert_file.empty()) {
      Result<net::TlsContext> tls = net::MakeClientTls(options_.tls);
      if (!tls.ok()) return tls.status();
      tls_ = *tls;
    }
    std::error_code ec;
    fs::create_directories(options_.data_dir, ec);
    if (ec) return Status(StatusCode::kFailedPrecondition, "cannot create the agent's data directory " + options_.data_dir + ": " + ec.message());
    TESSERA_RETURN_IF_ERROR(OpenGpus());
    TESSERA_RETURN_IF_ERROR(OpenSharing());
    if (options_.cgroups) {
      cgroups_ = Cgroups::Detect("tessera-" + options_.name);
      findings_.push_back(cgroups_->Describe());
    } else {
      findings_.push_back("cgroups disabled by --no-cgroups; tasks run without CPU/memory limits");
    }
    Result<TaskJournal> journal = TaskJournal::Open((fs::path(options_.data_dir) / "journal").string());
    if (!journal.ok()) return journal.status();
    journal_ = std::move(*journal);
    tasks_dir_ = fs::absolute(StateRoot(&state_on_tmpfs_), ec);
    // A state root on a tmpfs that is not there was lost with a reboot (or
    // never made): the journal's unfinished tasks died with the node then,
    // and their recorded pids may now be other processes'.
    state_root_was_there_ = fs::exists(tasks_dir_, ec);
    fs::create_directories(tasks_dir_, ec);
    // Whose it is, for a person (or a test's clean-up) looking at /run or /dev/shm.
    if (state_on_tmpfs_) std::ofstream(tasks_dir_.parent_path() / "data-dir") << fs::absolute(options_.data_dir, ec).string() << "\n";
    findings_.push_back("task state in " + tasks_dir_.string());
    FindSupervisor();
    OpenContainers();
    if (std::ifstream in(CredentialPath()); in) std::getline(in, credential_);
    sessions_ = std::make_unique<NodeSessions>(NodeSessionsOptions{options_.name, servers_, tls_, [this] { return Token(); }});
    TESSERA_RETURN_IF_ERROR(ServeMetrics());
    // Last: once adopted, a task must not be killed by a start that fails after all.
    AdoptLeftovers();
    return Status::Ok();
  }

  // Where the tasks' state directories live (AgentOptions::state_dir).
  fs::path StateRoot(bool* on_tmpfs) const {
    *on_tmpfs = false;
    if (!options_.state_dir.empty()) return options_.state_dir;
    for (const char* tmpfs : {"/run", "/dev/shm"}) {
      struct statfs st {};
      if (statfs(tmpfs, &st) == 0 && st.f_type == TMPFS_MAGIC && access(tmpfs, W_OK) == 0) {
        // Named by the node and its data directory: agents of different clusters on one host never share it.
        std::error_code ec;
        const std::string data_dir = fs::absolute(options_.data_dir, ec).string();
        char hash[17];
        std::snprintf(hash, sizeof hash, "%016zx", std::hash<std::string>{}(data_dir));
        *on_tmpfs = true;
        return fs::path(tmpfs) / ("tessera-agent-" + options_.name + "-" + hash) / "tasks";
      }
    }
    return fs::path(options_.data_dir) / "tasks";
  }

  std::string Describe() const {
    std::string out;
    for (const std::string& f : findings_) out += (out.empty() ? "" : "\n") + f;
    return out;
  }

  void Run(const std::atomic<bool>& stop) {
    std::thread poller([this, &stop] { PollAssignments(stop); });
    std::thread sessions([this, &stop] { sessions_->Run(stop); });
    net::HttpClient client(servers_, tls_);
    auto last_report = std::chrono::steady_clock::time_point();
    while (!stop) {
      {
        std::unique_lock lock(mu_);
        wake_.wait_for(lock, std::chrono::milliseconds(100), [this] { return woken_; });
        woken_ = false;
      }
      if (!registered_ && !Register(client)) continue;
      bool changed = Reconcile();
      changed = EnforceBursts() || changed;
      EndIdleSessions();
      ShipLogs(client);
      const bool heartbeat_due = std::chrono::steady_clock::now() - last_report >= options_.heartbeat;
      if (heartbeat_due) SampleTelemetry();
      if ((changed || heartbeat_due) && std::chrono::steady_clock::now() >= retry_report_at_) {
        if (SendStatus(client)) {
          last_report = std::chrono::steady_clock::now();
          report_backoff_.Reset();
        } else {
          retry_report_at_ = std::chrono::steady_clock::now() + report_backoff_.Next();
        }
      }
    }
    sessions.join();
    sessions_.reset();  // open sessions end before the tasks they reach
    Shutdown();
    poller.join();
  }

 private:
  Status OpenGpus() {
    std::string why_fake;
    if (!options_.force_fake && options_.fake_gpus.empty()) {
      Result<std::unique_ptr<GpuProvider>> nvml = OpenNvml();
      if (nvml.ok()) {
        gpus_ = std::move(*nvml);
      } else if (nvml.status().code() == StatusCode::kNotFound) {
        why_fake = "no NVIDIA driver found (" + nvml.status().message() + ")";
      } else {
        return nvml.status();
      }
    } else {
      why_fake = options_.force_fake ? "fake GPUs requested" : "fake GPUs from " + options_.fake_gpus;
    }
    if (!gpus_) {
      if (!options_.fake_gpus.empty()) {
        Result<std::unique_ptr<GpuProvider>> fake = LoadFakeGpus(options_.fake_gpus);
        if (!fake.ok()) return fake.status();
        gpus_ = std::move(*fake);
      } else {
        FakeGpuSpec spec = options_.fake_spec;
        if (spec.label == "fake") spec.label = options_.name;
        gpus_ = MakeFakeGpus(spec);
      }
    }
    Result<std::vector<GpuInfo>> found = gpus_->Discover();
    if (!found.ok()) return found.status();
    inventory_.name = options_.name;
    inventory_.address = options_.address;
    inventory_.leaf = options_.leaf;
    inventory_.spine = options_.spine;
    inventory_.provider = gpus_->Describe() + (why_fake.empty() ? "" : "; " + why_fake);
    fake_gpus_ = !why_fake.empty();
    inventory_.cpu_milli = options_.cpu_milli > 0 ? options_.cpu_milli : std::int64_t{1000} * std::thread::hardware_concurrency();
    inventory_.memory = options_.memory > 0 ? options_.memory : MachineMemory();
    gpu_info_ = *found;
    for (const GpuInfo& g : *found) {
      api::GpuInventory& gpu = inventory_.gpus.emplace_back(g.index, g.uuid, g.model, g.memory_bytes, g.numa_node, g.nvlink_domain, g.healthy);
      for (const MigDeviceInfo& d : g.mig) gpu.mig.push_back({d.profile, d.uuid});
    }
    inventory_.nvlink_group = options_.nvlink_group.empty() ? NodeFabricDomain(*found) : options_.nvlink_group;
    findings_.push_back("GPUs: " + inventory_.provider);
    if (!inventory_.nvlink_group.empty()) findings_.push_back("multi-node NVLink domain: " + inventory_.nvlink_group);
    return Status::Ok();
  }

  // /metrics on its own small server, from the telemetry of the last heartbeat.
  Status ServeMetrics() {
    if (options_.metrics_listen.empty()) return Status::Ok();
    const std::size_t colon = options_.metrics_listen.rfind(':');
    net::HttpServerOptions http;
    http.address = options_.metrics_listen.substr(0, colon);
    const int port = colon == std::string::npos ? -1 : std::atoi(options_.metrics_listen.c_str() + colon + 1);
    if (port < 0 || port > 65535 || http.address.empty()) {
      return Status(StatusCode::kInvalidArgument, "--metrics-listen: '" + options_.metrics_listen + "' is not ADDRESS:PORT");
    }
    http.port = static_cast<std::uint16_t>(port);
    http.threads = 1;
    metrics_router_.Add("GET", "/metrics", [this](const net::ExchangePtr& exchange) {
      NodeTelemetry telemetry;
      {
        std::lock_guard lock(telemetry_mu_);
        telemetry = telemetry_;
      }
      net::HttpResponse response;
      response.content_type = metrics::kContentType;
      response.body = RenderNodeMetrics(telemetry);
      exchange->Reply(std::move(response));
    });
    metrics_server_ = std::make_unique<net::HttpServer>(http, metrics_router_);
    TESSERA_RETURN_IF_ERROR(metrics_server_->Start());
    findings_.push_back("metrics: http://" + http.address + ":" + std::to_string(metrics_server_->port()) + "/metrics");
    return Status::Ok();
  }

  // Telemetry and faults of every GPU, and who holds them, for the status report and /metrics.
  void SampleTelemetry() {
    NodeTelemetry t;
    t.hostname = options_.name;
    t.gpus = gpu_info_;
    if (Result<std::vector<GpuSample>> samples = gpus_->Sample(); samples.ok()) t.samples = std::move(*samples);
    const Time now = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
    for (const GpuFault& f : gpus_->PollFaults()) {
      if (f.kind == GpuFaultKind::kXid) {
        last_xid_[f.index] = f.code;
        ++xid_count_[f.index];
      }
      const FaultClass fault_class = health_.Observe(f, now);
      if (fault_class == FaultClass::kIgnore) continue;
      const std::string detail = f.detail.empty() ? FaultDetail(f.kind, f.code) : f.detail;
      Log(options_.name, "GPU " + std::to_string(f.index) + ": " + detail + " (" + std::string(FaultClassName(fault_class)) + ")");
      unsent_faults_.push_back({f.index, std::string(FaultKindName(f.kind)), f.code, detail, std::string(FaultClassName(fault_class))});
    }
    for (const int index : health_.DueForCheck(now)) {
      const Status check = gpus_->CheckHealth(index);
      health_.RecordCheck(index, check, now);
      Log(options_.name, "GPU " + std::to_string(index) + ": health check " + (check.ok() ? "passed; back in service" : "failed: " + check.message()));
    }
    t.last_xid = last_xid_;
    t.xid_count = xid_count_;
    for (const auto& [index, outage] : health_.outages()) t.out_of_service.insert(index);
    for (const auto& [key, task] : tasks_) {
      if (task.exited || task.terminating) continue;
      const api::Assignment& a = task.assignment;
      const auto env = [&](const char* name) {
        const auto it = a.env.find(name);
        return it == a.env.end() ? std::string() : it->second;
      };
      const bool fraction = a.gpu_milli > 0 && a.gpu_milli < 1000;
      for (const std::int32_t gpu : a.gpus) {
        GpuTenant tenant{gpu, std::to_string(key.job), a.job_name, env("TESSERA_QUEUE"), env("TESSERA_USER"), a.task_name,
                         fraction ? a.gpu_milli / 1000.0 : 1.0, fraction ? a.gpu_memory : 0, -1};
        if (fraction) {
          tenant.memory_used = sharing_->MemoryUsed(a);
        } else if (static_cast<std::size_t>(gpu) < t.samples.size()) {
          tenant.memory_used = t.samples[static_cast<std::size_t>(gpu)].memory_used_bytes;
        }
        t.tenants.push_back(std::move(tenant));
      }
    }
    std::lock_guard lock(telemetry_mu_);
    telemetry_ = std::move(t);
  }

  Status OpenSharing() {
    SharingOptions sharing = options_.sharing;
    sharing.data_dir = options_.data_dir;
    std::vector<SharedGpu> gpus;
    for (const api::GpuInventory& g : inventory_.gpus) gpus.push_back({g.index, g.uuid, g.memory});
    Result<std::unique_ptr<SharedGpus>> shared = SharedGpus::Create(sharing, std::move(gpus), &findings_);
    if (!shared.ok()) return shared.status();
    sharing_ = std::move(*shared);
    inventory_.gpu_sharing = sharing_->modes();
    return Status::Ok();
  }

  // The image store and runc's state under <data dir>/containers. Without
  // them the node still runs host tasks; a container task then fails with why.
  void OpenContainers() {
    ContainerTasksOptions containers;
    std::error_code ec;
    containers.root = fs::absolute(fs::path(options_.data_dir) / "containers", ec).string();
    containers.images.insecure_registries = options_.insecure_registries;
    containers.images.size_limit_bytes = options_.image_cache_bytes;
    containers.runc = options_.runc;
    Result<std::unique_ptr<ContainerTasks>> opened = ContainerTasks::Open(containers);
    if (!opened.ok()) {
      containers_error_ = "this node cannot run containers: " + opened.status().message();
      findings_.push_back(containers_error_);
      return;
    }
    containers_ = std::move(*opened);
    networks_ = std::make_unique<JobNetworks>(options_.name);
    findings_.push_back(containers_->Describe());
    LoadCdi(containers.root);
  }

  // The GPUs' CDI specs (node/container/cdi.h): what the driver's tools
  // wrote, or for fake GPUs a fake spec, so that the whole path runs in CI.
  void LoadCdi(const std::string& containers_root) {
    std::vector<std::string> problems;
    cdi_ = CdiRegistry::Load({"/etc/cdi", "/var/run/cdi"}, &problems);
    for (const std::string& problem : problems) findings_.push_back(problem);
    if (fake_gpus_) {
      const std::string driver = containers_root + "/fake-driver-version";
      std::ofstream(driver) << "tessera fake GPU driver for " << options_.name << "\n";
      std::vector<std::pair<int, std::string>> gpus;
      for (const GpuInfo& g : gpu_info_) gpus.emplace_back(g.index, g.uuid);
      cdi_.Add(FakeGpuCdiSpec(gpus, driver));
    } else if (!gpu_info_.empty() && !cdi_.HasKind(kGpuKind)) {
      // No nvidia-ctk spec: the minimal one, from the driver's files.
      Result<CommandResult> ldconfig = RunCommand({{"ldconfig", "-p"}, std::chrono::seconds(10)});
      Result<CdiSpec> made = ldconfig.ok() ? DriverCdiSpec(gpu_info_, ldconfig->stdout_tail) : Result<CdiSpec>(ldconfig.status());
      if (made.ok()) {
        findings_.push_back("CDI: no spec for " + std::string(kGpuKind) + "; made one from the driver's files (" +
                            std::to_string(made->edits.mounts.size()) + " files, " + std::to_string(made->edits.device_nodes.size()) + " device nodes)");
        cdi_.Add(std::move(*made));
      } else {
        findings_.push_back("CDI: no spec for " + std::string(kGpuKind) + ", and none could be made from the driver: " + made.status().message());
      }
    }
    findings_.push_back("CDI: " + std::to_string(cdi_.size()) + " specs" + (fake_gpus_ ? " (one for the fake GPUs)" : ""));
  }

  // The CDI edits that give a container the task's GPUs, found by UUID and
  // then by index; a MIG task's device by its UUID. Inside, CUDA sees only
  // those GPUs, numbered from 0, so CUDA_VISIBLE_DEVICES names them by UUID.
  Result<ContainerEdits> GpuEdits(const api::Assignment& a, std::map<std::string, std::string>& env) const {
    ContainerEdits edits;
    std::string visible;
    const auto add = [&](const std::vector<std::string>& names) -> Status {
      Result<ContainerEdits> device = cdi_.Device(kGpuKind, names);
      if (!device.ok()) return device.status();
      edits.Add(*device);
      visible += (visible.empty() ? "" : ",") + names.front();
      return Status::Ok();
    };
    if (!a.mig_device.empty()) {
      TESSERA_RETURN_IF_ERROR(add({a.mig_device}));
    } else {
      for (const std::int32_t g : a.gpus) {
        const std::string uuid = static_cast<std::size_t>(g) < gpu_info_.size() ? gpu_info_[static_cast<std::size_t>(g)].uuid : "";
        TESSERA_RETURN_IF_ERROR(add({uuid, std::to_string(g)}));
      }
    }
    env["CUDA_VISIBLE_DEVICES"] = visible;
    return edits;
  }

  // tessera-supervise beside this program unless told; without it tasks still
  // run, but die with the agent's restart.
  void FindSupervisor() {
    const std::string path = options_.supervisor.empty() ? BesideThisProgram(kSupervisorBinary) : options_.supervisor;
    if (access(path.c_str(), X_OK) != 0) {
      findings_.push_back("no task supervisor at " + path + " (" + std::strerror(errno) +
                          "): tasks run without one, and an agent restart stops them");
      return;
    }
    std::error_code ec;
    supervisor_ = fs::absolute(path, ec).string();
    findings_.push_back("tasks run under " + supervisor_ + ": they outlive an agent restart");
  }

  // A task's state directory (its supervisor's records) and cgroup: both
  // named by the key alone, so that an agent adopting a task finds them
  // before it knows anything else about it.
  std::string StateDir(const api::TaskKey& key) const {
    return (tasks_dir_ / (std::to_string(key.job) + "." + std::to_string(key.attempt) + "." + std::to_string(key.task))).string();
  }
  static std::string CgroupName(const api::TaskKey& key) {
    return "job" + std::to_string(key.job) + "-task" + std::to_string(key.task) + "-a" + std::to_string(key.attempt);
  }
  // The task's cgroup if it was launched into one; "" otherwise.
  std::string ExistingCgroup(const api::TaskKey& key) const {
    if (!cgroups_) return "";
    const std::vector<std::string> procs = cgroups_->ProcsFiles(CgroupName(key));
    return !procs.empty() && fs::exists(procs.front()) ? CgroupName(key) : "";
  }
  // Once the journal holds a task's end, its state directory and cgroup go.
  void ForgetEnded(const api::TaskKey& key) {
    std::error_code ec;
    fs::remove_all(StateDir(key), ec);
    if (containers_) containers_->Remove(key);  // before the cgroup, which runc's nested group would keep busy
    if (networks_) networks_->Leave(key);
    if (cgroups_) cgroups_->Remove(CgroupName(key));
  }

  // Tasks a previous agent started and never saw end. A supervised one is
  // adopted: still running, or ended while no agent watched, with the exit
  // status its supervisor recorded (reported from the journal as any end).
  // What cannot be adopted -- an interactive task, a task whose supervisor was
  // killed -- is killed and will be reported lost.
  void AdoptLeftovers() {
    std::size_t ended = 0;
    for (const auto& [key, entry] : journal_.Unfinished()) {
      const std::string dir = StateDir(key);
      if (const std::optional<int> code = TaskProcess::RecordedExit(dir)) {
        journal_.RecordEnd(key, *code);
        ForgetEnded(key);
        ++ended;
        continue;
      }
      Result<std::unique_ptr<TaskProcess>> adopted = TaskProcess::Adopt(dir, ExistingCgroup(key));
      if (adopted.ok()) {
        adopted_.emplace(key, std::move(*adopted));
        continue;
      }
      if (fs::exists(dir)) {
        TaskProcess::KillSupervised(dir);
      } else if (state_root_was_there_ && entry.pid > 0 && kill(-entry.pid, 0) == 0) {
        kill(-entry.pid, SIGKILL);  // launched without a supervisor: its group
      }
      journal_.RecordEnd(key, 137);
      ForgetEnded(key);
      leftovers_.insert(key);
    }
    if (!adopted_.empty()) findings_.push_back("adopted " + std::to_string(adopted_.size()) + " running tasks of a previous agent");
    if (ended > 0) findings_.push_back(std::to_string(ended) + " tasks of a previous agent ended while no agent ran; their exits will be reported");
    if (!leftovers_.empty()) findings_.push_back(std::to_string(leftovers_.size()) + " tasks of a previous agent could not be adopted; they were stopped and will be reported lost");
  }

  // The node's credential once it has one, else the join token (or nothing,
  // for a server without access control).
  void Authorize(net::HttpClient& client) {
    if (const std::string token = Token(); !token.empty()) client.SetHeader("Authorization", "Bearer " + token);
  }
  std::string Token() {
    std::lock_guard lock(credential_mu_);
    return !credential_.empty() ? credential_ : options_.join_token;
  }
  std::string CredentialPath() const { return (fs::path(options_.data_dir) / "credential").string(); }

  bool Register(net::HttpClient& client) {
    Authorize(client);
    Result<net::HttpResponse> r = client.Send("POST", "/v1/nodes/" + options_.name + "/register", api::ToJson(inventory_).dump());
    if (r.ok() && r->status == 401) {
      std::lock_guard lock(credential_mu_);
      if (!credential_.empty()) {  // revoked, or from another cluster: join again
        Log(options_.name, "the server refused this node's credential; joining again with the join token");
        credential_.clear();
        fs::remove(CredentialPath());
      }
    }
    if (r.ok() && r->status == 200) {
      const json answer = json::parse(r->body, nullptr, false);
      if (answer.is_object() && answer.contains("credential")) SaveCredential(answer["credential"].get<std::string>());
    }
    if (!r.ok() || r->status != 200) {
      const std::string why = !r.ok() ? r.status().message() : r->body;
      if (why != last_error_) Log(options_.name, "cannot register: " + why + " (retrying)");
      last_error_ = why;
      std::this_thread::sleep_for(register_backoff_.Next());
      return false;
    }
    register_backoff_.Reset();
    last_error_.clear();
    registered_ = true;
    Log(options_.name, "registered with " + client.endpoint().ToString() + ": " + std::to_string(inventory_.gpus.size()) + " GPUs");
    return true;
  }

  // Kept beside the journal, readable by the agent's user only.
  void SaveCredential(const std::string& credential) {
    const std::string path = CredentialPath();
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) {
      const std::string line = credential + "\n";
      const bool written = ::fchmod(fd, 0600) == 0 && ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
      ::close(fd);
      if (!written) Log(options_.name, "cannot write the node credential to " + path + "; it lasts until the agent stops");
    }
    std::lock_guard lock(credential_mu_);
    credential_ = credential;
  }

  void PollAssignments(const std::atomic<bool>& stop) {
    net::HttpClient client(servers_, tls_);
    Backoff backoff(kFirstRetry, kLastRetry, std::random_device{}());
    std::int64_t revision = -1;
    std::int64_t epoch = 0;  // the newest leader epoch seen
    while (!stop) {
      if (!registered_) {
        epoch = 0;  // registering anew: perhaps with another cluster, whose epochs start over
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        continue;
      }
      const std::string target = "/v1/nodes/" + options_.name + "/assignments?after=" + std::to_string(revision) +
                                 "&wait=" + std::to_string(kAssignmentWaitSeconds);
      Authorize(client);
      Result<net::HttpResponse> r = client.Send("GET", target, {}, "application/json", std::chrono::seconds(kAssignmentWaitSeconds + 10));
      if (!r.ok() || r->status != 200) {
        if (r.ok() && (r->status == 404 || r->status == 401)) registered_ = false;
        std::this_thread::sleep_for(backoff.Next());
        continue;
      }
      backoff.Reset();
      Result<json> body = api::ParseJsonBody(r->body);
      if (!body.ok()) continue;
      Result<api::AssignmentSet> set = api::AssignmentSetFromJson(*body);
      if (!set.ok()) {
        Log(options_.name, "bad assignment set from the server: " + set.status().message());
        continue;
      }
      if (set->epoch < epoch) {
        // A replica that has lost the leadership and does not know it yet.
        Log(options_.name, "dropped an assignment set from leader epoch " + std::to_string(set->epoch) + "; epoch " +
                               std::to_string(epoch) + " has been seen");
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        continue;
      }
      epoch = set->epoch;
      revision = set->revision;
      std::lock_guard lock(mu_);
      desired_ = std::move(*set);
      have_desired_ = true;
      woken_ = true;
      wake_.notify_one();
    }
  }

  // Brings the processes in line with the assignment set; true when any task changed state.
  bool Reconcile() {
    api::AssignmentSet desired;
    {
      std::lock_guard lock(mu_);
      if (!have_desired_) return false;
      desired = desired_;
    }
    bool changed = false;
    std::set<api::TaskKey> wanted;
    for (const api::Assignment& a : desired.tasks) wanted.insert(a.key);
    std::erase_if(preparing_, [&](const auto& entry) {
      if (wanted.contains(entry.first)) return false;
      containers_->Abandon(entry.first);
      changed = true;
      return true;
    });
    // Stop what is no longer assigned; forget what has ended and been reported.
    for (auto it = tasks_.begin(); it != tasks_.end();) {
      LocalTask& t = it->second;
      if (!wanted.contains(it->first) && !t.exited && !t.terminating) Stop(t);
      if (!wanted.contains(it->first) && t.exited) {
        it = tasks_.erase(it);
        continue;
      }
      ++it;
    }
    // Reap.
    for (auto& [key, t] : tasks_) {
      if (t.exited) continue;
      if (t.checkpoint_asked && CheckpointWrittenSince(t.checkpoint_file, *t.checkpoint_asked)) {
        Log(options_.name, t.assignment.task_name + " of job " + std::to_string(key.job) + ": checkpoint reported; SIGTERM now");
        t.checkpoint_asked.reset();
        t.process->CheckpointTaken();
      }
      t.process->KillIfOverdue();
      const std::optional<int> status = t.process->Poll();
      if (!status) continue;
      t.exited = true;
      t.exit_code = *status;
      if (t.process->supervisor_lost()) {
        t.lost = true;  // not the task's doing: requeued without using up a restart
        t.message = "the task's supervisor was killed, and the task with it";
      }
      sessions_->Withdraw(key);
      sharing_->Release(t.assignment);
      if (cgroups_ && !t.process->cgroup().empty() && cgroups_->OomKilled(t.process->cgroup())) {
        t.message = "killed: out of memory (limit " + std::to_string(t.assignment.memory) + " bytes)";
      }
      journal_.RecordEnd(key, t.exit_code);
      ForgetEnded(key);
      changed = true;
    }
    // Start what is assigned and not yet here.
    for (const api::Assignment& a : desired.tasks) {
      if (tasks_.contains(a.key)) continue;
      LocalTask t;
      t.assignment = a;
      // Shipped from here even for a task that ended while no agent ran.
      t.log_base = (fs::path(options_.data_dir) / "logs" / std::to_string(a.key.job) / (a.task_name + "." + std::to_string(a.key.attempt))).string();
      const TaskJournal::Entry* started = journal_.Find(a.key);
      if (auto adopted = adopted_.extract(a.key)) {
        Resume(t, std::move(adopted.mapped()));
      } else if (leftovers_.contains(a.key) || (started != nullptr && !started->ended)) {
        // Started once already, by us or an agent before us: never twice.
        t.exited = true;
        t.lost = true;
        t.exit_code = 137;
        t.message = "the agent restarted while the task ran, and could not adopt it";
      } else if (started != nullptr) {
        // Ended, perhaps while no agent ran: how it ended is in the journal.
        t.exited = true;
        t.exit_code = started->exit_code;
      } else if (GpusBusy(a)) {
        continue;  // a stopping task still holds its GPUs; start once it is gone
      } else if (!ImageReady(t, changed)) {
        continue;  // reported as preparing while its image is pulled
      } else {
        Launch(t);
      }
      tasks_.emplace(a.key, std::move(t));
      changed = true;
    }
    changed = StopUnwantedAdopted() || changed;
    // The adopted tasks have rejoined their runs' networks: what no task holds was left by a killed agent.
    if (networks_ && !networks_collected_) {
      networks_->Collect();
      networks_collected_ = true;
    }
    return changed;
  }

  // A container task's image, once on the node (in t.image, or why not in
  // t.image_error); false while it is pulled. `changed` is set when the
  // pull's progress moved, so that the next report carries it.
  bool ImageReady(LocalTask& t, bool& changed) {
    const api::Assignment& a = t.assignment;
    if (a.container.image.empty()) return true;
    if (!containers_) {
      t.image_error = containers_error_;
      return true;
    }
    std::string progress;
    std::optional<Result<Image>> image = containers_->TakeImage(a.key, a.container, &progress);
    if (!image) {
      std::string& reported = preparing_[a.key];
      changed = changed || reported != progress;
      reported = progress;
      return false;
    }
    preparing_.erase(a.key);
    if (image->ok()) {
      t.image = std::move(**image);
    } else {
      t.image_error = image->status().message();
    }
    return true;
  }

  // An adopted task, now driven as one this agent launched.
  void Resume(LocalTask& t, std::unique_ptr<TaskProcess> process) {
    if (containers_ && !t.assignment.container.image.empty()) {
      // Leased again, so that collection leaves the running container's image alone.
      if (Result<Image> image = containers_->LeaseCached(t.assignment.container); image.ok()) t.image = std::move(*image);
      // ...and its run's network kept (it exists: the task runs in it).
      if (t.assignment.container.network) (void)networks_->Join(t.assignment.key, *t.assignment.container.network);
    }
    LaunchSpec spec;
    if (Status shared = BuildSpec(t, spec); !shared.ok()) {
      Log(options_.name, t.assignment.task_name + " of job " + std::to_string(t.assignment.key.job) + ": adopted, but " + shared.message());
    }
    std::error_code ec;
    const fs::file_time_type launched = fs::last_write_time(fs::path(StateDir(t.assignment.key)) / kSupervisorPidsFile, ec);
    if (!ec) t.started = launched;  // progress counts from the launch, not from the adoption
    t.process = std::move(process);
    Publish(t, spec);
  }

  // Adopted tasks the server no longer assigns here (cancelled or requeued
  // while no agent ran): stopped as any task that is no longer assigned.
  bool StopUnwantedAdopted() {
    for (auto& [key, process] : adopted_) {
      LocalTask t;
      t.assignment.key = key;
      t.process = std::move(process);
      Log(options_.name, "job " + std::to_string(key.job) + " task " + std::to_string(key.task) +
                             ": adopted, but no longer assigned here; stopping it");
      Stop(t);
      tasks_.emplace(key, std::move(t));
    }
    const bool any = !adopted_.empty();
    adopted_.clear();
    return any;
  }

  // A task the server no longer assigns here (preempted, drained, requeued,
  // cancelled): with a checkpoint contract it gets its signal and its grace
  // first, then SIGTERM and --grace, then SIGKILL. The grace ends as soon as
  // the task reports the checkpoint (touches TESSERA_CHECKPOINT_FILE), so a
  // job that saves and carries on is not left running out its grace.
  void Stop(LocalTask& t) {
    const api::Assignment& a = t.assignment;
    t.terminating = true;
    if (a.checkpoint_signal <= 0) return t.process->Terminate(options_.grace);
    Log(options_.name, a.task_name + " of job " + std::to_string(a.key.job) + ": stopping; signal " + std::to_string(a.checkpoint_signal) +
                           " to checkpoint, " + std::to_string(a.checkpoint_grace_ms / 1000) + "s before SIGTERM");
    std::error_code ec;
    const fs::file_time_type before = fs::last_write_time(t.checkpoint_file, ec);
    t.checkpoint_asked = ec ? fs::file_time_type::min() : before;
    t.process->CheckpointThenTerminate(a.checkpoint_signal, std::chrono::milliseconds(a.checkpoint_grace_ms), options_.grace);
  }

  // The burst rules of vGPU tasks: ask with the checkpoint signal, then evict.
  // True when a task was evicted (its report changes once it has exited).
  bool EnforceBursts() {
    const auto contract = [this](const api::TaskKey& key) {
      const auto it = tasks_.find(key);
      if (it == tasks_.end()) return CheckpointContract{};
      const api::Assignment& a = it->second.assignment;
      return CheckpointContract{a.checkpoint_signal > 0, a.checkpoint_grace_ms * 1'000'000};
    };
    bool evicted = false;
    for (const auto& [key, decision] : sharing_->CheckBursts(vgpu::MonotonicNanos(), contract)) {
      const auto it = tasks_.find(key);
      if (it == tasks_.end()) continue;
      LocalTask& t = it->second;
      if (t.exited || t.terminating || t.evicting) continue;
      if (decision.action == BurstDecision::Action::kAsk) {
        Log(options_.name, t.assignment.task_name + " of job " + std::to_string(key.job) + ": asked to give back burst memory: " + decision.reason);
        t.process->Signal(t.assignment.checkpoint_signal);
      } else {
        Log(options_.name, t.assignment.task_name + " of job " + std::to_string(key.job) + ": " + decision.reason);
        t.evicting = true;
        t.lost = true;  // requeued without using up a restart: the node took the memory back
        t.message = decision.reason;
        t.process->Terminate(options_.grace);
        evicted = true;
      }
    }
    return evicted;
  }

  bool GpusBusy(const api::Assignment& a) const {
    for (const auto& [key, t] : tasks_) {
      if (t.exited || !t.terminating) continue;
      for (const std::int32_t g : t.assignment.gpus) {
        if (std::find(a.gpus.begin(), a.gpus.end(), g) != a.gpus.end()) return true;
      }
    }
    return false;
  }

  // The task's program, environment, files and limits, as launched (and as
  // `tessera exec` starts a process beside it). Returns the sharing mode's
  // failure, if any; the spec is complete all the same.
  Status BuildSpec(LocalTask& t, LaunchSpec& spec) {
    const api::Assignment& a = t.assignment;
    spec.argv = a.command;
    spec.env = a.env;
    std::string visible;
    for (const std::int32_t g : a.gpus) visible += (visible.empty() ? "" : ",") + std::to_string(g);
    spec.env["CUDA_VISIBLE_DEVICES"] = visible;  // empty: no GPU at all
    spec.env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";  // the indices are NVML's, in PCI order
    spec.env["TESSERA_NODE_NAME"] = options_.name;
    if (a.gpu_milli > 0 && a.gpu_milli < 1000) {
      spec.env["TESSERA_GPU_MILLI"] = std::to_string(a.gpu_milli);
      spec.env["TESSERA_GPU_MEMORY_LIMIT"] = std::to_string(a.gpu_memory);
    }
    const fs::path checkpoint_root = options_.checkpoint_dir.empty() ? fs::path(options_.data_dir) / "checkpoints" : fs::path(options_.checkpoint_dir);
    const fs::path checkpoints = checkpoint_root / std::to_string(a.key.job);
    std::error_code ec;
    fs::create_directories(checkpoints, ec);
    spec.env["TESSERA_CHECKPOINT_DIR"] = fs::absolute(checkpoints, ec).string();
    const fs::path progress = fs::path(options_.data_dir) / "progress";
    fs::create_directories(progress, ec);
    const std::string mark = std::to_string(a.key.job) + "-" + a.task_name + "." + std::to_string(a.key.attempt);
    t.progress_file = fs::absolute(progress / mark, ec).string();
    t.checkpoint_file = fs::absolute(progress / (mark + ".checkpoint"), ec).string();
    t.started = fs::file_time_type::clock::now();
    spec.env["TESSERA_PROGRESS_FILE"] = t.progress_file;
    spec.env["TESSERA_CHECKPOINT_FILE"] = t.checkpoint_file;
    spec.working_dir = !a.working_dir.empty() ? a.working_dir
                                              : (fs::path(options_.data_dir) / "work" / (std::to_string(a.key.job) + "-" + a.task_name)).string();
    spec.stdout_path = t.log_base + ".stdout";
    spec.stderr_path = t.log_base + ".stderr";
    // An interactive task runs on a terminal; its output reaches the stdout log through it.
    const bool interactive = a.interactive_idle_ms > 0;
    if (interactive) spec.stdio = LaunchSpec::Stdio::kTerminal;
    spec.cpu_milli = a.cpu_milli;
    spec.memory_bytes = a.memory;
    spec.cgroup_name = CgroupName(a.key);
    t.shared_paths = {};
    const Status shared = sharing_->Prepare(a, spec.env, &t.shared_paths);
    return shared.ok() ? shared : Status(shared.code(), "cannot share the GPU: " + shared.message());
  }

  void Launch(LocalTask& t) {
    const api::Assignment& a = t.assignment;
    LaunchSpec spec;
    if (Status shared = BuildSpec(t, spec); !shared.ok()) {
      t.exited = true;
      t.exit_code = 127;
      t.message = shared.message();
      return;
    }
    const bool limits = cgroups_ && (cgroups_->support().cpu || cgroups_->support().memory);
    if (!a.container.image.empty()) {
      if (Status contained = Containerize(t, spec, limits); !contained.ok()) {
        t.exited = true;
        t.exit_code = 127;
        t.message = contained.message();
        return;
      }
    }
    if (!supervisor_.empty() && spec.stdio == LaunchSpec::Stdio::kLogs) {
      spec.supervisor = supervisor_;
      spec.state_dir = StateDir(a.key);
    }
    journal_.RecordStart(a.key);
    Result<std::unique_ptr<TaskProcess>> process = TaskProcess::Launch(spec, limits ? cgroups_.get() : nullptr);
    if (!process.ok()) {
      t.exited = true;
      t.exit_code = 127;
      t.message = process.status().message();
      journal_.RecordEnd(a.key, t.exit_code);
      ForgetEnded(a.key);
      return;
    }
    t.process = std::move(*process);
    journal_.RecordPid(a.key, t.process->pid());
    if (spec.stdio == LaunchSpec::Stdio::kTerminal) t.terminal = std::make_shared<TaskTerminal>(t.process->terminal(), spec.stdout_path);
    Publish(t, spec);
  }

  // The launch of a host process turned into runc's of the task's container:
  // the command, environment and working directory go into the container's
  // config, and what the agent launches is `runc run`, in the task's cgroup.
  Status Containerize(LocalTask& t, LaunchSpec& spec, bool limits) {
    const api::Assignment& a = t.assignment;
    if (!t.image) return FailedPrecondition(t.image_error);
    ContainerProcess process;
    process.command = a.command;
    process.env = std::move(spec.env);
    process.working_dir = a.working_dir;
    process.hostname = options_.name;
    if (limits) process.cgroups_path = cgroups_->RuntimePath(spec.cgroup_name);
    process.node_paths = {process.env["TESSERA_CHECKPOINT_DIR"], fs::path(t.progress_file).parent_path().string()};
    // GPU sharing works inside: the vGPU shim and its ledgers, the MPS daemon's pipes.
    process.node_paths.insert(process.node_paths.end(), t.shared_paths.writable.begin(), t.shared_paths.writable.end());
    process.node_files = t.shared_paths.read_only;
    Result<ContainerEdits> gpus = GpuEdits(a, process.env);
    if (!gpus.ok()) return Status(gpus.status().code(), "cannot give the container its GPUs: " + gpus.status().message());
    process.gpus = std::move(*gpus);
    if (a.container.network) {
      Result<std::string> netns = networks_->Join(a.key, *a.container.network);
      if (!netns.ok()) return Status(netns.status().code(), "cannot make the job's isolated network: " + netns.status().message());
      process.network_namespace = *netns;
      // Rank 0's node is the run's first: its containers' address is the overlay's first.
      process.env["MASTER_ADDR"] = JobNetworks::AddressOf(0);
      process.env["TESSERA_NETWORK_ADDRESS"] = JobNetworks::AddressOf(a.container.network->index);
    }
    Result<std::vector<std::string>> run = containers_->Prepare(a.key, a.container, *t.image, process);
    if (!run.ok()) return run.status();
    spec.argv = std::move(*run);
    spec.env.clear();
    spec.working_dir.clear();
    return Status::Ok();
  }

  // `tessera exec`, attach and port-forward reach the task from now on.
  void Publish(const LocalTask& t, const LaunchSpec& spec) {
    SessionTarget target{spec, {}, t.log_base, t.terminal};
    // What `tessera exec` starts beside the task lives only as long as its session.
    target.spec.supervisor.clear();
    target.spec.state_dir.clear();
    if (!t.process->cgroup().empty()) target.cgroup = cgroups_->ProcsFiles(t.process->cgroup());
    if (t.image) {
      target.exec_inside = [containers = containers_.get(), key = t.assignment.key](bool tty, const std::vector<std::string>& command) {
        return containers->ExecInside(key, tty, command);
      };
    }
    sessions_->Publish(t.assignment.key, std::move(target));
  }

  // An interactive session nobody has used for its idle timeout is hung up,
  // as a terminal's line would be: its shell gets SIGHUP, then SIGTERM and
  // SIGKILL after the grace, and its GPUs go back to the queue.
  void EndIdleSessions() {
    const auto now = std::chrono::steady_clock::now();
    for (auto& [key, t] : tasks_) {
      if (!t.terminal || t.exited || t.terminating || t.hung_up) continue;
      const std::chrono::milliseconds idle(t.assignment.interactive_idle_ms);
      if (now - t.terminal->last_used() < idle) continue;
      t.hung_up = true;
      t.message = "the interactive session was unused for " + std::to_string(idle.count() / 1000) + " s (its idle timeout) and was hung up";
      Log(options_.name, "job " + std::to_string(key.job) + ": " + t.message);
      t.process->Signal(SIGHUP);
      t.process->Terminate(options_.grace);
    }
  }

  // Whether `file` was touched since it had the time `before` (min(): absent).
  // Compared for change, not order: the file system's clock is coarser than ours.
  static bool CheckpointWrittenSince(const std::string& file, fs::file_time_type before) {
    std::error_code ec;
    const fs::file_time_type now = fs::last_write_time(file, ec);
    return !ec && now != before;
  }

  // Since the file was last touched in this run; nullopt when it was not.
  static std::optional<std::int64_t> TouchedAgoMs(const LocalTask& t, const std::string& file) {
    std::error_code ec;
    const fs::file_time_type touched = fs::last_write_time(file, ec);
    if (ec || touched < t.started) return std::nullopt;
    return std::max<std::int64_t>(0, std::chrono::duration_cast<std::chrono::milliseconds>(fs::file_time_type::clock::now() - touched).count());
  }
  // Since the task last touched its progress file, or since it started.
  static std::int64_t ProgressAgeMs(const LocalTask& t) {
    const std::int64_t since_start =
        std::chrono::duration_cast<std::chrono::milliseconds>(fs::file_time_type::clock::now() - t.started).count();
    return TouchedAgoMs(t, t.progress_file).value_or(std::max<std::int64_t>(0, since_start));
  }

  bool SendStatus(net::HttpClient& client) {
    api::StatusReport report;
    report.burst_memory = sharing_->BurstMemory();
    {
      std::lock_guard lock(telemetry_mu_);
      for (const GpuSample& s : telemetry_.samples) report.gpus.push_back({s.index, s.utilization_percent, s.memory_used_bytes});
    }
    for (const auto& [key, t] : tasks_) {
      if (t.terminating && !t.exited) continue;  // being stopped: the server has let it go
      report.tasks.push_back({key, t.exited, t.exit_code, t.message, t.lost, t.exited ? -1 : ProgressAgeMs(t),
                              t.exited ? -1 : TouchedAgoMs(t, t.checkpoint_file).value_or(-1)});
    }
    if (containers_) {
      report.images.emplace();
      for (const CachedImage& c : containers_->Cached()) report.images->push_back({c.references, c.digest, c.size_bytes});
    }
    for (const auto& [key, progress] : preparing_) {
      api::TaskReport preparing;
      preparing.key = key;
      preparing.preparing = true;
      preparing.message = progress;
      report.tasks.push_back(std::move(preparing));
    }
    for (const auto& [index, outage] : health_.outages()) report.unhealthy_gpus.push_back({index, outage.reason});
    report.faults = unsent_faults_;
    Authorize(client);
    Result<net::HttpResponse> r = client.Send("POST", "/v1/nodes/" + options_.name + "/status", api::ToJson(report).dump());
    if (!r.ok()) return false;
    if (r->status == 404 || r->status == 401) registered_ = false;  // the server forgot us, marked us lost, or refused the credential
    if (r->status != 200) return false;
    unsent_faults_.erase(unsent_faults_.begin(), unsent_faults_.begin() + static_cast<std::ptrdiff_t>(report.faults.size()));
    return true;
  }

  void ShipLogs(net::HttpClient& client) {
    // Stopping tasks too: what a task prints while it checkpoints belongs in its log.
    for (auto& [key, t] : tasks_) {
      if (t.log_base.empty()) continue;  // adopted and unwanted: its log is not known here
      const char* streams[2] = {"stdout", "stderr"};
      for (int s = 0; s < 2; ++s) {
        const std::string path = t.log_base + "." + streams[s];
        // Called every loop for every task: open and read only a log that grew.
        std::error_code ec;
        const std::uintmax_t size = fs::file_size(path, ec);
        if (ec || static_cast<std::int64_t>(size) <= t.shipped[s]) continue;
        std::ifstream in(path, std::ios::binary);
        if (!in) continue;
        in.seekg(t.shipped[s]);
        std::string chunk(std::min<std::uintmax_t>(kLogChunk, size - static_cast<std::uintmax_t>(t.shipped[s])), '\0');
        in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
        chunk.resize(static_cast<std::size_t>(in.gcount()));
        if (chunk.empty()) continue;
        const std::string target = "/v1/nodes/" + options_.name + "/logs?job=" + std::to_string(key.job) +
                                   "&attempt=" + std::to_string(key.attempt) + "&task=" + std::to_string(key.task) +
                                   "&stream=" + streams[s] + "&offset=" + std::to_string(t.shipped[s]);
        Authorize(client);
        Result<net::HttpResponse> r = client.Send("POST", target, chunk, "application/octet-stream");
        if (r.ok() && r->status == 200) t.shipped[s] += static_cast<std::int64_t>(chunk.size());
        if (r.ok() && r->status == 409) {  // the server has less than we sent it: send again from there
          const json answer = json::parse(r->body, nullptr, false);
          if (answer.is_object() && answer.value("size", std::int64_t{-1}) >= 0) t.shipped[s] = std::min(t.shipped[s], answer["size"].get<std::int64_t>());
        }
      }
    }
  }

  // Supervised tasks are left running for the next agent, unless the agent
  // was told to stop them; the others end with the agent.
  void Shutdown() {
    if (options_.stop_tasks_on_exit) {
      StopUnwantedAdopted();
    } else {
      for (auto& [key, process] : adopted_) process->Detach();
    }
    std::size_t left = 0, stopping = 0;
    for (auto& [key, t] : tasks_) {
      if (t.exited) continue;
      if (!options_.stop_tasks_on_exit && t.process->supervised()) {
        t.process->Detach();
        t.left_running = true;
        ++left;
        continue;
      }
      if (!t.terminating) t.process->Terminate(options_.grace);
      t.terminating = true;
      ++stopping;
    }
    Log(options_.name, "stopping " + std::to_string(stopping) + " tasks" +
                           (left > 0 ? "; " + std::to_string(left) + " left running under their supervisors for the next agent" : ""));
    const auto deadline = std::chrono::steady_clock::now() + options_.grace + std::chrono::seconds(2);
    bool running = true;
    while (running && std::chrono::steady_clock::now() < deadline) {
      running = false;
      for (auto& [key, t] : tasks_) {
        if (t.exited || t.left_running) continue;
        t.process->KillIfOverdue();
        if (const std::optional<int> status = t.process->Poll()) {
          t.exited = true;
          journal_.RecordEnd(key, *status);
          ForgetEnded(key);
        } else {
          running = true;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    // Nothing left for a next agent: the state root goes (only when empty).
    std::error_code ec;
    if (fs::remove(tasks_dir_, ec) && state_on_tmpfs_) {
      fs::remove(tasks_dir_.parent_path() / "data-dir", ec);
      fs::remove(tasks_dir_.parent_path(), ec);
    }
  }

  AgentOptions options_;
  std::vector<net::Endpoint> servers_;  // every replica of the server
  net::TlsContext tls_;                 // for https servers: trust and this node's certificate
  std::mutex credential_mu_;            // the main loop and the poller both send it
  std::string credential_;              // this node's own token, from its registration
  std::unique_ptr<GpuProvider> gpus_;
  std::unique_ptr<Cgroups> cgroups_;
  std::unique_ptr<SharedGpus> sharing_;
  bool fake_gpus_ = false;
  std::unique_ptr<ContainerTasks> containers_;  // null when the node cannot run containers
  std::unique_ptr<JobNetworks> networks_;       // spec.network: isolated (with containers_)
  bool networks_collected_ = false;
  CdiRegistry cdi_;
  std::string containers_error_;                // ...and why
  std::map<api::TaskKey, std::string> preparing_;  // tasks whose image is being pulled, and how far
  std::vector<GpuInfo> gpu_info_;
  std::map<int, std::int64_t> last_xid_;
  std::map<int, std::int64_t> xid_count_;
  GpuHealth health_{options_.gpu_health};
  std::vector<api::GpuFaultReport> unsent_faults_;  // kept until a report reaches the server
  std::mutex telemetry_mu_;  // telemetry_ is written by the loop and read by /metrics
  NodeTelemetry telemetry_;
  net::Router metrics_router_;
  std::unique_ptr<net::HttpServer> metrics_server_;
  TaskJournal journal_;
  std::unique_ptr<NodeSessions> sessions_;
  Backoff register_backoff_{kFirstRetry, kLastRetry, std::random_device{}()};
  Backoff report_backoff_{std::chrono::milliseconds(200), kLastRetry, std::random_device{}()};
  std::chrono::steady_clock::time_point retry_report_at_;  // after a failed report, not before this
  api::NodeInventory inventory_;
  std::vector<std::string> findings_;
  std::set<api::TaskKey> leftovers_;
  std::string supervisor_;   // tessera-supervise's absolute path; empty: none
  fs::path tasks_dir_;       // the tasks' state directories, absolute
  bool state_root_was_there_ = true;  // false: made anew (a tmpfs after a reboot); no pid of the journal is ours
  bool state_on_tmpfs_ = false;       // the default root under /run or /dev/shm, with its data-dir marker
  std::map<api::TaskKey, std::unique_ptr<TaskProcess>> adopted_;  // until the assignment set names them
  std::map<api::TaskKey, LocalTask> tasks_;
  std::atomic<bool> registered_{false};
  std::string last_error_;

  std::mutex mu_;  // guards the assignment set shared with the poller
  std::condition_variable wake_;
  bool woken_ = false;
  bool have_desired_ = false;
  api::AssignmentSet desired_;
};

Agent::Agent(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Agent::~Agent() = default;

Result<std::unique_ptr<Agent>> Agent::Create(AgentOptions options) {
  auto impl = std::make_unique<Impl>(std::move(options));
  TESSERA_RETURN_IF_ERROR(impl->Init());
  return std::unique_ptr<Agent>(new Agent(std::move(impl)));
}

void Agent::Run(const std::atomic<bool>& stop) { impl_->Run(stop); }
std::string Agent::Describe() const { return impl_->Describe(); }

}  // namespace tessera::node
