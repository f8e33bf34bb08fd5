#include "api/agent_protocol.h"

#include <limits>

#include "api/json_reader.h"

namespace tessera::api {
namespace {

using nlohmann::json;
constexpr std::int64_t kMaxI64 = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMaxI32 = std::numeric_limits<std::int32_t>::max();

json KeyJson(const TaskKey& key) { return {{"job", key.job}, {"attempt", key.attempt}, {"task", key.task}}; }

Status ReadKey(const JsonObject& o, TaskKey* key) {
  TESSERA_RETURN_IF_ERROR(o.ReadInt("job", &key->job, 0, kMaxI64));
  TESSERA_RETURN_IF_ERROR(o.ReadInt32("attempt", &key->attempt, 0, kMaxI32));
  return o.ReadInt32("task", &key->task, 0, kMaxI32);
}

Result<GpuInventory> GpuFromJson(const json& value, const std::string& path) {
  Result<JsonObject> o = JsonObject::Read(value, path, {"index", "uuid", "model", "memory", "numa", "nvlinkDomain", "healthy", "mig"},
                                          {"index", "model", "memory"});
  if (!o.ok()) return o.status();
  GpuInventory gpu;
  TESSERA_RETURN_IF_ERROR(o->ReadInt32("index", &gpu.index, 0, 63));
  TESSERA_RETURN_IF_ERROR(o->ReadString("uuid", &gpu.uuid));
  TESSERA_RETURN_IF_ERROR(o->ReadString("model", &gpu.model));
  TESSERA_RETURN_IF_ERROR(o->ReadInt("memory", &gpu.memory, 0, kMaxI64));
  TESSERA_RETURN_IF_ERROR(o->ReadInt32("numa", &gpu.numa, 0, 1023));
  TESSERA_RETURN_IF_ERROR(o->ReadInt32("nvlinkDomain", &gpu.nvlink_domain, 0, 63));
  TESSERA_RETURN_IF_ERROR(o->ReadBool("healthy", &gpu.healthy));
  if (gpu.model.empty()) return o->Error("model", "must not be empty");
  if (!o->Has("mig")) return gpu;
  auto devices = o->Items("mig");
  if (!devices.ok()) return devices.status();
  for (const auto& [device_path, item] : *devices) {
    Result<JsonObject> d = JsonObject::Read(*item, device_path, {"profile", "uuid"}, {"profile", "uuid"});
    if (!d.ok()) return d.status();
    MigDeviceInventory device;
    TESSERA_RETURN_IF_ERROR(d->ReadString("profile", &device.profile));
    TESSERA_RETURN_IF_ERROR(d->ReadString("uuid", &device.uuid));
    if (device.profile.empty()) return d->Error("profile", "must not be empty");  // the server reads it (model/mig.h)
    if (device.uuid.empty()) return d->Error("uuid", "must not be empty");
    gpu.mig.push_back(std::move(device));
  }
  return gpu;
}

}  // namespace

bool NodeInventory::SameCapacity(const NodeInventory& other) const {
  if (leaf != other.leaf || spine != other.spine || nvlink_group != other.nvlink_group || cpu_milli != other.cpu_milli || memory != other.memory ||
      gpu_sharing != other.gpu_sharing || gpus.size() != other.gpus.size()) {
    return false;
  }
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const GpuInventory& a = gpus[i];
    const GpuInventory& b = other.gpus[i];
    if (a.model != b.model || a.memory != b.memory || a.numa != b.numa || a.nvlink_domain != b.nvlink_domain || a.mig != b.mig) return false;
  }
  return true;
}

json ToJson(const NodeInventory& inventory) {
  json gpus = json::array();
  for (const GpuInventory& g : inventory.gpus) {
    json gpu = {{"index", g.index}, {"uuid", g.uuid}, {"model", g.model}, {"memory", g.memory},
                {"numa", g.numa}, {"nvlinkDomain", g.nvlink_domain}, {"healthy", g.healthy}};
    if (!g.mig.empty()) {
      gpu["mig"] = json::array();
      for (const MigDeviceInventory& d : g.mig) gpu["mig"].push_back({{"profile", d.profile}, {"uuid", d.uuid}});
    }
    gpus.push_back(std::move(gpu));
  }
  return {{"name", inventory.name}, {"address", inventory.address}, {"leaf", inventory.leaf},
          {"spine", inventory.spine}, {"nvlinkGroup", inventory.nvlink_group}, {"provider", inventory.provider}, {"cpuMilli", inventory.cpu_milli},
          {"memory", inventory.memory}, {"gpus", gpus}, {"gpuSharing", inventory.gpu_sharing}};
}

