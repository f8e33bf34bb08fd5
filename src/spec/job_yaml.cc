#include "spec/job_yaml.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>
#include <string>
#include <utility>

#include "base/quantity.h"
#include "model/feasibility.h"
#include "model/mig.h"
#include "spec/job_array_yaml.h"
#include "spec/json_document.h"
#include "spec/task_container_yaml.h"
#include "spec/yaml_util.h"

namespace tessera::spec {
namespace {

constexpr std::int64_t kMaxInt32 = std::numeric_limits<std::int32_t>::max();
constexpr std::int64_t kMinInt32 = std::numeric_limits<std::int32_t>::min();
constexpr std::size_t kQueuesListed = 20;
// An interactive session nobody uses ends after this long, unless its spec says otherwise.
constexpr std::int64_t kDefaultSessionIdleTimeout = 30 * 60;

std::string KnownQueues(const model::QueueTree& queues) {
  std::string names;
  std::size_t listed = 0;
  for (const model::Queue& q : queues.queues()) {
    if (q.id == queues.root()) continue;
    if (listed++ == kQueuesListed) {
      names += ", ...";
      break;
    }
    names += (names.empty() ? "" : ", ") + q.path;
  }
  return names;
}

// A duration that must be above zero (walltime, checkpoint interval).
Status ReadPositiveDuration(const YamlMap& map, std::string_view key, Seconds* out) {
  TESSERA_RETURN_IF_ERROR(map.ReadDuration(key, out));
  if (*out <= 0 && map.Has(key)) return map.Get(key)->Error("must be longer than zero");
  return Status::Ok();
}

// Reads a string field that must be one of `choices`.
Result<std::string> ReadChoice(const YamlValue& value, std::initializer_list<std::string_view> choices) {
  Result<std::string> text = value.String();
  if (!text.ok()) return text;
  std::string list;
  for (std::string_view choice : choices) {
    if (choice == *text) return text;
    list += (list.empty() ? "" : ", ") + std::string(choice);
  }
  return value.Error("'" + *text + "' is not one of: " + list);
}

class JobParser {
 public:
  JobParser(std::string_view source, const model::Cluster& cluster, const model::QueueTree& queues,
            const JobParseOptions& options)
      : source_(source), cluster_(cluster), queues_(queues), check_feasible_(options.check_feasible),
        reload_(options.reload) {}

  Result<model::Job> Parse(const YamlValue& document) {
    Result<YamlMap> top = ReadDocument(document, "Job");
    if (!top.ok()) return top.status();
    model::Job job;
    Result<YamlValue> metadata = top->Get("metadata");
    if (!metadata.ok()) return metadata.status();
    TESSERA_RETURN_IF_ERROR(ParseMetadata(*metadata, job));
    TESSERA_RETURN_IF_ERROR(ParseSpec(*top->Get("spec"), job));

    // Feasibility names the field at fault; give it that field's position.
    const Status feasible = check_feasible_ ? model::CheckFeasible(job, cluster_, queues_) : Status::Ok();
    if (!feasible.ok()) {
      const std::string& message = feasible.message();
      const std::string path = message.substr(0, message.find(": "));
      const YamlValue at = ResolvePath(document, path);
      return Status(feasible.code(), FormatWhere(source_, at.mark()) + ": job " + job.name + ": " + message);
    }
    for (model::TaskGroup& group : job.groups) {
      if (!group.request.gpu_model.empty()) group.request.models = cluster_.ResolveModels(group.request.gpu_model).value_or(0);
    }
    return job;
  }

 private:
  Status ParseMetadata(const YamlValue& value, model::Job& job) {
    Result<YamlMap> meta = YamlMap::Read(value, {"name", "queue"}, {"name"});
    if (!meta.ok()) return meta.status();
    TESSERA_RETURN_IF_ERROR(meta->ReadDnsLabel("name", &job.name));
    std::string queue = "default";
    TESSERA_RETURN_IF_ERROR(meta->ReadString("queue", &queue));
    job.queue = queues_.Find(queue);
    if (reload_ && !job.queue.valid()) {
      job.queue = queues_.root();  // its queue was deleted after it ended
      return Status::Ok();
    }
    if (!job.queue.valid() || job.queue == queues_.root()) {
      const std::string reason = "unknown queue '" + queue + "'; known queues: " + KnownQueues(queues_);
      if (!meta->Has("queue")) return MissingDefaultQueue(*meta, reason);
      return meta->Get("queue")->Error(StatusCode::kNotFound, reason);
    }
    return Status::Ok();
  }

