#include "controlplane/record_codecs.h"

#include <algorithm>
#include <limits>

#include "api/agent_protocol.h"
#include "api/json_reader.h"
#include "controlplane/rendezvous_ports.h"
#include "store/state_store.h"

namespace tessera::controlplane {
namespace {

using nlohmann::json;
using api::JsonObject;

constexpr std::int64_t kMaxI64 = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMaxI32 = std::numeric_limits<std::int32_t>::max();

// The value of a record as a JSON object, or why it is not one.
Result<json> ParseObject(std::string_view value) {
  Result<json> parsed = api::ParseJsonBody(value);
  if (!parsed.ok()) return InvalidArgument("value: " + parsed.status().message());
  if (!parsed->is_object()) return InvalidArgument("value: expected a JSON object");
  return parsed;
}

Status KeyMatches(std::string_view key, std::string_view field, const std::string& value) {
  if (value == key) return Status::Ok();
  return InvalidArgument(std::string(field) + ": '" + value + "' differs from the record's key");
}

Status ReadIntList(const JsonObject& o, std::string_view key, std::vector<std::int32_t>* out, std::int64_t max) {
  Result<std::vector<std::pair<std::string, const json*>>> items = o.Items(key);
  if (!items.ok()) return items.status();
  out->clear();
  for (const auto& [path, item] : *items) {
    if (!item->is_number_integer() || item->get<std::int64_t>() < 0 || item->get<std::int64_t>() > max) {
      return InvalidArgument(path + ": expected an integer between 0 and " + std::to_string(max));
    }
    out->push_back(item->get<std::int32_t>());
  }
  return Status::Ok();
}

json TaskDocument(const TaskRecord& t) {
  json task = {{"name", t.name},         {"group", t.group},         {"index", t.index},       {"node", t.node},
               {"gpus", t.gpus},         {"gpuMilli", t.gpu_milli},  {"gpuMemory", t.gpu_memory},
               {"cpuMilli", t.cpu_milli}, {"memory", t.memory},       {"state", ToString(t.state)}};
  if (!t.mig_device.empty()) task["migDevice"] = t.mig_device;
  if (t.state == TaskState::kExited) task["exitCode"] = t.exit_code;
  if (!t.message.empty()) task["message"] = t.message;
  return task;
}

Result<TaskRecord> DecodeTask(const json& value, const std::string& path) {
  Result<JsonObject> o = JsonObject::Read(
      value, path,
      {"name", "group", "index", "node", "gpus", "gpuMilli", "gpuMemory", "migDevice", "cpuMilli", "memory", "state", "exitCode", "message"},
      {"name", "group", "index", "node", "gpus", "gpuMilli", "gpuMemory", "cpuMilli", "memory", "state"});
  if (!o.ok()) return o.status();
  TaskRecord t;
  std::string state;
  TESSERA_RETURN_IF_ERROR(o->ReadString("name", &t.name));
  TESSERA_RETURN_IF_ERROR(o->ReadInt32("group", &t.group, 0, kMaxI32));
  TESSERA_RETURN_IF_ERROR(o->ReadInt32("index", &t.index, 0, kMaxI32));
  TESSERA_RETURN_IF_ERROR(o->ReadString("node", &t.node));
  TESSERA_RETURN_IF_ERROR(ReadIntList(*o, "gpus", &t.gpus, 63));
  TESSERA_RETURN_IF_ERROR(o->ReadInt32("gpuMilli", &t.gpu_milli, 0, 1000));
  TESSERA_RETURN_IF_ERROR(o->ReadInt("gpuMemory", &t.gpu_memory, 0, kMaxI64));
  TESSERA_RETURN_IF_ERROR(o->ReadString("migDevice", &t.mig_device));
  TESSERA_RETURN_IF_ERROR(o->ReadInt("cpuMilli", &t.cpu_milli, 0, kMaxI64));
  TESSERA_RETURN_IF_ERROR(o->ReadInt("memory", &t.memory, 0, kMaxI64));
  TESSERA_RETURN_IF_ERROR(o->ReadString("state", &state));
  TESSERA_RETURN_IF_ERROR(o->ReadInt32("exitCode", &t.exit_code, std::numeric_limits<std::int32_t>::min(), kMaxI32));
  TESSERA_RETURN_IF_ERROR(o->ReadString("message", &t.message));
  if (state == "assigned") {
    t.state = TaskState::kAssigned;
  } else if (state == "running") {
    t.state = TaskState::kRunning;
  } else if (state == "exited") {
    t.state = TaskState::kExited;
  } else {
    return o->Error("state", "'" + state + "' is not assigned, running or exited");
  }
  return t;
}

}  // namespace

Result<model::JobId> DecodeJobKey(std::string_view key) {
  bool digits = key.size() == store::NumericKey(0).size();
  std::int64_t id = 0;
  for (const char c : key) {
    digits = digits && c >= '0' && c <= '9';
    if (digits) id = id * 10 + (c - '0');
    if (id > kMaxI32) digits = false;
  }
  if (!digits) return InvalidArgument("key: not a job id (20 decimal digits, at most " + std::to_string(kMaxI32) + ")");
  return model::JobId(static_cast<std::int32_t>(id));
}

// --- queues ---------------------------------------------------------------------

std::string EncodeQueue(const model::QueueSpec& q, const QueueAccess& access) {
  return api::Dump({{"name", q.path},
                    {"guaranteedMilli", q.guaranteed_milli},
                    {"limitMilli", q.limit_milli},
                    {"weight", q.weight},
                    {"userLimitMilli", q.user_limit_milli},
                    {"requireImage", q.require_image},
                    {"allowRootContainers", q.allow_root_containers},
                    {"admins", access.admins},
                    {"members", access.members}});
}

Result<StoredQueue> DecodeQueue(std::string_view key, std::string_view value) {
  Result<json> j = ParseObject(value);
  if (!j.ok()) return j.status();
  // Stores written before queue access (or container rules) existed have no admins or members (or rules).
  Result<JsonObject> o = JsonObject::Read(*j, "", {"name", "guaranteedMilli", "limitMilli", "weight", "userLimitMilli", "admins", "members",
                                                   "requireImage", "allowRootContainers"},
                                          {"name", "guaranteedMilli", "limitMilli", "weight"});
  if (!o.ok()) return o.status();
  StoredQueue q;
  TESSERA_RETURN_IF_ERROR(o->ReadString("name", &q.spec.path));
  TESSERA_RETURN_IF_ERROR(KeyMatches(key, "name", q.spec.path));
  TESSERA_RETURN_IF_ERROR(o->ReadInt("guaranteedMilli", &q.spec.guaranteed_milli, 0, model::kUnlimited));
  TESSERA_RETURN_IF_ERROR(o->ReadInt("limitMilli", &q.spec.limit_milli, 0, model::kUnlimited));
  TESSERA_RETURN_IF_ERROR(o->ReadNumber("weight", &q.spec.weight));
  if (!(q.spec.weight > 0)) return o->Error("weight", "must be above 0");
  TESSERA_RETURN_IF_ERROR(o->ReadInt("userLimitMilli", &q.spec.user_limit_milli, 0, model::kUnlimited));
  TESSERA_RETURN_IF_ERROR(o->ReadStringList("admins", &q.access.admins));
  TESSERA_RETURN_IF_ERROR(o->ReadStringList("members", &q.access.members));
  TESSERA_RETURN_IF_ERROR(o->ReadBool("requireImage", &q.spec.require_image));
  TESSERA_RETURN_IF_ERROR(o->ReadBool("allowRootContainers", &q.spec.allow_root_containers));
  return q;
}

// --- nodes ----------------------------------------------------------------------

std::string EncodeNode(const NodeRecord& node) {
  json unhealthy = json::object();
  for (const auto& [index, reason] : node.unhealthy_gpus) unhealthy[std::to_string(index)] = reason;
  return api::Dump({{"inventory", api::ToJson(node.inventory)},
                    {"cordoned", node.cordoned},
                    {"state", ToString(node.state)},
                    {"registered", node.registered_ms},
                    {"unhealthyGpus", unhealthy}});
}

Result<NodeRecord> DecodeNode(std::string_view key, std::string_view value) {
  Result<json> j = ParseObject(value);
  if (!j.ok()) return j.status();
  Result<JsonObject> o = JsonObject::Read(*j, "", {"inventory", "cordoned", "state", "registered", "unhealthyGpus"}, {"inventory", "state"});
  if (!o.ok()) return o.status();
  NodeRecord node;
  Result<api::NodeInventory> inventory = api::NodeInventoryFromJson(o->Raw("inventory"));
  if (!inventory.ok()) return InvalidArgument("inventory." + inventory.status().message());
  node.inventory = std::move(*inventory);
  TESSERA_RETURN_IF_ERROR(KeyMatches(key, "inventory.name", node.inventory.name));
  TESSERA_RETURN_IF_ERROR(o->ReadBool("cordoned", &node.cordoned));
  std::string state;
  TESSERA_RETURN_IF_ERROR(o->ReadString("state", &state));
  if (state == "ready") {
    node.state = NodeState::kReady;
  } else if (state == "lost") {
    node.state = NodeState::kLost;
  } else {
    return o->Error("state", "'" + state + "' is not ready or lost");
  }
  TESSERA_RETURN_IF_ERROR(o->ReadInt("registered", &node.registered_ms, 0, kMaxI64));
  if (o->Has("unhealthyGpus")) {
    const json& unhealthy = o->Raw("unhealthyGpus");
    if (!unhealthy.is_object()) return o->Error("unhealthyGpus", "expected an object of GPU index to reason");
    for (const auto& [index, reason] : unhealthy.items()) {
      const std::string path = "unhealthyGpus." + index;
      const auto gpu = [&]() -> std::int32_t {
        if (index.empty() || index.size() > 2 || index.find_first_not_of("0123456789") != std::string::npos) return -1;
        return std::stoi(index);  // one or two digits: cannot throw
      }();
      if (gpu < 0 || gpu >= static_cast<std::int32_t>(node.inventory.gpus.size())) {
        return InvalidArgument(path + ": not a GPU index of this node (0 to " + std::to_string(node.inventory.gpus.size()) + ")");
      }
      if (!reason.is_string()) return InvalidArgument(path + ": expected a string");
      node.unhealthy_gpus[gpu] = reason.get<std::string>();
    }
  }
  return node;
}

// --- jobs -----------------------------------------------------------------------

namespace {

// An array job's indices, limit and elements by state; those not started
// count as pending, or, once the array was cancelled, as cancelled.
json ArrayDocument(const model::Job& parent) {
  const model::ArrayProgress& p = parent.array_progress;
  const std::int32_t unstarted = parent.array->size() - p.created();
  const bool active = parent.state == model::JobState::kPending || parent.state == model::JobState::kRunning;
  json array = {{"indices", parent.array->Describe()},
                {"size", parent.array->size()},
                {"counts",
                 {{"pending", p[model::JobState::kPending] + (active ? unstarted : 0)},
                  {"running", p[model::JobState::kRunning]},
                  {"succeeded", p[model::JobState::kSucceeded]},
                  {"failed", p[model::JobState::kFailed]},
                  {"cancelled", p[model::JobState::kCancelled] + (active ? 0 : unstarted)}}}};
  if (parent.array->max_running > 0) array["limit"] = parent.array->max_running;
  return array;
}

}  // namespace

json JobDocument(model::JobId id, const model::Job& job, const JobRecord& record) {
  json tasks = json::array();
  for (const TaskRecord& t : record.tasks) tasks.push_back(TaskDocument(t));
  std::int32_t task_count = 0;
  for (const model::TaskGroup& g : job.groups) task_count += g.replicas;
  json j = {{"id", id.value()},
            {"name", job.name},
            {"queue", record.queue},
            {"user", record.user},
            {"submitDir", record.submit_dir},
            {"state", job.is_array_parent ? ArrayApiState(job) : ApiState(job.state, record.running_ms != 0)},
            {"priority", job.priority},
            {"preemptible", job.preemptible},
            {"gpus", static_cast<double>(job.TotalRequest().gpu_milli) / 1000.0},
            {"taskCount", task_count},
            {"submitTime", record.submit_ms},
            {"scheduledTime", record.scheduled_ms},
            {"runningTime", record.running_ms},
            {"endTime", record.end_ms},
            {"attempt", record.attempt},
            {"restarts", job.restarts},
            {"maxRestarts", job.max_restarts},
            {"attainedGpuSeconds", job.attained_gpu_seconds},
            {"gpuSeconds", record.gpu_seconds},
            {"idleGpuSeconds", record.idle_gpu_seconds},
            {"message", record.message},
            {"hung", record.attempt > 0 && record.hung_attempt == record.attempt},
            {"tasks", tasks}};
  if (record.master_port != 0) j["masterPort"] = record.master_port;
  if (record.checkpoint_ms != 0) j["lastCheckpointTime"] = record.checkpoint_ms;
  if (record.lost_gpu_seconds > 0) j["lostGpuSeconds"] = record.lost_gpu_seconds;
  if (!record.requeue_reason.empty()) j["requeueReason"] = record.requeue_reason;
  if (job.not_before > 0) j["restartAfter"] = job.not_before * 1000;
  if (job.is_array_parent) j["array"] = ArrayDocument(job);
  if (job.is_array_element()) {
    j["arrayJobId"] = job.array_parent.value();
    j["arrayIndex"] = job.array_index;
    if (!job.array->sweep.empty()) {
      json parameters = json::object();
      for (const auto& [name, value] : job.array->SweepValues(job.array_index)) parameters[name] = value;
      j["parameters"] = parameters;
    }
  }
  // A fraction without gpuMemory holds its share of the GPU it lands on; describe says so.
  const auto proportional = [](const model::TaskGroup& g) { return g.request.fractional() && g.request.gpu_memory == 0; };
  if (std::any_of(job.groups.begin(), job.groups.end(), proportional)) j["proportionalGpuMemory"] = true;
  return j;
}

std::optional<model::JobState> ModelState(std::string_view api_state) {
  if (api_state == "pending") return model::JobState::kPending;
  if (api_state == "starting" || api_state == "running") return model::JobState::kRunning;
  if (api_state == "succeeded") return model::JobState::kSucceeded;
  if (api_state == "failed") return model::JobState::kFailed;
  if (api_state == "cancelled") return model::JobState::kCancelled;
  return std::nullopt;
}

Result<StoredJob> DecodeJob(std::string_view key, std::string_view value) {
  Result<model::JobId> id = DecodeJobKey(key);
  if (!id.ok()) return id.status();
  Result<json> j = ParseObject(value);
  if (!j.ok()) return j.status();
  Result<JsonObject> o = JsonObject::Read(
      *j, "",
      {"id", "name", "queue", "user", "submitDir", "state", "priority", "preemptible", "gpus", "taskCount", "submitTime",
       "scheduledTime", "runningTime", "endTime", "attempt", "restarts", "maxRestarts", "attainedGpuSeconds", "gpuSeconds",
       "idleGpuSeconds", "message", "hung", "tasks", "masterPort", "lastCheckpointTime", "lostGpuSeconds", "restartAfter", "proportionalGpuMemory", "array",
       "arrayJobId", "requeueReason", "arrayIndex", "parameters"},
      {"id", "state", "queue", "user", "submitTime", "attempt", "tasks"});
  if (!o.ok()) return o.status();
  StoredJob job;
  job.id = *id;
  JobRecord& r = job.record;
  std::int64_t stored_id = -1;
  TESSERA_RETURN_IF_ERROR(o->ReadInt("id", &stored_id, 0, kMaxI32));
  if (stored_id != id->value()) return o->Error("id", std::to_string(stored_id) + " differs from the record's key");
  std::string state;
  TESSERA_RETURN_IF_ERROR(o->ReadString("state", &state));
  const std::optional<model::JobState> model_state = ModelState(state);
  if (!model_state) return o->Error("state", "'" + state + "' is not pending, starting, running, succeeded, failed or cancelled");
  job.state = *model_state;
  // Fields the API shows and recovery takes from the spec: checked all the same,
  // so that no damage passes unnoticed.
  std::string name;
  std::int32_t priority = 0, task_count = 0, max_restarts = 0;
  bool preemptible = false, hung = false;
  double gpus = 0;
  TESSERA_RETURN_IF_ERROR(o->ReadString("name", &name));
  TESSERA_RETURN_IF_ERROR(o->ReadInt32("priority", &priority, std::numeric_limits<std::int32_t>::min(), kMaxI32));
  TESSERA_RETURN_IF_ERROR(o->ReadBool("preemptible", &preemptible));
  TESSERA_RETURN_IF_ERROR(o->ReadNumber("gpus", &gpus));
  TESSERA_RETURN_IF_ERROR(o->ReadInt32("taskCount", &task_count, 0, kMaxI32));
  TESSERA_RETURN_IF_ERROR(o->ReadInt32("maxRestarts", &max_restarts, 0, kMaxI32));
  TESSERA_RETURN_IF_ERROR(o->ReadBool("hung", &hung));

  TESSERA_RETURN_IF_ERROR(o->ReadString("queue", &r.queue));
  TESSERA_RETURN_IF_ERROR(o->ReadString("user", &r.user));
  TESSERA_RETURN_IF_ERROR(o->ReadString("submitDir", &r.submit_dir));
  TESSERA_RETURN_IF_ERROR(o->ReadInt("submitTime", &r.submit_ms, 0, kMaxI64));
  TESSERA_RETURN_IF_ERROR(o->ReadInt("scheduledTime", &r.scheduled_ms, 0, kMaxI64));
  TESSERA_RETURN_IF_ERROR(o->ReadInt("lastCheckpointTime", &r.checkpoint_ms, 0, kMaxI64));
  TESSERA_RETURN_IF_ERROR(o->ReadInt("runningTime", &r.running_ms, 0, kMaxI64));
  TESSERA_RETURN_IF_ERROR(o->ReadInt("endTime", &r.end_ms, 0, kMaxI64));
  TESSERA_RETURN_IF_ERROR(o->ReadInt32("attempt", &r.attempt, 0, kMaxI32));
  TESSERA_RETURN_IF_ERROR(o->ReadInt32("restarts", &job.restarts, 0, kMaxI32));
  TESSERA_RETURN_IF_ERROR(o->ReadNumber("attainedGpuSeconds", &job.attained_gpu_seconds));
  TESSERA_RETURN_IF_ERROR(o->ReadNumber("gpuSeconds", &r.gpu_seconds));
  TESSERA_RETURN_IF_ERROR(o->ReadNumber("idleGpuSeconds", &r.idle_gpu_seconds));
  TESSERA_RETURN_IF_ERROR(o->ReadNumber("lostGpuSeconds", &r.lost_gpu_seconds));
  TESSERA_RETURN_IF_ERROR(o->ReadString("message", &r.message));
  TESSERA_RETURN_IF_ERROR(o->ReadString("requeueReason", &r.requeue_reason));
  TESSERA_RETURN_IF_ERROR(o->ReadInt("restartAfter", &job.restart_after_ms, 0, kMaxI64));
  TESSERA_RETURN_IF_ERROR(o->ReadInt32("masterPort", &r.master_port, RendezvousPorts::kFirst,
                                       RendezvousPorts::kFirst + RendezvousPorts::kCount - 1));
  r.hung_attempt = hung ? r.attempt : 0;
  // An array job's counts are made again from its elements; an element's
  // parameters from its array's spec.
  for (const char* object : {"array", "parameters"}) {
    if (o->Has(object) && !o->Raw(object).is_object()) return o->Error(object, "expected an object");
  }
  if (o->Has("arrayJobId") != o->Has("arrayIndex")) {
    return o->Error(o->Has("arrayJobId") ? "arrayIndex" : "arrayJobId", "an array element names both its array job and its index");
  }
  if (o->Has("arrayJobId")) {
    std::int32_t parent = 0;
    TESSERA_RETURN_IF_ERROR(o->ReadInt32("arrayJobId", &parent, 0, id->value() - 1));
    job.array_parent = model::JobId(parent);
    TESSERA_RETURN_IF_ERROR(o->ReadInt32("arrayIndex", &job.array_index, 0, model::kMaxArrayIndex));
  }
  Result<std::vector<std::pair<std::string, const json*>>> tasks = o->Items("tasks");
  if (!tasks.ok()) return tasks.status();
  for (const auto& [path, item] : *tasks) {
    Result<TaskRecord> task = DecodeTask(*item, path);
    if (!task.ok()) return task.status();
    r.tasks.push_back(std::move(*task));
  }
  // An array job runs through its elements and has no tasks of its own.
  if (job.state == model::JobState::kRunning && r.tasks.empty() && !o->Has("array")) return o->Error("tasks", "a running job has none");
  // A run stored before ports were handed out (rendezvous_ports.h) keeps the
  // port that server derived from the job's id, which its tasks were given.
  if (job.state == model::JobState::kRunning && !r.tasks.empty() && r.master_port == 0) {
    r.master_port = RendezvousPorts::kFirst + id->value() % RendezvousPorts::kCount;
  }
  return job;
}

// --- usage ------------------------------------------------------------------------

std::pair<std::string, std::string> EncodeUsage(const UsageKey& key, const Usage& usage) {
  return {api::Dump(json::array({key.hour, key.queue, key.user})),
          api::Dump({{"queue", key.queue},
                     {"user", key.user},
                     {"hour", key.hour},
                     {"jobs", usage.jobs},
                     {"gpuSeconds", usage.gpu_seconds},
                     {"idleGpuSeconds", usage.idle_gpu_seconds}})};
}

Result<std::pair<UsageKey, Usage>> DecodeUsage(std::string_view key, std::string_view value) {
  Result<json> j = ParseObject(value);
  if (!j.ok()) return j.status();
  Result<JsonObject> o = JsonObject::Read(*j, "", {"queue", "user", "hour", "jobs", "gpuSeconds", "idleGpuSeconds"},
                                          {"queue", "user", "hour", "jobs", "gpuSeconds", "idleGpuSeconds"});
  if (!o.ok()) return o.status();
  std::pair<UsageKey, Usage> u;
  TESSERA_RETURN_IF_ERROR(o->ReadString("queue", &u.first.queue));
  TESSERA_RETURN_IF_ERROR(o->ReadString("user", &u.first.user));
  TESSERA_RETURN_IF_ERROR(o->ReadInt("hour", &u.first.hour, 0, kMaxI64));
  TESSERA_RETURN_IF_ERROR(o->ReadInt("jobs", &u.second.jobs, 0, kMaxI64));
  TESSERA_RETURN_IF_ERROR(o->ReadNumber("gpuSeconds", &u.second.gpu_seconds));
  TESSERA_RETURN_IF_ERROR(o->ReadNumber("idleGpuSeconds", &u.second.idle_gpu_seconds));
  if (EncodeUsage(u.first, u.second).first != key) return InvalidArgument("key: differs from the record's [hour, queue, user]");
  return u;
}

// --- registry credentials ------------------------------------------------------------

std::string RegistryCredentialKey(const std::string& queue, const std::string& registry) {
  return api::Dump(json::array({queue, registry}));
}

std::pair<std::string, std::string> EncodeRegistryCredential(const RegistryCredential& c, const auth::SecretBox& box) {
  std::string key = RegistryCredentialKey(c.queue, c.registry);
  std::string sealed = box.Seal(c.password, key);
  return {std::move(key), api::Dump({{"queue", c.queue},
                                     {"registry", c.registry},
                                     {"username", c.username},
                                     {"sealedPassword", std::move(sealed)},
                                     {"updatedBy", c.updated_by},
                                     {"updatedMs", c.updated_ms}})};
}

Result<RegistryCredential> DecodeRegistryCredential(std::string_view key, std::string_view value, const auth::SecretBox& box) {
  Result<json> j = ParseObject(value);
  if (!j.ok()) return j.status();
  Result<JsonObject> o = JsonObject::Read(*j, "", {"queue", "registry", "username", "sealedPassword", "updatedBy", "updatedMs"},
                                          {"queue", "registry", "username", "sealedPassword", "updatedBy", "updatedMs"});
  if (!o.ok()) return o.status();
  RegistryCredential c;
  std::string sealed;
  TESSERA_RETURN_IF_ERROR(o->ReadString("queue", &c.queue));
  TESSERA_RETURN_IF_ERROR(o->ReadString("registry", &c.registry));
  TESSERA_RETURN_IF_ERROR(o->ReadString("username", &c.username));
  TESSERA_RETURN_IF_ERROR(o->ReadString("sealedPassword", &sealed));
  TESSERA_RETURN_IF_ERROR(o->ReadString("updatedBy", &c.updated_by));
  TESSERA_RETURN_IF_ERROR(o->ReadInt("updatedMs", &c.updated_ms, 0, kMaxI64));
  if (RegistryCredentialKey(c.queue, c.registry) != key) return InvalidArgument("key: differs from the record's [queue, registry]");
  Result<std::string> password = box.Open(sealed, key);
  if (!password.ok()) {
    return o->Error("sealedPassword", password.status().message() + " (is the server's secret key the one this store was written with?)");
  }
  c.password = std::move(*password);
  return c;
}

// --- tokens, audit, events -----------------------------------------------------------

Result<auth::TokenRecord> DecodeToken(std::string_view key, std::string_view value) {
  Result<json> j = ParseObject(value);
  if (!j.ok()) return j.status();
  Result<auth::TokenRecord> record = auth::TokenFromJson(*j);
  if (record.ok() && record->id != key) return InvalidArgument("id: '" + record->id + "' differs from the record's key");
  return record;
}

Result<json> DecodeAudit(std::string_view key, std::string_view value) {
  Result<json> j = ParseObject(value);
  if (!j.ok()) return j.status();
  const json* revision = j->contains("revision") ? &(*j)["revision"] : nullptr;
  if (revision == nullptr || !revision->is_number_integer() || store::NumericKey(revision->get<std::int64_t>()) != key) {
    return InvalidArgument("revision: missing, or not the record's key");
  }
  return j;
}

Result<Event> DecodeEvent(std::string_view key, std::string_view value) {
  Result<json> j = ParseObject(value);
  if (!j.ok()) return j.status();
  Result<Event> event = EventFromJson(*j);
  if (event.ok() && store::NumericKey(event->revision) != key) return InvalidArgument("revision: differs from the record's key");
  return event;
}

Result<std::int64_t> DecodeNextJobId(std::string_view value) {
  std::int64_t id = 0;
  bool digits = !value.empty() && value.size() <= 10;
  for (const char c : value) {
    digits = digits && c >= '0' && c <= '9';
    if (digits) id = id * 10 + (c - '0');
  }
  if (!digits || id > kMaxI32) return InvalidArgument("value: not a job id, got '" + std::string(value.substr(0, 40)) + "'");
  return id;
}

}  // namespace tessera::controlplane