Result<NodeInventory> NodeInventoryFromJson(const json& value) {
  Result<JsonObject> o = JsonObject::Read(value, "", {"name", "address", "leaf", "spine", "nvlinkGroup", "provider", "cpuMilli", "memory", "gpus", "gpuSharing"},
                                          {"name"});
  if (!o.ok()) return o.status();
  NodeInventory inv;
  TESSERA_RETURN_IF_ERROR(o->ReadString("name", &inv.name));
  TESSERA_RETURN_IF_ERROR(o->ReadString("address", &inv.address));
  TESSERA_RETURN_IF_ERROR(o->ReadString("leaf", &inv.leaf));
  TESSERA_RETURN_IF_ERROR(o->ReadString("spine", &inv.spine));
  TESSERA_RETURN_IF_ERROR(o->ReadString("nvlinkGroup", &inv.nvlink_group));
  TESSERA_RETURN_IF_ERROR(o->ReadString("provider", &inv.provider));
  TESSERA_RETURN_IF_ERROR(o->ReadInt("cpuMilli", &inv.cpu_milli, 0, kMaxI64));
  TESSERA_RETURN_IF_ERROR(o->ReadInt("memory", &inv.memory, 0, kMaxI64));
  TESSERA_RETURN_IF_ERROR(o->ReadStringList("gpuSharing", &inv.gpu_sharing));
  auto items = o->Items("gpus");
  if (!items.ok()) return items.status();
  if (items->size() > 64) return o->Error("gpus", "a node has at most 64 GPUs, got " + std::to_string(items->size()));
  for (const auto& [path, item] : *items) {
    Result<GpuInventory> gpu = GpuFromJson(*item, path);
    if (!gpu.ok()) return gpu.status();
    if (gpu->index != static_cast<std::int32_t>(inv.gpus.size())) {
      return InvalidArgument(path + ".index: GPUs must be listed in index order from 0");
    }
    if (!inv.gpus.empty() && gpu->model != inv.gpus.front().model) {
      return InvalidArgument(path + ".model: a node's GPUs must all be one model (" + inv.gpus.front().model + ")");
    }
    inv.gpus.push_back(std::move(*gpu));
  }
  return inv;
}