  static Status MissingDefaultQueue(const YamlMap& meta, const std::string& reason) {
    return YamlValue(meta.value().node(), meta.value().source(), meta.value().FieldPath("queue"),
                     meta.value().mark())
        .Error(StatusCode::kNotFound, reason + " (a job without metadata.queue goes to 'default')");
  }

  Status ParseSpec(const YamlValue& value, model::Job& job) {
    Result<YamlMap> spec = YamlMap::Read(value,
                                         {"priority", "preemptible", "walltime", "tasks", "topology", "checkpoint",
                                          "restart", "dependsOn", "hangDetection", "singleton", "array", "sweep", "interactive",
                                          "network"},
                                         {"tasks"});
    if (!spec.ok()) return spec.status();
    TESSERA_RETURN_IF_ERROR(spec->ReadInt("priority", &job.priority, kMinInt32, kMaxInt32));
    TESSERA_RETURN_IF_ERROR(spec->ReadBool("preemptible", &job.preemptible));
    TESSERA_RETURN_IF_ERROR(spec->ReadBool("singleton", &job.singleton));
    TESSERA_RETURN_IF_ERROR(ReadPositiveDuration(*spec, "walltime", &job.walltime));
    TESSERA_RETURN_IF_ERROR(ParseJobArray(*spec, job));

    // Before the tasks: a task that bursts needs the checkpoint signal.
    if (const std::optional<YamlValue> checkpoint = spec->Find("checkpoint")) {
      Result<YamlMap> map = YamlMap::Read(*checkpoint, {"interval", "signal", "gracePeriod"});
      if (!map.ok()) return map.status();
      if (!map->Has("interval") && !map->Has("signal")) return checkpoint->Error("name an interval, a signal, or both");
      TESSERA_RETURN_IF_ERROR(ReadPositiveDuration(*map, "interval", &job.checkpoint_interval));
      TESSERA_RETURN_IF_ERROR(ReadPositiveDuration(*map, "gracePeriod", &job.checkpoint_grace));
      if (const std::optional<YamlValue> signal = map->Find("signal")) {
        Result<std::string> name = signal->String();
        if (!name.ok()) return name.status();
        const std::optional<std::int32_t> number = model::ParseCheckpointSignal(*name);
        if (!number) return signal->Error("'" + *name + "' is not one of: " + model::kCheckpointSignalNames);
        job.checkpoint_signal = *number;
      }
    }
    if (const std::optional<YamlValue> hang = spec->Find("hangDetection")) {
      Result<YamlMap> map = YamlMap::Read(*hang, {"progressTimeout", "gpuIdleTimeout", "action"});
      if (!map.ok()) return map.status();
      if (!map->Has("progressTimeout") && !map->Has("gpuIdleTimeout")) return hang->Error("name a progressTimeout, a gpuIdleTimeout, or both");
      TESSERA_RETURN_IF_ERROR(ReadPositiveDuration(*map, "progressTimeout", &job.progress_timeout));
      TESSERA_RETURN_IF_ERROR(ReadPositiveDuration(*map, "gpuIdleTimeout", &job.gpu_idle_timeout));
      if (const std::optional<YamlValue> action = map->Find("action")) {
        Result<std::string> name = action->String();
        if (!name.ok()) return name.status();
        if (*name != "report" && *name != "restart") return action->Error("'" + *name + "' is not one of: report, restart");
        job.restart_when_hung = *name == "restart";
      }
    }
    if (const std::optional<YamlValue> interactive = spec->Find("interactive")) {
      Result<YamlMap> map = YamlMap::Read(*interactive, {"idleTimeout"});
      if (!map.ok()) return map.status();
      job.interactive_idle_timeout = kDefaultSessionIdleTimeout;
      TESSERA_RETURN_IF_ERROR(ReadPositiveDuration(*map, "idleTimeout", &job.interactive_idle_timeout));
    }
    const YamlValue tasks_value = *spec->Get("tasks");
    Result<std::vector<YamlValue>> tasks = tasks_value.Items();
    if (!tasks.ok()) return tasks.status();
    if (tasks->empty()) return tasks_value.Error("a job needs at least one task");
    std::map<std::string, YAML::Mark> task_names;
    for (const YamlValue& task : *tasks) {
      Result<model::TaskGroup> group = ParseTask(task, task_names, job.checkpoint_signal > 0);
      if (!group.ok()) return group.status();
      job.groups.push_back(std::move(*group));
    }

    if (const std::optional<YamlValue> network = spec->Find("network")) {
      Result<std::string> mode = ReadChoice(*network, {"host", "isolated"});
      if (!mode.ok()) return mode.status();
      job.isolated_network = *mode == "isolated";
      for (const model::TaskGroup& group : job.groups) {
        if (job.isolated_network && !group.container.enabled()) {
          return network->Error("an isolated network holds containers only: task " + group.name + " has no image");
        }
      }
    }
    if (const std::optional<YamlValue> topology = spec->Find("topology")) {
      Result<YamlMap> map = YamlMap::Read(*topology, {"level", "mode"}, {"level"});
      if (!map.ok()) return map.status();
      Result<std::string> level = ReadChoice(*map->Get("level"), {"nvlink-domain", "node", "leaf", "spine", "cluster"});
      if (!level.ok()) return level.status();
      job.topology.level = *model::ParseTopologyLevel(*level);  // every choice above is a level
      if (const std::optional<YamlValue> mode = map->Find("mode")) {
        Result<std::string> text = ReadChoice(*mode, {"required", "preferred"});
        if (!text.ok()) return text.status();
        job.topology.required = *text == "required";
      }
    }
    if (const std::optional<YamlValue> restart = spec->Find("restart")) {
      Result<YamlMap> map = YamlMap::Read(*restart, {"maxRestarts", "backoff", "maxBackoff"});
      if (!map.ok()) return map.status();
      TESSERA_RETURN_IF_ERROR(map->ReadInt("maxRestarts", &job.max_restarts, 0, kMaxInt32));
      TESSERA_RETURN_IF_ERROR(ReadPositiveDuration(*map, "backoff", &job.restart_backoff));
      TESSERA_RETURN_IF_ERROR(ReadPositiveDuration(*map, "maxBackoff", &job.max_restart_backoff));
    }
    if (const std::optional<YamlValue> depends = spec->Find("dependsOn")) {
      Result<std::vector<YamlValue>> items = depends->Items();
      if (!items.ok()) return items.status();
      for (const YamlValue& item : *items) {
        Result<YamlMap> map = YamlMap::Read(item, {"job", "jobId", "when"});
        if (!map.ok()) return map.status();
        model::Dependency dependency;
        if (map->Has("job") == map->Has("jobId")) return item.Error("name the job by job (its name) or by jobId, one of them");
        if (map->Has("jobId")) {
          std::int32_t id = 0;
          TESSERA_RETURN_IF_ERROR(map->ReadInt("jobId", &id, 0, kMaxInt32 - 1));
          dependency.job_id = model::JobId(id);
        } else {
          TESSERA_RETURN_IF_ERROR(map->ReadDnsLabel("job", &dependency.job_name));
          if (dependency.job_name == job.name) return map->Get("job")->Error("a job cannot depend on itself");
        }
        if (const std::optional<YamlValue> when = map->Find("when")) {
          Result<std::string> text = ReadChoice(*when, {"succeeded", "ended", "failed"});
          if (!text.ok()) return text.status();
          dependency.when = *text == "ended"    ? model::Dependency::When::kEnded
                            : *text == "failed" ? model::Dependency::When::kFailed
                                                : model::Dependency::When::kSucceeded;
        }
        job.depends_on.push_back(std::move(dependency));
      }
    }
    return Status::Ok();
  }

