#include "bench/container_bench.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include <nlohmann/json.hpp>

#include "base/self_path.h"
#include "bench/server_process.h"
#include "node/container/container_tasks.h"
#include "node/image/command.h"
#include "node/image/loopback_registry.h"
#include "node/launch/supervisor_protocol.h"
#include "node/launch/task_process.h"

namespace tessera::bench {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using nlohmann::json;

constexpr char kReady[] = "ready";
constexpr std::chrono::seconds kTaskDeadline{60};

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }
double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

Status Run(const std::vector<std::string>& argv) {
  Result<node::CommandResult> ran = node::RunCommand({argv, std::chrono::minutes(5)});
  if (!ran.ok()) return ran.status();
  if (ran->exit_code != 0) return Internal(argv[0] + " " + argv[1] + ": " + node::ToolMessage(ran->stderr_tail));
  return Status::Ok();
}

// busybox and `mb` MiB of random bytes (which gzip cannot shrink) as image
// `layout:b`, running /bin/sh by default.
Status BuildImage(const std::string& dir, const std::string& layout, int mb) {
  const std::string bundle = dir + "/bundle";
  for (const std::vector<std::string>& step : {std::vector<std::string>{"umoci", "init", "--layout", layout},
                                               {"umoci", "new", "--image", layout + ":b"},
                                               {"umoci", "unpack", "--image", layout + ":b", bundle}}) {
    TESSERA_RETURN_IF_ERROR(Run(step));
  }
  std::error_code ec;
  fs::create_directories(bundle + "/rootfs/bin", ec);
  fs::copy_file("/bin/busybox", bundle + "/rootfs/bin/busybox", ec);
  if (ec) return FailedPrecondition("cannot copy /bin/busybox (Debian package busybox-static): " + ec.message());
  fs::create_symlink("busybox", bundle + "/rootfs/bin/sh", ec);
  std::ofstream payload(bundle + "/rootfs/payload", std::ios::binary);
  std::mt19937_64 random(42);
  std::vector<std::uint64_t> block(1 << 17);  // 1 MiB
  for (int i = 0; i < mb; ++i) {
    for (std::uint64_t& word : block) word = random();
    payload.write(reinterpret_cast<const char*>(block.data()), static_cast<std::streamsize>(block.size() * sizeof(std::uint64_t)));
  }
  payload.close();
  TESSERA_RETURN_IF_ERROR(Run({"umoci", "repack", "--image", layout + ":b", bundle}));
  return Run({"umoci", "config", "--image", layout + ":b", "--config.cmd", "/bin/sh"});
}

std::int64_t BlobBytes(const std::string& layout) {
  std::int64_t bytes = 0;
  std::error_code ec;
  for (const fs::directory_entry& blob : fs::recursive_directory_iterator(layout + "/blobs", ec)) {
    if (blob.is_regular_file(ec)) bytes += static_cast<std::int64_t>(blob.file_size(ec));
  }
  return bytes;
}