namespace {

json ContainerJson(const ContainerAssignment& c) {
  json mounts = json::array();
  for (const ContainerAssignment::Mount& m : c.mounts) {
    mounts.push_back({{"hostPath", m.host_path}, {"mountPath", m.mount_path}, {"readOnly", m.read_only}});
  }
  json out = {{"image", c.image}, {"pullPolicy", c.pull_policy}, {"mounts", mounts}};
  if (c.shm_bytes > 0) out["shmBytes"] = c.shm_bytes;
  if (c.uid >= 0) out["uid"] = c.uid;
  if (c.gid >= 0) out["gid"] = c.gid;
  if (c.allow_root) out["allowRoot"] = true;
  if (c.login) out["registryLogin"] = {{"username", c.login->username}, {"password", c.login->password}};
  if (c.network) out["network"] = {{"vni", c.network->vni}, {"nodes", c.network->nodes}, {"index", c.network->index}};
  return out;
}

Result<ContainerAssignment> ContainerFromJson(const json& value, const std::string& path) {
  Result<JsonObject> o = JsonObject::Read(value, path, {"image", "pullPolicy", "mounts", "shmBytes", "uid", "gid", "allowRoot", "registryLogin", "network"},
                                          {"image"});
  if (!o.ok()) return o.status();
  ContainerAssignment c;
  TESSERA_RETURN_IF_ERROR(o->ReadString("image", &c.image));
  if (c.image.empty()) return o->Error("image", "must not be empty");
  TESSERA_RETURN_IF_ERROR(o->ReadString("pullPolicy", &c.pull_policy));
  if (c.pull_policy != "IfNotPresent" && c.pull_policy != "Always" && c.pull_policy != "Never") {
    return o->Error("pullPolicy", "'" + c.pull_policy + "' is not one of: IfNotPresent, Always, Never");
  }
  TESSERA_RETURN_IF_ERROR(o->ReadInt("shmBytes", &c.shm_bytes, 0, kMaxI64));
  TESSERA_RETURN_IF_ERROR(o->ReadInt("uid", &c.uid, 0, 0x7fffffff));
  TESSERA_RETURN_IF_ERROR(o->ReadInt("gid", &c.gid, 0, 0x7fffffff));
  TESSERA_RETURN_IF_ERROR(o->ReadBool("allowRoot", &c.allow_root));
  if (o->Has("registryLogin")) {
    Result<JsonObject> l = JsonObject::Read(o->Raw("registryLogin"), o->Path("registryLogin"), {"username", "password"}, {"username", "password"});
    if (!l.ok()) return l.status();
    ContainerAssignment::Login login;
    TESSERA_RETURN_IF_ERROR(l->ReadString("username", &login.username));
    TESSERA_RETURN_IF_ERROR(l->ReadString("password", &login.password));
    c.login = std::move(login);
  }
  if (o->Has("network")) {
    Result<JsonObject> n = JsonObject::Read(o->Raw("network"), o->Path("network"), {"vni", "nodes", "index"}, {"vni", "nodes", "index"});
    if (!n.ok()) return n.status();
    ContainerAssignment::Network network;
    TESSERA_RETURN_IF_ERROR(n->ReadInt("vni", &network.vni, 1, (1 << 24) - 1));
    TESSERA_RETURN_IF_ERROR(n->ReadStringList("nodes", &network.nodes));
    TESSERA_RETURN_IF_ERROR(n->ReadInt32("index", &network.index, 0, static_cast<std::int64_t>(network.nodes.size()) - 1));
    c.network = std::move(network);
  }
  if (o->Has("mounts")) {
    auto items = o->Items("mounts");
    if (!items.ok()) return items.status();
    for (const auto& [item_path, item] : *items) {
      Result<JsonObject> m = JsonObject::Read(*item, item_path, {"hostPath", "mountPath", "readOnly"}, {"hostPath", "mountPath"});
      if (!m.ok()) return m.status();
      ContainerAssignment::Mount mount;
      TESSERA_RETURN_IF_ERROR(m->ReadString("hostPath", &mount.host_path));
      TESSERA_RETURN_IF_ERROR(m->ReadString("mountPath", &mount.mount_path));
      TESSERA_RETURN_IF_ERROR(m->ReadBool("readOnly", &mount.read_only));
      for (const std::string* p : {&mount.host_path, &mount.mount_path}) {
        if (p->empty() || p->front() != '/') return m->Error(p == &mount.host_path ? "hostPath" : "mountPath", "must be an absolute path");
      }
      c.mounts.push_back(std::move(mount));
    }
  }
  return c;
}

}  // namespace

json ToJson(const Assignment& a) {
  json t = KeyJson(a.key);
  t["jobName"] = a.job_name;
  t["taskName"] = a.task_name;
  t["command"] = a.command;
  t["env"] = a.env;
  if (!a.working_dir.empty()) t["workingDir"] = a.working_dir;
  t["gpus"] = a.gpus;
  t["gpuMilli"] = a.gpu_milli;
  t["gpuMemory"] = a.gpu_memory;
  t["cpuMilli"] = a.cpu_milli;
  t["memory"] = a.memory;
  if (!a.gpu_sharing.empty()) t["gpuSharing"] = a.gpu_sharing;
  if (a.gpu_memory_burst > 0) t["gpuMemoryBurst"] = a.gpu_memory_burst;
  if (!a.mig_device.empty()) t["migDevice"] = a.mig_device;
  if (a.checkpoint_signal > 0) t["checkpointSignal"] = a.checkpoint_signal;
  t["checkpointGraceMs"] = a.checkpoint_grace_ms;
  if (a.interactive_idle_ms > 0) t["interactiveIdleMs"] = a.interactive_idle_ms;
  if (!a.container.image.empty()) t["container"] = ContainerJson(a.container);
  return t;
}

