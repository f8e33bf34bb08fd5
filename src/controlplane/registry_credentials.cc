// Queues' logins to image registries (docs/containers.md): set, listed
// without their passwords, deleted; and the one a job's pull uses.
//
// A login set on a queue serves the jobs of that queue and of the queues
// below it, the nearest queue's first, as the container rules do. Passwords
// stay in memory and sealed in the store; the only way out is a task
// assignment, to the agent that pulls the image.
#include <filesystem>

#include "controlplane/control_plane.h"
#include "model/image_reference.h"

namespace tessera::controlplane {

using nlohmann::json;

namespace {

constexpr std::size_t kMostCredentialBytes = 4096;  // far beyond any username, password or token

// "host[:port]" as the registry of an image reference; what a reference to
// an image on it would parse to, or why not.
Status CheckRegistry(const std::string& registry) {
  Result<model::ImageReference> ref = model::ParseImageReference(registry + "/image");
  if (registry.empty() || !ref.ok() || ref->kind != model::ImageReference::Kind::kRegistry || ref->registry != registry) {
    return InvalidArgument("registry: '" + registry + "' is not a registry host as image references name it (host[:port], e.g. registry.example.com:5000)");
  }
  return Status::Ok();
}

}  // namespace

void ControlPlane::PutRegistryCredential(const auth::Caller& caller, RegistryLogin login, Done<bool> done) {
  if (Status registry = CheckRegistry(login.registry); !registry.ok()) return done(registry);
  if (login.username.empty() || login.username.find(':') != std::string::npos) {
    return done(InvalidArgument("username: must be given, without ':'"));
  }
  if (login.password.empty()) return done(InvalidArgument("password: must be given"));
  if (login.username.size() + login.password.size() > kMostCredentialBytes) {
    return done(InvalidArgument("username and password: more than " + std::to_string(kMostCredentialBytes) + " bytes"));
  }
  std::lock_guard lock(mu_);
  EnsureState();
  if (!state_->queues().Find(login.queue).valid()) return done(NotFound("no queue " + login.queue));
  if (!QueueAdmin(caller, login.queue)) {
    return done(PermissionDenied(caller.user + " is not an admin of queue " + login.queue + " or of a queue above it"));
  }
  Result<const auth::SecretBox*> box = Secrets(/*create=*/true);
  if (!box.ok()) return done(box.status());
  RegistryCredential credential{login.queue, login.registry, std::move(login.username), std::move(login.password), caller.user, NowMs()};
  auto [key, value] = EncodeRegistryCredential(credential, **box);
  writes_.push_back(store::Mutation::Put(store::Collection::kRegistryCredentials, std::move(key), std::move(value)));
  const auto [it, created] = registry_credentials_.insert_or_assign({credential.queue, credential.registry}, credential);
  Emit(created ? "RegistryLoginSet" : "RegistryLoginUpdated", -1, "",
       "queue " + it->second.queue + " pulls from " + it->second.registry + " as " + it->second.username);
  Commit([created = created, done = std::move(done)]() { done(created); });
}

json ControlPlane::ListRegistryCredentials(const auth::Caller& caller) {
  std::lock_guard lock(mu_);
  json logins = json::array();
  for (const auto& [key, c] : registry_credentials_) {
    if (!QueueAdmin(caller, c.queue)) continue;
    logins.push_back({{"queue", c.queue}, {"registry", c.registry}, {"username", c.username}, {"updatedBy", c.updated_by},
                      {"updated", c.updated_ms}});
  }
  return {{"registryCredentials", logins}};
}

void ControlPlane::DeleteRegistryCredential(const auth::Caller& caller, const std::string& queue, const std::string& registry,
                                            Finished done) {
  std::lock_guard lock(mu_);
  if (!QueueAdmin(caller, queue)) return done(PermissionDenied(caller.user + " is not an admin of queue " + queue + " or of a queue above it"));
  const auto it = registry_credentials_.find({queue, registry});
  if (it == registry_credentials_.end()) return done(NotFound("queue " + queue + " has no login for registry " + registry));
  writes_.push_back(store::Mutation::Delete(store::Collection::kRegistryCredentials, RegistryCredentialKey(queue, registry)));
  registry_credentials_.erase(it);
  Emit("RegistryLoginDeleted", -1, "", "queue " + queue + " no longer logs in to " + registry);
  Commit([done = std::move(done)]() { done(Status::Ok()); });
}

void ControlPlane::ForgetRegistryCredentials(const std::string& queue) {
  for (auto it = registry_credentials_.begin(); it != registry_credentials_.end();) {
    if (it->first.first != queue) {
      ++it;
      continue;
    }
    writes_.push_back(store::Mutation::Delete(store::Collection::kRegistryCredentials, RegistryCredentialKey(queue, it->first.second)));
    it = registry_credentials_.erase(it);
  }
}

std::optional<api::ContainerAssignment::Login> ControlPlane::RegistryLoginFor(const std::string& queue, const std::string& image) const {
  Result<model::ImageReference> ref = model::ParseImageReference(image);
  if (!ref.ok() || ref->kind != model::ImageReference::Kind::kRegistry) return std::nullopt;
  for (std::string path = queue; !path.empty(); path = model::ParentQueuePath(path)) {
    const auto it = registry_credentials_.find({path, ref->registry});
    if (it != registry_credentials_.end()) return api::ContainerAssignment::Login{it->second.username, it->second.password};
  }
  return std::nullopt;
}

Result<const auth::SecretBox*> ControlPlane::Secrets(bool create) {
  if (secrets_) return &*secrets_;
  if (options_.secret_key_file.empty()) return FailedPrecondition("this server keeps no secrets: it was started without a secret key file");
  if (!create && !std::filesystem::exists(options_.secret_key_file)) {
    return FailedPrecondition("no secret key at " + options_.secret_key_file + " to open it (restore the key file the store was written with)");
  }
  Result<auth::SecretBox> box = auth::SecretBox::OpenOrCreate(options_.secret_key_file);
  if (!box.ok()) return box.status();
  secrets_ = std::move(*box);
  return &*secrets_;
}

}  // namespace tessera::controlplane