  Result<model::TaskGroup> ParseTask(const YamlValue& value, std::map<std::string, YAML::Mark>& names,
                                     bool has_checkpoint_signal) {
    Result<YamlMap> task = YamlMap::Read(value, {"name", "replicas", "minReplicas", "resources", "command", "env", "workingDir", "onePerNode",
                                                  "image", "imagePullPolicy", "mounts", "shmSize", "user"},
                                          {"name"});
    if (!task.ok()) return task.status();
    model::TaskGroup group;
    TESSERA_RETURN_IF_ERROR(task->ReadDnsLabel("name", &group.name));
    const YamlValue name_value = *task->Get("name");
    if (auto [it, inserted] = names.emplace(group.name, name_value.mark()); !inserted) {
      return name_value.Error("task name '" + group.name + "' is used twice in this job (first at " +
                              FormatWhere(source_, it->second) + ")");
    }
    TESSERA_RETURN_IF_ERROR(task->ReadInt("replicas", &group.replicas, 1, kMaxInt32));
    group.min_replicas = group.replicas;
    TESSERA_RETURN_IF_ERROR(task->ReadInt("minReplicas", &group.min_replicas, 1, kMaxInt32));
    if (group.min_replicas > group.replicas) {
      return task->Get("minReplicas")
          ->Error("must not exceed replicas (" + std::to_string(group.replicas) + "), got " +
                  std::to_string(group.min_replicas));
    }
    if (const std::optional<YamlValue> resources = task->Find("resources")) {
      Result<model::TaskRequest> request = ParseResources(*resources, has_checkpoint_signal);
      if (!request.ok()) return request.status();
      group.request = std::move(*request);
    }
    TESSERA_RETURN_IF_ERROR(task->ReadBool("onePerNode", &group.one_per_node));
    TESSERA_RETURN_IF_ERROR(task->ReadStringList("command", &group.command));
    TESSERA_RETURN_IF_ERROR(task->ReadString("workingDir", &group.working_dir));
    if (!group.working_dir.empty() && group.working_dir.front() != '/') {
      return task->Get("workingDir")->Error("must be an absolute path, got '" + group.working_dir + "'");
    }
    TESSERA_RETURN_IF_ERROR(ParseTaskContainer(*task, &group.container));
    if (group.container.enabled()) group.request.image = model::ImageKey(group.container.image);
    if (const std::optional<YamlValue> env = task->Find("env")) {
      Result<YamlMap> vars = YamlMap::Read(*env);
      if (!vars.ok()) return vars.status();
      for (const std::string& key : vars->Keys()) {
        if (key.empty() || key.find('=') != std::string::npos || std::isdigit(static_cast<unsigned char>(key[0]))) {
          return vars->Get(key)->Error("'" + key + "' is not a valid environment variable name");
        }
        TESSERA_RETURN_IF_ERROR(vars->ReadString(key, &group.env[key]));
      }
    }
    return group;
  }