json ToJson(const AssignmentSet& set) {
  json tasks = json::array();
  for (const Assignment& a : set.tasks) tasks.push_back(ToJson(a));
  return {{"revision", set.revision}, {"epoch", set.epoch}, {"tasks", tasks}};
}

Result<AssignmentSet> AssignmentSetFromJson(const json& value) {
  Result<JsonObject> o = JsonObject::Read(value, "", {"revision", "epoch", "tasks"}, {"revision", "tasks"});
  if (!o.ok()) return o.status();
  AssignmentSet set;
  TESSERA_RETURN_IF_ERROR(o->ReadInt("revision", &set.revision, 0, kMaxI64));
  TESSERA_RETURN_IF_ERROR(o->ReadInt("epoch", &set.epoch, 0, kMaxI64));
  auto items = o->Items("tasks");
  if (!items.ok()) return items.status();
  for (const auto& [path, item] : *items) {
    Result<JsonObject> t = JsonObject::Read(*item, path, {"job", "attempt", "task", "jobName", "taskName", "command", "env", "workingDir", "gpus",
                                                          "gpuMilli", "gpuMemory", "cpuMilli", "memory", "gpuSharing",
                                                          "gpuMemoryBurst", "migDevice", "checkpointSignal", "checkpointGraceMs", "interactiveIdleMs",
                                                          "container"},
                                            {"job", "attempt", "task", "command"});
    if (!t.ok()) return t.status();
    Assignment a;
    TESSERA_RETURN_IF_ERROR(ReadKey(*t, &a.key));
    TESSERA_RETURN_IF_ERROR(t->ReadString("jobName", &a.job_name));
    TESSERA_RETURN_IF_ERROR(t->ReadString("taskName", &a.task_name));
    TESSERA_RETURN_IF_ERROR(t->ReadStringList("command", &a.command));
    TESSERA_RETURN_IF_ERROR(t->ReadString("workingDir", &a.working_dir));
    TESSERA_RETURN_IF_ERROR(t->ReadInt32("gpuMilli", &a.gpu_milli, 0, 1000));
    TESSERA_RETURN_IF_ERROR(t->ReadInt("gpuMemory", &a.gpu_memory, 0, kMaxI64));
    TESSERA_RETURN_IF_ERROR(t->ReadInt("cpuMilli", &a.cpu_milli, 0, kMaxI64));
    TESSERA_RETURN_IF_ERROR(t->ReadInt("memory", &a.memory, 0, kMaxI64));
    TESSERA_RETURN_IF_ERROR(t->ReadString("gpuSharing", &a.gpu_sharing));
    TESSERA_RETURN_IF_ERROR(t->ReadInt("gpuMemoryBurst", &a.gpu_memory_burst, 0, kMaxI64));
    TESSERA_RETURN_IF_ERROR(t->ReadString("migDevice", &a.mig_device));
    TESSERA_RETURN_IF_ERROR(t->ReadInt32("checkpointSignal", &a.checkpoint_signal, 0, 64));
    TESSERA_RETURN_IF_ERROR(t->ReadInt("checkpointGraceMs", &a.checkpoint_grace_ms, 0, kMaxI64));
    TESSERA_RETURN_IF_ERROR(t->ReadInt("interactiveIdleMs", &a.interactive_idle_ms, 0, kMaxI64));
    if (t->Has("container")) {
      Result<ContainerAssignment> container = ContainerFromJson(t->Raw("container"), path + ".container");
      if (!container.ok()) return container.status();
      a.container = std::move(*container);
    }
    if (t->Has("env")) {
      const json& env = t->Raw("env");
      if (!env.is_object()) return t->Error("env", "expected an object of strings");
      for (const auto& [k, v] : env.items()) {
        if (!v.is_string()) return t->Error("env", k + ": expected a string");
        a.env[k] = v.get<std::string>();
      }
    }
    if (t->Has("gpus")) {
      const json& gpus = t->Raw("gpus");
      if (!gpus.is_array()) return t->Error("gpus", "expected a list of GPU indices");
      for (const json& g : gpus) {
        if (!g.is_number_integer() || g.get<std::int64_t>() < 0 || g.get<std::int64_t>() > 63) {
          return t->Error("gpus", "expected GPU indices 0..63");
        }
        a.gpus.push_back(g.get<std::int32_t>());
      }
    }
    set.tasks.push_back(std::move(a));
  }
  return set;
}

