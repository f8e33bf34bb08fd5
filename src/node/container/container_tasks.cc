#include "node/container/container_tasks.h"

#include <charconv>
#include <filesystem>
#include <utility>

namespace tessera::node {
namespace {

namespace fs = std::filesystem;

std::string ProgressLine(const std::string& image, const PullProgress& p) {
  const std::string attempt = p.attempt > 1 ? " (attempt " + std::to_string(p.attempt) + ")" : "";
  switch (p.phase) {
    case PullProgress::Phase::kWaiting: return "waiting for another task's pull of " + image;
    case PullProgress::Phase::kPulling:
      return "pulling " + image + ": " + std::to_string(p.blobs_started) + " blobs copied or being copied" + attempt;
    case PullProgress::Phase::kRetrying: return "pulling " + image + " failed, retrying" + attempt + ": " + p.detail;
    case PullProgress::Phase::kUnpacking:
      return "unpacking " + image + ": " + std::to_string(p.layers) + " layers, " + std::to_string(p.bytes) + " bytes";
    case PullProgress::Phase::kReady: break;
  }
  return image + " is on the node: " + std::to_string(p.bytes) + " bytes";
}

std::optional<std::uint32_t> Number(std::string_view text) {
  std::uint32_t n = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return n;
}

// The image's USER ("uid", "uid:gid", "root"; empty: root) as numbers. A
// user or group name other than root would need the image's /etc/passwd:
// refused, with the way out (the task's `user`).
Status ImageUser(const Image& image, std::uint32_t* uid, std::uint32_t* gid) {
  const std::string& user = image.config.user;
  const std::size_t colon = user.find(':');
  const std::string name = user.substr(0, colon);
  const std::optional<std::uint32_t> u = name.empty() || name == "root" ? 0 : Number(name);
  const std::string group = colon == std::string::npos ? "" : user.substr(colon + 1);
  const std::optional<std::uint32_t> g = group.empty() ? u : group == "root" ? 0 : Number(group);
  if (!u || !g) {
    return InvalidArgument("image " + image.reference + " runs as user '" + user +
                           "', a name; give the task a numeric user (user: \"UID:GID\")");
  }
  *uid = *u;
  *gid = *g;
  return Status::Ok();
}

}  // namespace

std::string ContainerId(const api::TaskKey& key) {
  return "tessera-" + std::to_string(key.job) + "-" + std::to_string(key.attempt) + "-" + std::to_string(key.task);
}

Result<std::unique_ptr<ContainerTasks>> ContainerTasks::Open(ContainerTasksOptions options) {
  Result<std::unique_ptr<ImageStore>> store = ImageStore::Open(options.root + "/images", options.images);
  if (!store.ok()) return store.status();
  return std::unique_ptr<ContainerTasks>(new ContainerTasks(std::move(options), std::move(*store)));
}

ContainerTasks::ContainerTasks(ContainerTasksOptions options, std::unique_ptr<ImageStore> store)
    : options_(std::move(options)), store_(std::move(store)), runtime_(RuncOptions{options_.runc, options_.root + "/runc"}) {}

ContainerTasks::~ContainerTasks() {
  for (Worker& w : workers_) w.thread.detach();
}

std::string ContainerTasks::Describe() const {
  std::string images = std::to_string(store_->List().size()) + " images cached in " + options_.root + "/images";
  return "containers: runc (" + options_.runc + "), " + images;
}

std::string ContainerTasks::BundleDir(const api::TaskKey& key) const {
  return options_.root + "/bundles/" + std::to_string(key.job) + "." + std::to_string(key.attempt) + "." + std::to_string(key.task);
}

void ContainerTasks::JoinFinished() {
  std::erase_if(workers_, [](Worker& w) {
    {
      std::lock_guard lock(w.pull->mu);
      if (!w.pull->result) return false;
    }
    w.thread.join();  // it has set its result: at most the last lines of its function remain
    return true;
  });
}

std::optional<Result<Image>> ContainerTasks::TakeImage(const api::TaskKey& key, const api::ContainerAssignment& container,
                                                       std::string* progress) {
  JoinFinished();
  auto [it, is_new] = pulls_.try_emplace(key);
  if (is_new) {
    it->second = std::make_shared<Pull>();
    const std::shared_ptr<Pull> pull = it->second;
    pull->progress = "pulling " + container.image;
    Worker worker{pull, {}};
    const bool collect = options_.images.size_limit_bytes > 0;
    worker.thread = std::thread([store = store_, pull = pull, container, collect]() mutable {
      Result<Image> image = [&]() -> Result<Image> {
        Result<ImageReference> ref = model::ParseImageReference(container.image);
        if (!ref.ok()) return Status(ref.status().code(), "image " + container.image + ": " + ref.status().message());
        const PullPolicy policy = model::ParsePullPolicy(container.pull_policy).value_or(PullPolicy::kIfNotPresent);
        std::optional<Credentials> login;
        if (container.login) login = Credentials{container.login->username, container.login->password};
        return store->Ensure(*ref, policy, login, [&](const PullProgress& p) {
          std::lock_guard lock(pull->mu);
          pull->progress = ProgressLine(container.image, p);
        });
      }();
      // Room for what came in: unused images beyond the size limit go. Here,
      // on the pull's thread and before its result is out, because the agent
      // joins a thread once its result is out and must not wait for this.
      if (image.ok() && collect) (void)store->Collect();
      {
        std::lock_guard lock(pull->mu);
        pull->result = std::move(image);
      }
      pull.reset();  // a result nobody took (its lease) goes before the store it leases from
    });
    workers_.push_back(std::move(worker));
  }
  const std::shared_ptr<Pull> pull = it->second;
  std::lock_guard lock(pull->mu);
  if (!pull->result) {
    *progress = pull->progress;
    return std::nullopt;
  }
  std::optional<Result<Image>> done = std::move(pull->result);
  pull->result = Result<Image>(Status(StatusCode::kInternal, "taken"));  // still "ended" for JoinFinished
  pulls_.erase(it);
  return done;
}

void ContainerTasks::Abandon(const api::TaskKey& key) { pulls_.erase(key); }

Result<Image> ContainerTasks::LeaseCached(const api::ContainerAssignment& container) {
  Result<ImageReference> ref = model::ParseImageReference(container.image);
  if (!ref.ok()) return ref.status();
  return store_->Ensure(*ref, PullPolicy::kNever);
}

Result<std::vector<std::string>> ContainerTasks::Prepare(const api::TaskKey& key, const api::ContainerAssignment& container,
                                                         const Image& image, const ContainerProcess& process) const {
  ContainerSpec spec;
  spec.args = !process.command.empty() ? process.command : image.config.entrypoint;
  if (process.command.empty()) spec.args.insert(spec.args.end(), image.config.cmd.begin(), image.config.cmd.end());
  if (spec.args.empty()) {
    return InvalidArgument("image " + image.reference + " names no entrypoint or cmd, and the task no command");
  }
  // The image's environment, the GPUs' CDI edits over it, the task's over both.
  std::map<std::string, std::string> env;
  for (const std::vector<std::string>* entries : {&image.config.env, &process.gpus.env}) {
    for (const std::string& entry : *entries) {
      const std::size_t eq = entry.find('=');
      if (eq != std::string::npos) env[entry.substr(0, eq)] = entry.substr(eq + 1);
    }
  }
  for (const auto& [name, value] : process.env) env[name] = value;
  if (!env.contains("PATH")) env["PATH"] = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  for (const auto& [name, value] : env) spec.env.push_back(name + "=" + value);
  spec.cwd = !process.working_dir.empty() ? process.working_dir : !image.config.working_dir.empty() ? image.config.working_dir : "/";
  if (container.uid >= 0) {
    spec.uid = static_cast<std::uint32_t>(container.uid);
    spec.gid = static_cast<std::uint32_t>(container.gid >= 0 ? container.gid : container.uid);
  } else {
    TESSERA_RETURN_IF_ERROR(ImageUser(image, &spec.uid, &spec.gid));
  }
  if (spec.uid == 0 && !container.allow_root) {
    return PermissionDenied("the container would run as root (the node's root: there is no user namespace), which its queue does "
                            "not allow (allowRootContainers); give the task a user: \"UID:GID\"");
  }
  spec.hostname = process.hostname;
  if (container.shm_bytes > 0) spec.shm_bytes = container.shm_bytes;
  spec.cgroups_path = process.cgroups_path;
  spec.host_network = process.network_namespace.empty();
  spec.network_namespace = process.network_namespace;
  for (const api::ContainerAssignment::Mount& m : container.mounts) {
    std::error_code ec;
    if (!fs::exists(m.host_path, ec)) {
      return FailedPrecondition("mount " + m.host_path + " -> " + m.mount_path + ": " + m.host_path + " does not exist on this node");
    }
    spec.mounts.push_back({m.host_path, m.mount_path, m.read_only});
  }
  for (const std::string& path : process.node_paths) spec.mounts.push_back({path, path, false});
  for (const std::string& path : process.node_files) spec.mounts.push_back({path, path, true});
  spec.mounts.insert(spec.mounts.end(), process.gpus.mounts.begin(), process.gpus.mounts.end());
  spec.devices = process.gpus.device_nodes;
  spec.hooks = process.gpus.hooks;
  return runtime_.Prepare(ContainerId(key), BundleDir(key), image.bundle + "/rootfs", std::move(spec));
}

void ContainerTasks::Remove(const api::TaskKey& key) const {
  const std::string dir = BundleDir(key);
  std::error_code ec;
  if (!fs::exists(dir, ec)) return;
  runtime_.Remove(ContainerId(key), dir);
  fs::remove_all(dir, ec);
}


}  // namespace tessera::node
