// Queue operations of the control plane: list, create or update, delete.
// Queue names are paths ("research/nlp"); the tree is rebuilt and validated
// (guarantees must fit their parent's) before a change is accepted.
#include <tuple>

#include "api/json_reader.h"
#include "controlplane/control_plane.h"
#include "controlplane/responses.h"

namespace tessera::controlplane {

using nlohmann::json;

namespace {

double Gpus(std::int64_t milli) { return static_cast<double>(milli) / 1000.0; }

}  // namespace

net::HttpResponse ControlPlane::ListQueues(const net::HttpRequest&) {
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
    const auto access = queue_access_.find(q.path);
    j["admins"] = access == queue_access_.end() ? json::array() : json(access->second.admins);
    j["members"] = access == queue_access_.end() ? json::array() : json(access->second.members);
    queues.push_back(std::move(j));
  }
  return JsonResponse(200, {{"queues", queues}});
}

void ControlPlane::PutQueue(const net::HttpRequest& request, Reply reply) {
  const std::string path = request.params.at("path");
  Result<json> body = api::ParseJsonBody(request.body.empty() ? "{}" : request.body);
  if (!body.ok()) return reply(StatusResponse(body.status()));
  Result<api::JsonObject> o = api::JsonObject::Read(*body, "", {"guaranteed", "limit", "weight", "userLimit", "admins", "members"});
  if (!o.ok()) return reply(StatusResponse(o.status()));
  QueueAccess access;
  if (Status s = o->ReadStringList("admins", &access.admins); !s.ok()) return reply(StatusResponse(s));
  if (Status s = o->ReadStringList("members", &access.members); !s.ok()) return reply(StatusResponse(s));
  double guaranteed = 0, weight = 1;
  double limit = -1, user_limit = -1;
  if (Status s = o->ReadNumber("guaranteed", &guaranteed); !s.ok()) return reply(StatusResponse(s));
  if (Status s = o->ReadNumber("weight", &weight); !s.ok()) return reply(StatusResponse(s));
  constexpr double kMostGpus = 1e9;  // far beyond any cluster, and safe in milli-GPUs
  // Optional limits: absent or null for none.
  for (auto [key, out, least] : {std::tuple{"limit", &limit, 0.0}, {"userLimit", &user_limit, 0.001}}) {
    if (!o->Has(key) || o->Raw(key).is_null()) continue;
    if (Status s = o->ReadNumber(key, out); !s.ok()) return reply(StatusResponse(s));
    if (*out < least || *out > kMostGpus) {
      return reply(net::ErrorResponse(400, std::string(key) + ": must be between " + (least > 0 ? "0.001" : "0") + " and 1e9 GPUs"));
    }
  }
  if (guaranteed < 0 || guaranteed > kMostGpus) return reply(net::ErrorResponse(400, "guaranteed: must be between 0 and 1e9 GPUs"));
  if (weight <= 0) return reply(net::ErrorResponse(400, "weight: must be above zero"));
  const auto milli_or_unlimited = [](double gpus) { return gpus < 0 ? model::kUnlimited : static_cast<std::int64_t>(gpus * 1000 + 0.5); };
  model::QueueSpec spec{path, static_cast<std::int64_t>(guaranteed * 1000 + 0.5), milli_or_unlimited(limit), weight,
                        milli_or_unlimited(user_limit)};

  std::lock_guard lock(mu_);
  EnsureState();
  // A queue-admin manages its subtree: the queue itself and everything below.
  if (!QueueAdmin(request.caller, path)) {
    return reply(net::ErrorResponse(403, request.caller.user + " is not an admin of queue " + path + " or of a queue above it"));
  }
  std::vector<model::QueueSpec> next = queue_specs_;
  bool created = true;
  for (model::QueueSpec& q : next) {
    if (q.path == path) {
      q = spec;
      created = false;
    }
  }
  if (created) next.push_back(spec);
  // Validate the whole tree (names, guarantees within parents) before accepting.
  Result<model::QueueTree> tree = model::QueueTree::Build(next);
  if (!tree.ok()) return reply(net::ErrorResponse(422, tree.status().message()));
  queue_specs_ = std::move(next);
  queue_access_[path] = std::move(access);
  rebuild_needed_ = true;
  PersistQueues();
  Emit(created ? "QueueCreated" : "QueueUpdated", -1, "", path);
  Commit([this, path, created, reply]() {
    RequestCycle();
    reply(JsonResponse(created ? 201 : 200, {{"name", path}}));
  });
}

void ControlPlane::DeleteQueue(const net::HttpRequest& request, Reply reply) {
  const std::string path = request.params.at("path");
  std::lock_guard lock(mu_);
  EnsureState();
  const model::QueueId id = state_->queues().Find(path);
  if (!id.valid() || id == state_->queues().root()) return reply(net::ErrorResponse(404, "no queue " + path));
  // Deleting is the parent's business: an admin of the queue alone cannot.
  const std::size_t slash = path.find_last_of('/');
  if (!QueueAdmin(request.caller, slash == std::string::npos ? std::string() : path.substr(0, slash))) {
    return reply(net::ErrorResponse(403, request.caller.user + " may not delete queue " + path + ": that takes an admin of the queue above it"));
  }
  for (const model::Queue& q : state_->queues().queues()) {
    if (q.path.starts_with(path + "/")) return reply(net::ErrorResponse(409, "queue " + path + " has child queue " + q.path + "; delete it first"));
  }
  for (const auto* ids : {&state_->jobs().pending(), &state_->jobs().running()}) {
    for (const model::JobId job : *ids) {
      if (state_->job(job).queue == id) {
        return reply(net::ErrorResponse(409, "queue " + path + " still has job " + std::to_string(job.value()) + " (" +
                                                 std::string(ApiState(state_->job(job).state, records_.at(job).running_ms != 0)) + ")"));
      }
    }
  }
  std::erase_if(queue_specs_, [&](const model::QueueSpec& q) { return q.path == path; });
  queue_access_.erase(path);
  PersistQueues();
  rebuild_needed_ = true;
  Emit("QueueDeleted", -1, "", path);
  Commit([this, reply]() {
    reply(net::HttpResponse{204, "application/json", "", {}});
  });
}

}  // namespace tessera::controlplane
