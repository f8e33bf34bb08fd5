// Queue operations of the control plane: list, create or update, delete.
// Queue names are paths ("research/nlp"); the tree is rebuilt and validated
// (guarantees must fit their parent's) before a change is accepted.
#include "controlplane/control_plane.h"

namespace tessera::controlplane {

using nlohmann::json;

namespace {

double Gpus(std::int64_t milli) { return static_cast<double>(milli) / 1000.0; }

}  // namespace

json ControlPlane::ListQueues() {
  std::lock_guard lock(mu_);
  EnsureState();
  std::map<model::QueueId, std::pair<std::int64_t, std::int64_t>> counts;  // pending, running
  for (const model::JobId id : state_->jobs().pending()) ++counts[state_->job(id).queue].first;
  for (const model::JobId id : state_->jobs().running()) ++counts[state_->job(id).queue].second;
  json queues = json::array();
  for (const model::Queue& q : state_->queues().queues()) {
    if (q.id == state_->queues().root()) continue;
    json j = {{"name", q.path},
              {"guaranteed", Gpus(q.guaranteed_milli)},
              {"weight", q.weight},
              {"allocatedGpus", Gpus(q.allocated.gpu_milli)},
              {"pendingJobs", counts[q.id].first},
              {"runningJobs", counts[q.id].second}};
    j["limit"] = q.limit_milli >= model::kUnlimited ? json(nullptr) : json(Gpus(q.limit_milli));
    j["userLimit"] = q.has_user_limit() ? json(Gpus(q.user_limit_milli)) : json(nullptr);
    j["requireImage"] = QueueRule(q.path, &model::QueueSpec::require_image);
    j["allowRootContainers"] = QueueRule(q.path, &model::QueueSpec::allow_root_containers);
    const auto access = queue_access_.find(q.path);
    j["admins"] = access == queue_access_.end() ? json::array() : json(access->second.admins);
    j["members"] = access == queue_access_.end() ? json::array() : json(access->second.members);
    queues.push_back(std::move(j));
  }
  return {{"queues", queues}};
}

bool ControlPlane::QueueRule(const std::string& path, bool model::QueueSpec::*rule) const {
  for (const model::QueueSpec& q : queue_specs_) {
    if (q.*rule && (path == q.path || path.starts_with(q.path + "/"))) return true;
  }
  return false;
}

void ControlPlane::PutQueue(const auth::Caller& caller, QueueChange change, Done<bool> done) {
  const std::string path = change.spec.path;
  std::lock_guard lock(mu_);
  EnsureState();
  // A queue-admin manages its subtree: the queue itself and everything below.
  if (!QueueAdmin(caller, path)) return done(PermissionDenied(caller.user + " is not an admin of queue " + path + " or of a queue above it"));
  std::vector<model::QueueSpec> next = queue_specs_;
  bool created = true;
  for (model::QueueSpec& q : next) {
    if (q.path == path) {
      q = change.spec;
      created = false;
    }
  }
  if (created) next.push_back(change.spec);
  // Validate the whole tree (names, guarantees within parents) before accepting.
  Result<model::QueueTree> tree = model::QueueTree::Build(next);
  if (!tree.ok()) return done(Infeasible(tree.status().message()));
  queue_specs_ = std::move(next);
  queue_access_[path] = std::move(change.access);
  rebuild_needed_ = true;
  PersistQueues();
  Emit(created ? "QueueCreated" : "QueueUpdated", -1, "", path);
  Commit([this, created, done = std::move(done)]() {
    RequestCycle();
    done(created);
  });
}

void ControlPlane::DeleteQueue(const auth::Caller& caller, const std::string& path, Finished done) {
  std::lock_guard lock(mu_);
  EnsureState();
  const model::QueueId id = state_->queues().Find(path);
  if (!id.valid() || id == state_->queues().root()) return done(NotFound("no queue " + path));
  // Deleting is the parent's business: an admin of the queue alone cannot.
  if (!QueueAdmin(caller, model::ParentQueuePath(path))) {
    return done(PermissionDenied(caller.user + " may not delete queue " + path + ": that takes an admin of the queue above it"));
  }
  for (const model::Queue& q : state_->queues().queues()) {
    if (q.path.starts_with(path + "/")) return done(FailedPrecondition("queue " + path + " has child queue " + q.path + "; delete it first"));
  }
  for (const auto* ids : {&state_->jobs().pending(), &state_->jobs().running()}) {
    for (const model::JobId job : *ids) {
      if (state_->job(job).queue == id) {
        return done(FailedPrecondition("queue " + path + " still has job " + std::to_string(job.value()) + " (" +
                                       std::string(ApiState(state_->job(job).state, records_.at(job).running_ms != 0)) + ")"));
      }
    }
  }
  std::erase_if(queue_specs_, [&](const model::QueueSpec& q) { return q.path == path; });
  queue_access_.erase(path);
  ForgetRegistryCredentials(path);
  PersistQueues();
  rebuild_needed_ = true;
  Emit("QueueDeleted", -1, "", path);
  Commit([done = std::move(done)]() { done(Status::Ok()); });
}

}  // namespace tessera::controlplane