// Launches `spec` and waits for its first output line; the time from `since`.
// Then waits for it to end.
Result<double> TimeToFirstLine(const node::LaunchSpec& spec, Clock::time_point since) {
  Result<std::unique_ptr<node::TaskProcess>> process = node::TaskProcess::Launch(spec, nullptr);
  if (!process.ok()) return process.status();
  const auto deadline = Clock::now() + kTaskDeadline;
  double ms = -1;
  while (Clock::now() < deadline) {
    std::error_code ec;
    if (ms < 0 && fs::file_size(spec.stdout_path, ec) >= sizeof kReady - 1) ms = Ms(Clock::now() - since);
    if ((*process)->Poll()) break;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  if (ms < 0) {
    std::ifstream err(spec.stderr_path);
    std::string line;
    std::getline(err, line);
    return Internal(spec.argv.front() + " printed nothing within " + std::to_string(kTaskDeadline.count()) + " s: " + line);
  }
  return ms;
}

// The image for `key`, waiting for its pull (TakeImage answers "not yet" until then).
Result<node::Image> AwaitImage(node::ContainerTasks& tasks, const api::TaskKey& key, const api::ContainerAssignment& container) {
  const auto deadline = Clock::now() + std::chrono::minutes(10);
  std::string progress;
  while (Clock::now() < deadline) {
    if (std::optional<Result<node::Image>> image = tasks.TakeImage(key, container, &progress)) return std::move(*image);
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return Internal("the pull did not end within 10 minutes: " + progress);
}

node::LaunchSpec Logged(std::vector<std::string> argv, const std::string& dir, const std::string& name) {
  node::LaunchSpec spec;
  spec.argv = std::move(argv);
  spec.stdout_path = dir + "/logs/" + name + ".out";
  spec.stderr_path = dir + "/logs/" + name + ".err";
  return spec;
}

Status Measure(const ContainerBenchOptions& options, const std::string& dir, ContainerBenchResult& r) {
  if (geteuid() != 0) return FailedPrecondition("containers need root (overlay mounts, runc)");
  const std::string supervisor = BesideThisProgram(node::kSupervisorBinary);
  if (access(supervisor.c_str(), X_OK) != 0) return FailedPrecondition("no " + supervisor + " beside this program");
  const std::string layout = dir + "/layout";
  TESSERA_RETURN_IF_ERROR(BuildImage(dir, layout, options.image_mb));
  const std::int64_t bytes = BlobBytes(layout);
  r.image_mb = static_cast<double>(bytes) / (1 << 20);
  fs::create_directories(dir + "/registry");
  Result<std::unique_ptr<node::LoopbackRegistry>> registry = node::LoopbackRegistry::Start(dir + "/registry");
  if (!registry.ok()) return registry.status();
  const std::string image = (*registry)->host() + "/bench/busybox:1";
  TESSERA_RETURN_IF_ERROR(Run({"skopeo", "copy", "--quiet", "--dest-tls-verify=false", "oci:" + layout + ":b", "docker://" + image}));

  Clock::time_point t0 = Clock::now();
  TESSERA_RETURN_IF_ERROR(Run({"skopeo", "copy", "--quiet", "--src-tls-verify=false", "docker://" + image, "oci:" + dir + "/skopeo-copy:b"}));
  r.skopeo_copy_mb_per_s = r.image_mb / Seconds(Clock::now() - t0);

  node::ContainerTasksOptions node_options;
  node_options.root = dir + "/node";
  node_options.images.insecure_registries = {(*registry)->host()};
  Result<std::unique_ptr<node::ContainerTasks>> tasks = node::ContainerTasks::Open(node_options);
  if (!tasks.ok()) return tasks.status();
  api::ContainerAssignment container;
  container.image = image;
  t0 = Clock::now();
  Result<node::Image> cold = AwaitImage(**tasks, {0, 1, 0}, container);
  if (!cold.ok()) return cold.status();
  r.pull_mb_per_s = r.image_mb / Seconds(Clock::now() - t0);

  fs::create_directories(dir + "/logs");
  std::vector<double> contained, bare, podman;
  for (int i = 0; i < options.tasks; ++i) {
    const api::TaskKey key{1, 1, i};
    t0 = Clock::now();
    Result<node::Image> cached = AwaitImage(**tasks, key, container);
    if (!cached.ok()) return cached.status();
    node::ContainerProcess process;
    process.command = {"/bin/sh", "-c", std::string("echo ") + kReady};
    Result<std::vector<std::string>> run = (*tasks)->Prepare(key, container, *cached, process);
    if (!run.ok()) return run.status();
    node::LaunchSpec spec = Logged(*run, dir, "c" + std::to_string(i));
    spec.supervisor = supervisor;
    spec.state_dir = dir + "/state/c" + std::to_string(i);
    Result<double> ms = TimeToFirstLine(spec, t0);
    (*tasks)->Remove(key);
    if (!ms.ok()) return ms.status();
    contained.push_back(*ms);

    node::LaunchSpec host = Logged({"/bin/sh", "-c", std::string("echo ") + kReady}, dir, "b" + std::to_string(i));
    host.supervisor = supervisor;
    host.state_dir = dir + "/state/b" + std::to_string(i);
    Result<double> host_ms = TimeToFirstLine(host, Clock::now());
    if (!host_ms.ok()) return host_ms.status();
    bare.push_back(*host_ms);
  }
  r.container_start_p50_ms = Percentile(contained, 0.5);
  r.container_start_p99_ms = Percentile(contained, 0.99);
  r.bare_start_p50_ms = Percentile(bare, 0.5);
  r.bare_start_p99_ms = Percentile(bare, 0.99);

  if (options.podman.empty()) {
    r.podman_error = "not asked for";
    return Status::Ok();
  }
  if (Status pulled = Run({options.podman, "pull", "--quiet", "--tls-verify=false", "docker://" + image}); !pulled.ok()) {
    r.podman_error = pulled.message();
    return Status::Ok();
  }
  for (int i = 0; i < options.tasks; ++i) {
    const node::LaunchSpec spec = Logged({options.podman, "run", "--rm", "--network=host", "--pull=never", image, "/bin/sh", "-c",
                                          std::string("echo ") + kReady},
                                         dir, "p" + std::to_string(i));
    Result<double> ms = TimeToFirstLine(spec, Clock::now());
    if (!ms.ok()) {
      r.podman_error = ms.status().message();
      return Status::Ok();
    }
    podman.push_back(*ms);
  }
  (void)Run({options.podman, "rmi", "--force", image});
  r.podman_start_p50_ms = Percentile(podman, 0.5);
  r.podman_start_p99_ms = Percentile(podman, 0.99);
  return Status::Ok();
}

}  // namespace

ContainerBenchResult RunContainerBench(const ContainerBenchOptions& options) {
  ContainerBenchResult r;
  r.tasks = options.tasks;
  char pattern[] = "/var/tmp/tessera-bench-containers.XXXXXX";  // not /tmp: often a tmpfs without room for the image
  if (mkdtemp(pattern) == nullptr) {
    r.error = "cannot create a directory under /var/tmp";
    return r;
  }
  const std::string dir = pattern;
  if (Status measured = Measure(options, dir, r); !measured.ok()) r.error = measured.message();
  std::error_code ec;
  fs::remove_all(dir, ec);
  return r;
}

std::string ToJson(const ContainerBenchResult& r) {
  json out = {{"tasks", r.tasks},
              {"image_mb", r.image_mb},
              {"pull_mb_per_s", r.pull_mb_per_s},
              {"skopeo_copy_mb_per_s", r.skopeo_copy_mb_per_s},
              {"pull_vs_skopeo", r.skopeo_copy_mb_per_s > 0 ? r.pull_mb_per_s / r.skopeo_copy_mb_per_s : 0},
              {"container_start_p50_ms", r.container_start_p50_ms},
              {"container_start_p99_ms", r.container_start_p99_ms},
              {"bare_start_p50_ms", r.bare_start_p50_ms},
              {"bare_start_p99_ms", r.bare_start_p99_ms}};
  if (r.podman_error.empty()) {
    out["podman_start_p50_ms"] = r.podman_start_p50_ms;
    out["podman_start_p99_ms"] = r.podman_start_p99_ms;
    out["container_vs_podman_p50"] = r.podman_start_p50_ms > 0 ? r.container_start_p50_ms / r.podman_start_p50_ms : 0;
  } else {
    out["podman_error"] = r.podman_error;
  }
  if (!r.error.empty()) out["error"] = r.error;
  return out.dump(2);
}

std::string ToText(const ContainerBenchResult& r) {
  if (!r.error.empty()) return "tessera bench containers: " + r.error;
  char text[1024];
  std::snprintf(text, sizeof text,
                "image %.1f MiB: pull %.1f MiB/s (skopeo copy alone %.1f MiB/s)\n"
                "%d starts, p50 / p99 ms: container %.1f / %.1f, host process %.1f / %.1f",
                r.image_mb, r.pull_mb_per_s, r.skopeo_copy_mb_per_s, r.tasks, r.container_start_p50_ms, r.container_start_p99_ms,
                r.bare_start_p50_ms, r.bare_start_p99_ms);
  std::string out = text;
  if (r.podman_error.empty()) {
    std::snprintf(text, sizeof text, ", podman run %.1f / %.1f (container/podman p50 %.2f)", r.podman_start_p50_ms,
                  r.podman_start_p99_ms, r.podman_start_p50_ms > 0 ? r.container_start_p50_ms / r.podman_start_p50_ms : 0);
    out += text;
  } else {
    out += "; podman not measured: " + r.podman_error;
  }
  return out;
}

}  // namespace tessera::bench