json ToJson(const StatusReport& report) {
  json tasks = json::array();
  for (const TaskReport& r : report.tasks) {
    json t = KeyJson(r.key);
    t["state"] = r.exited ? "exited" : r.preparing ? "preparing" : "running";
    if (r.exited) t["exitCode"] = r.exit_code;
    if (!r.message.empty()) t["message"] = r.message;
    if (r.lost) t["lost"] = true;
    if (r.progress_age_ms >= 0) t["progressAgeMs"] = r.progress_age_ms;
    if (r.checkpoint_age_ms >= 0) t["checkpointAgeMs"] = r.checkpoint_age_ms;
    tasks.push_back(std::move(t));
  }
  json bursts = json::object();
  for (const auto& [gpu, bytes] : report.burst_memory) bursts[std::to_string(gpu)] = bytes;
  json gpus = json::array();
  for (const GpuTelemetry& g : report.gpus) {
    gpus.push_back({{"index", g.index}, {"utilization", g.utilization}, {"memoryUsed", g.memory_used}});
  }
  json unhealthy = json::array();
  for (const GpuOutageReport& u : report.unhealthy_gpus) unhealthy.push_back({{"index", u.index}, {"reason", u.reason}});
  json faults = json::array();
  for (const GpuFaultReport& f : report.faults) {
    faults.push_back({{"index", f.index}, {"kind", f.kind}, {"code", f.code}, {"detail", f.detail}, {"class", f.fault_class}});
  }
  json out = {{"tasks", tasks}, {"burstMemory", bursts}, {"gpus", gpus}, {"unhealthyGpus", unhealthy}, {"faults", faults}};
  if (report.images) {
    json images = json::array();
    for (const CachedImageReport& i : *report.images) {
      images.push_back({{"references", i.references}, {"digest", i.digest}, {"sizeBytes", i.size_bytes}});
    }
    out["images"] = std::move(images);
  }
  return out;
}