  static Result<model::TaskRequest> ParseResources(const YamlValue& value, bool has_checkpoint_signal) {
    Result<YamlMap> res =
        YamlMap::Read(value, {"gpus", "gpuMemory", "cpus", "memory", "gpuModel", "gpuSharing", "gpuMemoryBurst", "mig"});
    if (!res.ok()) return res.status();
    model::TaskRequest r;
    TESSERA_RETURN_IF_ERROR(res->ReadMilli("gpus", &r.gpu_milli));
    TESSERA_RETURN_IF_ERROR(res->ReadBytes("gpuMemory", &r.gpu_memory));
    TESSERA_RETURN_IF_ERROR(res->ReadMilli("cpus", &r.cpu_milli));
    TESSERA_RETURN_IF_ERROR(res->ReadBytes("memory", &r.memory));
    TESSERA_RETURN_IF_ERROR(res->ReadString("gpuModel", &r.gpu_model));
    if (res->Has("mig")) {
      for (const char* other : {"gpus", "gpuMemory", "gpuSharing", "gpuMemoryBurst"}) {
        if (res->Has(other)) {
          return res->Get(other)->Error(std::string(other) + " and mig exclude each other: a MIG device is its profile's share of one GPU");
        }
      }
      TESSERA_RETURN_IF_ERROR(res->ReadString("mig", &r.mig_profile));
      Result<model::MigProfile> profile = model::ParseMigProfile(r.mig_profile);
      if (!profile.ok()) return res->Get("mig")->Error(profile.status().message());
      r.sharing = model::GpuSharing::kMig;
      r.gpu_milli = profile->milli();
      r.gpu_memory = profile->memory;
    }
    if (r.gpu_milli > 1000 && r.gpu_milli % 1000 != 0) {
      return res->Get("gpus")->Error(FormatMilli(r.gpu_milli) + " GPUs: above one GPU, ask for whole GPUs");
    }
    if (res->Has("gpuMemory")) {
      if (r.gpu_milli == 0) return res->Get("gpuMemory")->Error("gpuMemory is memory on a GPU, but gpus is 0");
      if (r.gpu_memory <= 0) return res->Get("gpuMemory")->Error("must be positive");
    }
    if (res->Has("gpuModel") && r.gpu_milli == 0) {
      return res->Get("gpuModel")->Error("gpuModel names the GPU to use, but gpus is 0");
    }
    if (res->Has("gpuSharing")) {
      std::string name;
      TESSERA_RETURN_IF_ERROR(res->ReadString("gpuSharing", &name));
      if (!r.fractional()) return res->Get("gpuSharing")->Error("gpuSharing applies to a fraction of a GPU");
      Result<model::GpuSharing> mode = model::ParseGpuSharing(name);
      if (!mode.ok()) return res->Get("gpuSharing")->Error(mode.status().message());
      r.sharing = *mode;
    }
    if (res->Has("gpuMemoryBurst")) {
      TESSERA_RETURN_IF_ERROR(res->ReadBytes("gpuMemoryBurst", &r.gpu_memory_burst));
      if (!r.fractional() || r.sharing != model::GpuSharing::kVgpu) {
        return res->Get("gpuMemoryBurst")->Error("a memory burst is for a fraction of a GPU shared as vgpu");
      }
      if (r.gpu_memory_burst <= 0) return res->Get("gpuMemoryBurst")->Error("must be positive");
      if (!has_checkpoint_signal) {
        return res->Get("gpuMemoryBurst")
            ->Error("a burst must be given back on request: declare spec.checkpoint.signal (docs/gpu-sharing.md)");
      }
    }
    return r;
  }