Result<StatusReport> StatusReportFromJson(const json& value) {
  Result<JsonObject> o = JsonObject::Read(value, "", {"tasks", "burstMemory", "gpus", "unhealthyGpus", "faults", "images"});
  if (!o.ok()) return o.status();
  StatusReport report;
  if (o->Has("images")) {
    auto images = o->Items("images");
    if (!images.ok()) return images.status();
    report.images.emplace();
    for (const auto& [path, item] : *images) {
      Result<JsonObject> i = JsonObject::Read(*item, path, {"references", "digest", "sizeBytes"}, {"digest"});
      if (!i.ok()) return i.status();
      CachedImageReport image;
      TESSERA_RETURN_IF_ERROR(i->ReadStringList("references", &image.references));
      TESSERA_RETURN_IF_ERROR(i->ReadString("digest", &image.digest));
      TESSERA_RETURN_IF_ERROR(i->ReadInt("sizeBytes", &image.size_bytes, 0, kMaxI64));
      report.images->push_back(std::move(image));
    }
  }
  if (o->Has("unhealthyGpus")) {
    auto unhealthy = o->Items("unhealthyGpus");
    if (!unhealthy.ok()) return unhealthy.status();
    for (const auto& [path, item] : *unhealthy) {
      Result<JsonObject> u = JsonObject::Read(*item, path, {"index", "reason"}, {"index", "reason"});
      if (!u.ok()) return u.status();
      GpuOutageReport outage;
      TESSERA_RETURN_IF_ERROR(u->ReadInt32("index", &outage.index, 0, 63));
      TESSERA_RETURN_IF_ERROR(u->ReadString("reason", &outage.reason));
      report.unhealthy_gpus.push_back(std::move(outage));
    }
  }
  if (o->Has("faults")) {
    auto faults = o->Items("faults");
    if (!faults.ok()) return faults.status();
    for (const auto& [path, item] : *faults) {
      Result<JsonObject> f = JsonObject::Read(*item, path, {"index", "kind", "code", "detail", "class"}, {"index", "kind", "class"});
      if (!f.ok()) return f.status();
      GpuFaultReport fault;
      TESSERA_RETURN_IF_ERROR(f->ReadInt32("index", &fault.index, 0, 63));
      TESSERA_RETURN_IF_ERROR(f->ReadString("kind", &fault.kind));
      TESSERA_RETURN_IF_ERROR(f->ReadInt("code", &fault.code, 0, kMaxI64));
      TESSERA_RETURN_IF_ERROR(f->ReadString("detail", &fault.detail));
      TESSERA_RETURN_IF_ERROR(f->ReadString("class", &fault.fault_class));
      report.faults.push_back(std::move(fault));
    }
  }
  if (o->Has("gpus")) {
    auto gpus = o->Items("gpus");
    if (!gpus.ok()) return gpus.status();
    for (const auto& [path, item] : *gpus) {
      Result<JsonObject> g = JsonObject::Read(*item, path, {"index", "utilization", "memoryUsed"}, {"index", "utilization"});
      if (!g.ok()) return g.status();
      GpuTelemetry t;
      TESSERA_RETURN_IF_ERROR(g->ReadInt32("index", &t.index, 0, 63));
      if (!g->Raw("utilization").is_number() || g->Raw("utilization").get<double>() < 0) {
        return g->Error("utilization", "expected a percentage");
      }
      t.utilization = g->Raw("utilization").get<double>();
      TESSERA_RETURN_IF_ERROR(g->ReadInt("memoryUsed", &t.memory_used, 0, kMaxI64));
      report.gpus.push_back(t);
    }
  }
  if (o->Has("burstMemory")) {
    const json& bursts = o->Raw("burstMemory");
    if (!bursts.is_object()) return o->Error("burstMemory", "expected an object of GPU index -> bytes");
    for (const auto& [gpu, bytes] : bursts.items()) {
      char* end = nullptr;
      const long index = std::strtol(gpu.c_str(), &end, 10);  // NOLINT(google-runtime-int)
      if (gpu.empty() || *end != '\0' || index < 0 || index > 63 || !bytes.is_number_integer() || bytes.get<std::int64_t>() < 0) {
        return o->Error("burstMemory", "'" + gpu + "': expected a GPU index 0..63 and a byte count");
      }
      report.burst_memory[static_cast<std::int32_t>(index)] = bytes.get<std::int64_t>();
    }
  }
  auto items = o->Items("tasks");
  if (!items.ok()) return items.status();
  for (const auto& [path, item] : *items) {
    Result<JsonObject> t = JsonObject::Read(*item, path, {"job", "attempt", "task", "state", "exitCode", "message", "lost", "progressAgeMs",
                                                              "checkpointAgeMs"},
                                            {"job", "attempt", "task", "state"});
    if (!t.ok()) return t.status();
    TaskReport r;
    TESSERA_RETURN_IF_ERROR(ReadKey(*t, &r.key));
    std::string state;
    TESSERA_RETURN_IF_ERROR(t->ReadString("state", &state));
    if (state != "running" && state != "exited" && state != "preparing") {
      return t->Error("state", "'" + state + "' is not one of: running, preparing, exited");
    }
    r.exited = state == "exited";
    r.preparing = state == "preparing";
    TESSERA_RETURN_IF_ERROR(t->ReadInt32("exitCode", &r.exit_code, -1, 255));
    TESSERA_RETURN_IF_ERROR(t->ReadString("message", &r.message));
    TESSERA_RETURN_IF_ERROR(t->ReadBool("lost", &r.lost));
    TESSERA_RETURN_IF_ERROR(t->ReadInt("progressAgeMs", &r.progress_age_ms, 0, kMaxI64));
    TESSERA_RETURN_IF_ERROR(t->ReadInt("checkpointAgeMs", &r.checkpoint_age_ms, 0, kMaxI64));
    report.tasks.push_back(std::move(r));
  }
  return report;
}

}  // namespace tessera::api