  std::string_view source_;
  const model::Cluster& cluster_;
  const model::QueueTree& queues_;
  bool check_feasible_;
  bool reload_;
};

// A dependency cycle among the jobs of one file would leave all of them
// pending forever. Returns the job names around a cycle, or an empty list.
std::vector<std::string> FindCycle(const std::vector<model::Job>& jobs) {
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < jobs.size(); ++i) index[jobs[i].name] = i;
  enum class Mark { kNew, kActive, kDone };
  std::vector<Mark> marks(jobs.size(), Mark::kNew);
  std::vector<std::string> stack;
  std::vector<std::string> cycle;
  const auto visit = [&](auto&& self, std::size_t i) -> bool {
    marks[i] = Mark::kActive;
    stack.push_back(jobs[i].name);
    for (const model::Dependency& d : jobs[i].depends_on) {
      const auto it = index.find(d.job_name);
      if (it == index.end()) continue;  // a job submitted earlier or elsewhere
      if (marks[it->second] == Mark::kActive) {
        const auto from = std::find(stack.begin(), stack.end(), d.job_name);
        cycle.assign(from, stack.end());
        cycle.push_back(d.job_name);
        return true;
      }
      if (marks[it->second] == Mark::kNew && self(self, it->second)) return true;
    }
    stack.pop_back();
    marks[i] = Mark::kDone;
    return false;
  };
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (marks[i] == Mark::kNew && visit(visit, i)) break;
  }
  return cycle;
}

Result<std::vector<model::Job>> Parse(const std::vector<YamlValue>& documents, std::string_view source,
                                      const model::Cluster& cluster, const model::QueueTree& queues,
                                      const JobParseOptions& options) {
  if (documents.empty()) return InvalidArgument(std::string(source) + ": no Job documents found");
  JobParser parser(source, cluster, queues, options);
  std::vector<model::Job> jobs;
  std::map<std::string, std::string> defined;  // job name -> where
  std::vector<YamlValue> where;               // each job's document
  for (const YamlValue& document : documents) {
    Result<model::Job> job = parser.Parse(document);
    if (!job.ok()) return job.status();
    const YamlValue name = ResolvePath(document, "metadata.name");
    if (auto [it, inserted] = defined.emplace(job->name, FormatWhere(source, name.mark())); !inserted) {
      return name.Error("job '" + job->name + "' is defined twice in this file (first at " + it->second + ")");
    }
    jobs.push_back(std::move(*job));
    where.push_back(document);
    if (options.documents != nullptr) options.documents->push_back(YAML::Dump(document.node()));
  }
  if (const std::vector<std::string> cycle = FindCycle(jobs); !cycle.empty()) {
    std::string chain;
    for (const std::string& name : cycle) chain += (chain.empty() ? "'" : " -> '") + name + "'";
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      if (jobs[i].name == cycle.front()) {
        return ResolvePath(where[i], "spec.dependsOn").Error("jobs depend on each other in a cycle: " + chain);
      }
    }
  }
  return jobs;
}

}  // namespace

Result<std::vector<model::Job>> ParseJobYaml(std::string_view text, std::string_view source,
                                             const model::Cluster& cluster, const model::QueueTree& queues,
                                             const JobParseOptions& options) {
  Result<std::vector<YamlValue>> documents = LoadJobDocuments(text, source, /*positions=*/true);
  if (!documents.ok()) return documents.status();
  return ParseJobDocuments(*documents, source, cluster, queues, options);
}

Result<std::vector<YamlValue>> LoadJobDocuments(std::string_view text, std::string_view source, bool positions) {
  if (!positions) {
    if (std::optional<YamlValue> json = ReadJsonObject(text, source)) return std::vector<YamlValue>{std::move(*json)};
  }
  return CatchYaml(source, [&] { return LoadYamlDocuments(text, source); });
}

Result<std::vector<model::Job>> ParseJobDocuments(const std::vector<YamlValue>& documents, std::string_view source,
                                                  const model::Cluster& cluster, const model::QueueTree& queues,
                                                  const JobParseOptions& options) {
  if (options.documents != nullptr) options.documents->clear();
  return CatchYaml(source, [&] { return Parse(documents, source, cluster, queues, options); });
}

}  // namespace tessera::spec
